if grep -q '^end$' "$CASE_OUT/out"; then
	echo "end ran after the error abort"; exit 1
fi
