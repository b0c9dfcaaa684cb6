if grep -q '^end$' "$CASE_OUT/out"; then
	echo "end ran after the MAXERRORS abort"; exit 1
fi
n=$(grep -c 'division by 0' "$CASE_OUT/out")
[ "$n" = 3 ] || { echo "$n errors, want 3"; exit 1; }
