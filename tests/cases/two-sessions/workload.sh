stapvm load --ready-file "$CASE_OUT/ready2" "$CASE_DIR/case.stpb" >"$CASE_OUT/second.out" 2>&1 &
second=$!
n=0
while [ ! -e "$CASE_OUT/ready2" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
retval 3 >>"$VARS"
kill -INT $second
wait $second
echo "second exit $?" >>"$CASE_OUT/second.out"
