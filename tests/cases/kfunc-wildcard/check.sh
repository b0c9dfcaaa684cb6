# Every kprobe of the session is gone after it.
if grep -q vfs_read /sys/kernel/debug/kprobes/list 2>/dev/null; then
	echo "kprobe left:"; cat /sys/kernel/debug/kprobes/list; exit 1
fi
