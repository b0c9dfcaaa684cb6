# A `retval` helper SIGTERMed and reaped; then short-lived processes keep
# the CPUs passing through quiescent states until the session has seen
# the helper's task freed (self-exit) or gives up after 15 s.
retval -1 &
R=$!
echo "R_PID=$R" >>"$VARS"
sleep 0.3
kill -TERM $R
wait $R
i=0
while [ $i -lt 40 ] && kill -0 "$STAPVM_PID" 2>/dev/null; do
	sh -c :
	sleep 0.2
	i=$((i + 1))
done
