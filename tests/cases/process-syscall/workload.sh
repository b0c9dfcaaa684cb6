# `retval 7`: seven getppid calls, then its output in one write(1).
stapvm run -c 'retval 7' "$CASE_DIR/t.stp" >"$CASE_OUT/traced" 2>&1
echo "status=$?"
cat "$CASE_OUT/traced"
