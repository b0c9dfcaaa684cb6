# ucalls 400 runs beside the traced `ucalls 5` (started first, so its
# calls overlap the session); only the target's 5 calls (0..4, sum 10)
# count.
ucalls 400000 >/dev/null &
stapvm run -c 'ucalls 5' "$CASE_DIR/t.stp" >"$CASE_OUT/traced"
echo "status=$?"
grep -v '^UCALLS_' "$CASE_OUT/traced"
wait
# Without a target: the load error names the point.
stapvm run -e 'probe process.function("ucall_leaf") { }' 2>&1
echo "status=$?"
