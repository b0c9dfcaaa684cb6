# SIGKILL the loader while its kprobe is armed: closing the session fd
# must disarm everything (no end handlers).
cat /sys/kernel/debug/kprobes/list >"$CASE_OUT/list-before"
kill -KILL "$STAPVM_PID"
