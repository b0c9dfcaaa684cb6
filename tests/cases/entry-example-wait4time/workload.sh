# SystemTap's process/wait4time.stp (@entry(gettimeofday_us()) in
# syscall.wait4.return): the shell waits for its children with wait4(2).
sleep 1
true
