. /stapvm/case-lib.sh
d=/proc/stapvm/$STAPVM_PID
ls "$d" >"$CASE_OUT/before" 2>&1
# One reader keeps the file open; a second open waits for it (stap's one
# open at a time).
sleep 30 <"$d/held" &
holder=$!
sleep 0.3
cat "$d/held" >"$CASE_OUT/waiter.out" 2>&1 &
waiter=$!
sleep 0.3
alive "$waiter" && echo waiting >"$CASE_OUT/waiter.state"
kill -KILL "$STAPVM_PID"
wait_gone "$STAPVM_PID" 50
# The waiter's open fails once the file goes away.
wait_gone "$waiter" 50 || echo "waiter still blocked" >>"$CASE_OUT/waiter.state"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
true
