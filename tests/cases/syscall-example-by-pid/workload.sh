# SystemTap's process/syscalls_by_pid.stp (syscall_any, @sum, foreach
# sorted by value): retval makes 50 getppid(2) calls.
retval 50 >>"$VARS"
