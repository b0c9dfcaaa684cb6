# SystemTap's process/forktracker.stp, unchanged (tier E): kprocess.create
# (the sched_process_fork tracepoint, new_pid/new_tid from the child's
# task_struct) and kprocess.exec (syscall.execve, filename). The shell
# forks and execs a helper.
retval 1 >/dev/null
echo "SHELL_PID=$$" >>"$VARS"
