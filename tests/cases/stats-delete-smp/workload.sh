# Two helpers call getppid(2) 500 times each, concurrently (on different
# CPUs when the guest has several).
retval 500 >/dev/null &
retval 500 >/dev/null &
wait
