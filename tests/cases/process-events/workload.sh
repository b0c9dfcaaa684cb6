# Three children, each forked (named forkexec), exec'd (of /proc/self/exe,
# so named exe), with two threads; the target is
# `sh -c "exec forkexec 3"` (stapvm run -c), so it execs twice. Another
# program's processes start and end beside it, uncounted.
(for i in 1 2 3 4 5; do /bin/true; sleep 0.1; done) &
stapvm run -c 'forkexec 3' "$CASE_DIR/t.stp" >"$CASE_OUT/traced" 2>&1
echo "status=$?"
grep -v '^FORKEXEC_' "$CASE_OUT/traced" | sort
grep '^FORKEXEC_' "$CASE_OUT/traced"
wait
