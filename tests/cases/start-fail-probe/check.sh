if [ -s /sys/kernel/debug/kprobes/list ]; then
	echo "kprobes left armed:"; cat /sys/kernel/debug/kprobes/list; exit 1
fi
