# What the shell read from the files, and no session directory left.
if ! diff "$CASE_DIR/seen.expect" "$CASE_OUT/seen"; then
	echo "procfs files did not show what was expected"
	exit 1
fi
if [ -n "$(ls /proc/stapvm)" ]; then
	echo "session directory left in /proc/stapvm:"
	ls -la /proc/stapvm
	exit 1
fi
