# START a kprobe session through the raw ioctls, then SIGKILL the holder:
# release() must disarm everything.
stp-ioctl hold /stapvm/hostile/valid-kprobe.img 30 >hold.out 2>&1 &
pid=$!
n=0
while ! grep -q started hold.out 2>/dev/null && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
grep -c getppid /sys/kernel/debug/kprobes/list
kill -9 $pid
wait $pid
echo "holder status $?"
