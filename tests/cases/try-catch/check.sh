# Nothing else: no error line, no error probe, no summary.
if grep -q 'ERROR\|error probe ran\|Number of errors' "$CASE_OUT/out"; then
	echo "a caught error was reported"; exit 1
fi
[ "$(wc -l < "$CASE_OUT/out")" -eq 4 ] || { echo "unexpected lines"; exit 1; }
