# The breaker's sum is above the threshold; no end probe; the guest still
# runs programs and nothing is left armed.
sum=$(sed -n 's/^ERROR: probe overhead (\([0-9]*\) cycles).*/\1/p' "$CASE_OUT/out")
[ -n "$sum" ] && [ "$sum" -gt 500000000 ] || { echo "overhead sum '$sum'"; exit 1; }
if grep -q '^end$' "$CASE_OUT/out"; then
	echo "end ran after the overload abort"; exit 1
fi
retval 3 >/dev/null || { echo "guest not responsive"; exit 1; }
if grep -q . /sys/kernel/debug/kprobes/list; then
	echo "kprobes left armed:"; cat /sys/kernel/debug/kprobes/list; exit 1
fi
