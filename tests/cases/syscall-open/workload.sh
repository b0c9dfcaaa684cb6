# open2 calls the open(2) system call itself (glibc's open() would use
# openat) 3 times and records its pid as OPEN2_PID.
open2 3 /etc/motd >>"$VARS"
