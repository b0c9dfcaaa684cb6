retval 20000 >/dev/null &
retval 20000 >/dev/null &
wait
sleep 0.5
