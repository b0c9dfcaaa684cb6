retval 4 >>"$VARS"
