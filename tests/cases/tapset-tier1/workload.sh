# tapset_tier1: kernel-valued tier-1 functions (t.stp) with stdout and
# stderr apart, then the tapset's run-time errors (errors.stp).
stapvm run -T 10 "$CASE_DIR/t.stp" >"$CASE_OUT/t.out" 2>"$CASE_OUT/t.err"
echo "status $?"
cat "$CASE_OUT/t.out"
echo "timer lines: $(grep -c '^timer' "$CASE_OUT/t.out")"
echo "not reached lines: $(grep -c 'not reached' "$CASE_OUT/t.out")"
echo "-- stderr"
cat "$CASE_OUT/t.err"
stapvm run -T 10 -D MAXERRORS=5 "$CASE_DIR/errors.stp" >"$CASE_OUT/t2.out" 2>"$CASE_OUT/t2.err"
echo "status2 $?"
cat "$CASE_OUT/t2.out"
echo "-- stderr2"
cat "$CASE_OUT/t2.err"
# egid() of a task run as uid 1234, gid 567 (egid.stp).
stapvm run -T 10 --ready-file "$CASE_OUT/rdy3" "$CASE_DIR/egid.stp" >"$CASE_OUT/t3.out" 2>&1 &
n=0; while [ ! -e "$CASE_OUT/rdy3" ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n+1)); done
runas 1234 567 sleep 1
wait
cat "$CASE_OUT/t3.out"
