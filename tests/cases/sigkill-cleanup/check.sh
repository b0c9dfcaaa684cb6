# The probe was armed before the kill, and nothing is armed after it.
# (For a SYSCALL_DEFINE0 the list names the address __do_sys_getppid.)
if ! grep -q getppid "$CASE_OUT/list-before"; then
	echo "the kprobe was not armed before SIGKILL; kprobes list was:"
	cat "$CASE_OUT/list-before"
	ls -la "$CASE_OUT"
	exit 1
fi
# debugfs files report size 0, so test the contents; a missing list fails too.
if ! [ -r /sys/kernel/debug/kprobes/list ] || grep -q . /sys/kernel/debug/kprobes/list; then
	echo "kprobes left armed after SIGKILL:"
	cat /sys/kernel/debug/kprobes/list
	exit 1
fi
