# Three calls of udw_visit, each line the probes must print in the vars.
udwarf >>"$VARS"
