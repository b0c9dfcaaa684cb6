# getppid in a loop until the session ends (at most 10 s), then stop it.
retval -1 &
r=$!
n=0
while [ -r "/proc/$STAPVM_PID/stat" ] && ! grep -q ') Z ' "/proc/$STAPVM_PID/stat" &&
	[ $n -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
kill $r
wait $r
