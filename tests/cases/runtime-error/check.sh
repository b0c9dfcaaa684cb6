# The end probe must not run after an error abort (stap skips it), and
# there was exactly one error (no handler ran after it).
if grep -q '^end$' "$CASE_OUT/out"; then
	echo "end ran after the MAXERRORS abort"; exit 1
fi
n=$(grep -c 'division by 0' "$CASE_OUT/out")
[ "$n" = 1 ] || { echo "$n errors, want 1"; exit 1; }
