# SystemTap's process/sig_by_proc.stp, unchanged (tier E): signal.send
# (kernel_aliases.rs: the signal_generate tracepoint; pid_name through
# task_execname, sig_name through _signal_name). The shell sends SIGTERM
# to a sleep and gets SIGCHLD when it dies.
sleep 100 &
sleep 0.5 # until the child has exec'd sleep
kill -TERM $!
wait
