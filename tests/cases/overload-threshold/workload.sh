# getppid in a loop until the session ends (at most 10 s), then stop it.
. /stapvm/case-lib.sh
retval -1 &
r=$!
wait_gone "$STAPVM_PID" 100
kill $r
wait $r
