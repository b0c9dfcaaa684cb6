if grep -q '^end$' "$CASE_OUT/out"; then
	echo "end ran after the error abort"; exit 1
fi
if grep -q '^never$' "$CASE_OUT/out"; then
	echo "never probe ran"; exit 1
fi
