retval 1 >/dev/null
retval 1 >/dev/null
