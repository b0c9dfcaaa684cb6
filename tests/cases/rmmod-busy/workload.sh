# While a session fd is open the module must refuse to unload; once the
# holder is gone (SIGKILL) nothing is left.
stp-ioctl hold /stapvm/hostile/valid-timer.img 30 >hold.out 2>&1 &
pid=$!
n=0
while ! grep -q started hold.out 2>/dev/null && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
if rmmod stapvm 2>/dev/null; then
	echo "rmmod succeeded with a session open"
	insmod /stapvm/stapvm.ko
else
	echo "rmmod refused while a session is open"
fi
kill -9 $pid
wait $pid 2>/dev/null
grep -c stapvm /proc/modules
