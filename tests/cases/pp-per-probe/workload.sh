# The shell reads and writes (vfs_read, vfs_write); the static helper
# retval is exec'd and exits (sched_process_exec, sched_process_exit).
echo hello >/tmp/pp-file
read -r x </tmp/pp-file
retval 1 >/dev/null
