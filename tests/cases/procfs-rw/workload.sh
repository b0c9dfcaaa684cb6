# Reads and writes the session's procfs files; what the shell sees goes
# to $CASE_OUT/seen, which check.sh compares with seen.expect.
d=/proc/stapvm/$STAPVM_PID
{
	ls -l "$d" | awk 'NF > 2 { print $1, $NF }'
	cat "$d/state"
	printf abc >"$d/state"
	cat "$d/state"
	printf 'x\ny' >"$d/state"
	cat "$d/state"
	cat "$d/small"
	echo
	printf hello >"$d/wo"
	cat "$d/command"
	cat "$d/wo" 2>/dev/null && echo "read of a write-only file succeeded"
	echo done
} >"$CASE_OUT/seen" 2>&1
