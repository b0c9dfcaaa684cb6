retval 2 >/dev/null
