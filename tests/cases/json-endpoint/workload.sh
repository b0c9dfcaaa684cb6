# Reads the JSON endpoint's files; what the shell sees goes to
# $CASE_OUT/seen, which check.sh compares with seen.expect.
d=/proc/stapvm/$STAPVM_PID
{
	ls "$d"
	cat "$d/data.json"
	cat "$d/data.json"
	cat "$d/metadata.json"
	wc -c <"$d/metadata.json"
} >"$CASE_OUT/seen" 2>&1
