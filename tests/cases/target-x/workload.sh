# stapvm run -x PID: target() is PID; the session does not follow it.
sleep 30 &
echo "SLEEP_PID=$!" >>"$VARS"
stapvm run -x $! -e 'probe begin { printf("target()=%d\n", target()); exit() }'
kill $!
