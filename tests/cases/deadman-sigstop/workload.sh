# Stop the loader, make records wait, then wait (at most 15 s) for the
# module to disarm the kprobe by itself; continue the loader.
armed=$(grep -c getppid /sys/kernel/debug/kprobes/list)
kill -STOP "$STAPVM_PID"
t0=$(date +%s)
retval 2 >/dev/null
t=$t0
while grep -q . /sys/kernel/debug/kprobes/list && [ $((t - t0)) -lt 15 ]; do
	sleep 0.2
	t=$(date +%s)
done
if grep -q . /sys/kernel/debug/kprobes/list; then
	echo "armed $armed, still armed after 15 s" >"$CASE_OUT/deadman"
else
	echo "armed $armed, disarmed after $((t - t0)) s" >"$CASE_OUT/deadman"
fi
kill -CONT "$STAPVM_PID"
