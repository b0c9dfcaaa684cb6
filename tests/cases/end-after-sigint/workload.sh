retval 3 >/dev/null
