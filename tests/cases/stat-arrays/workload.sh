# retval calls getppid(2) 100 times; open2 calls open(2) 3 times.
retval 100 >/dev/null
open2 3 /etc/motd >/dev/null
