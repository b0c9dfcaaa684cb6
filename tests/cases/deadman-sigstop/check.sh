# The kprobe was armed, then disarmed by the module 10 to 12 s (whole
# seconds: 9 to 13) after the loader stopped reading; no end probe ran.
cat "$CASE_OUT/deadman"
s=$(sed -n 's/^armed 1, disarmed after \([0-9]*\) s$/\1/p' "$CASE_OUT/deadman")
[ -n "$s" ] && [ "$s" -ge 9 ] && [ "$s" -le 13 ] || exit 1
if grep -q '^end$' "$CASE_OUT/out"; then
	echo "end ran after the deadman"; exit 1
fi
