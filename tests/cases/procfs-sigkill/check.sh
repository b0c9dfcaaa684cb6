# The file was there, the second open waited, SIGKILL removed everything.
fail=0
grep -qx held "$CASE_OUT/before" || { echo "no file before the kill:"; cat "$CASE_OUT/before"; fail=1; }
[ "$(cat "$CASE_OUT/waiter.state" 2>/dev/null)" = waiting ] || {
	echo "second open did not wait, or stayed blocked:"
	cat "$CASE_OUT/waiter.state" "$CASE_OUT/waiter.out" 2>&1
	fail=1
}
if [ -n "$(ls /proc/stapvm)" ]; then
	echo "left in /proc/stapvm:"
	ls -laR /proc/stapvm
	fail=1
fi
exit $fail
