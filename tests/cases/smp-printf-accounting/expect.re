^retval [0-9]+$
