# The files showed what the metrics and the probe made (on a mismatch,
# what the shell saw is printed whole).
if ! diff "$CASE_DIR/seen.expect" "$CASE_OUT/seen"; then
	echo "the JSON files did not show what was expected; they showed:"
	cat "$CASE_OUT/seen"
	exit 1
fi
