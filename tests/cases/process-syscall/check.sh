# The calls and results as the helper made and saw them.
ppid=$(sed -n 's/^RETVAL_PPID=//p' "$CASE_OUT/traced")
len=$(grep '^RETVAL_' "$CASE_OUT/traced" | wc -c)
grep -qx 'status=0' "$CASE_OUT/out" || { echo "stapvm failed"; exit 1; }
grep -qx 'SC getppid calls 7' "$CASE_OUT/traced" || { echo "want 7 getppid calls"; exit 1; }
[ "$(grep -c '^SC getppid returned' "$CASE_OUT/traced")" -eq 1 ] &&
	grep -qx "SC getppid returned $ppid 7 times" "$CASE_OUT/traced" || { echo "want 7 returns of $ppid"; exit 1; }
grep -qx "SC writes 1 fd 1 len $len" "$CASE_OUT/traced" || { echo "want one write(1, ..., $len)"; exit 1; }
