# Sessions come and go (LOAD, START, STOP, close) five times while a
# helper hammers the probed function: arming and disarming under load.
retval -1 &
busy=$!
for i in 1 2 3 4 5; do
	stp-ioctl run /stapvm/hostile/valid-kprobe.img 1 >/dev/null 2>"$CASE_OUT/status.$i"
	if grep -q 'state=2 exit=0 hits=[1-9]' "$CASE_OUT/status.$i"; then
		echo "round $i: hits"
	else
		echo "round $i: $(cat "$CASE_OUT/status.$i")"
	fi
done
kill $busy
wait $busy 2>/dev/null
exit 0
