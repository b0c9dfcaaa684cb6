retval -1 &
r=$!
sleep 3
kill $r
wait $r
