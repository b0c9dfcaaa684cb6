# stapvm run -c: the shell (target) runs two subshells that sleep (not
# last: a last command may be exec'd in the shell itself); the
# set is stapvm's pid (stap's stp_pid()) begat the shell, the shell begat
# each subshell while it lives.
stapvm run -c "sh -c 'echo \$\$ >$CASE_OUT/sh.pid; (sleep 1); (sleep 1); true'" "$CASE_DIR/t.stp" >"$CASE_OUT/ts" 2>&1 &
echo "LOADER_PID=$!" >>"$VARS"
wait
echo "status=$?"
echo "SH_PID=$(cat "$CASE_OUT/sh.pid")" >>"$VARS"
cat "$CASE_OUT/ts"
echo "last: $(tail -n 1 "$CASE_OUT/ts")"
