# retval calls getppid(2) 3 times and records what it returned.
retval 3 >>"$VARS"
