# Every line is a whole record and lines + dropped records = 40000.
n=$(grep -c . "$CASE_OUT/out")
bad=$(grep -vcE '^retval [0-9]+$' "$CASE_OUT/out")
dropped=$(sed -n 's/.*Number of dropped records: \([0-9]*\).*/\1/p' "$CASE_OUT/err")
dropped=${dropped:-0}
echo "lines: $n, malformed: $bad, dropped: $dropped"
[ "$bad" = 0 ] && [ "$n" -gt 0 ] && [ $((n + dropped)) = 40000 ]
