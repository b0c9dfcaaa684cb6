# The still-running sleeper of workload.sh ends here, so that no process of
# the case outlives it.
. "$VARS"
kill "$SLEEP_PID"
