# (compile-args: MAXSKIPPED raised: the tick and context-switch aliases
# fire inside other handlers, whose hits are skipped.)
# A `retval` helper forked and exec'd by the shell, spinning on getppid
# until the shell's kill(2) SIGTERMs it (a fatal default action: a group
# exit with code 15, the task handed SIGKILL), then reaped; a shell that
# exits with status 3 (exit code 3 << 8 = 768).
retval -1 &
R=$!
echo "R_PID=$R" >>"$VARS"
sleep 0.5
kill -TERM $R
wait $R
sh -c 'exit 3' &
echo "E_PID=$!" >>"$VARS"
wait
