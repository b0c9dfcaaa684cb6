retval 5 >/dev/null
