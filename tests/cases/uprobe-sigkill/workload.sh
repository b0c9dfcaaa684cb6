# A run while armed gets the uprobes area (a hit); after SIGKILL a new run
# must not: its text has no breakpoint left, so nothing creates the area.
ucalls 3 xol >"$CASE_OUT/before"
kill -KILL "$STAPVM_PID"
sleep 0.5
ucalls 3 xol >"$CASE_OUT/after"
