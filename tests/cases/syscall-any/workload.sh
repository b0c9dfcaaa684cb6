# retval makes 3 getppid(2) calls and prints RETVAL_PPID.
retval 3 >>"$VARS"
