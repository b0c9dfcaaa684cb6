# debugfs files report size 0, so test the contents; a missing list fails too.
if ! [ -r /sys/kernel/debug/kprobes/list ] || grep -q . /sys/kernel/debug/kprobes/list; then
	echo "kprobes left armed:"; cat /sys/kernel/debug/kprobes/list; exit 1
fi
