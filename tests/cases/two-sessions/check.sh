# The second session printed the same 3 lines and exited cleanly.
. "$VARS"
want="retval $RETVAL_PID
retval $RETVAL_PID
retval $RETVAL_PID
second exit 0"
if [ "$(cat "$CASE_OUT/second.out")" != "$want" ]; then
	echo "second session output:"
	cat "$CASE_OUT/second.out"
	exit 1
fi
