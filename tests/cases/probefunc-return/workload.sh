# retval calls getppid(2) twice.
retval 2 >/dev/null
