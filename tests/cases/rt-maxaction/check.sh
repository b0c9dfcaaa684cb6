# Two errors (MAXERRORS=1), no handler after the second, no end probe;
# the guest still runs programs and nothing is left armed.
n=$(grep -c 'MAXACTION exceeded' "$CASE_OUT/out")
[ "$n" = 2 ] || { echo "$n errors, want 2"; exit 1; }
if grep -q '^end$' "$CASE_OUT/out"; then
	echo "end ran after the MAXERRORS abort"; exit 1
fi
retval 3 >/dev/null || { echo "guest not responsive"; exit 1; }
if grep -q . /sys/kernel/debug/kprobes/list; then
	echo "kprobes left armed:"; cat /sys/kernel/debug/kprobes/list; exit 1
fi
