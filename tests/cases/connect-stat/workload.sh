# network/connect_stat.stp, unchanged, with @1 = 127.0.0.1: the process
# tree (task_current, task_parent, task_pid, task_execname, task_uid,
# task_gid through BTF @cast offsets) of each connect to 127.0.0.1.
# busybox nc (lo may be down: the connect is traced either way): one as
# root, one as uid 1234 / gid 567, and one to 127.0.0.2 the filter drops.
stapvm run --ready-file "$CASE_OUT/rdy" -T 3 "$CASE_DIR/connect_stat.stp" 127.0.0.1 >"$CASE_OUT/tree" 2>&1 &
n=0; while [ ! -e "$CASE_OUT/rdy" ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n+1)); done
nc -w 1 127.0.0.1 8080 </dev/null 2>/dev/null
nc -w 1 127.0.0.2 9 </dev/null 2>/dev/null
runas 1234 567 nc -w 1 127.0.0.1 9 </dev/null 2>/dev/null
echo "SHELL_PID=$$" >>"$VARS"
wait
cat "$CASE_OUT/tree"
echo "127.0.0.2 lines: $(grep -c '127\.0\.0\.2' "$CASE_OUT/tree")"
# The socket address variables themselves, port included (t.stp).
stapvm run --ready-file "$CASE_OUT/rdy2" -T 2 "$CASE_DIR/t.stp" 127.0.0.1 >"$CASE_OUT/snoop" 2>&1 &
n=0; while [ ! -e "$CASE_OUT/rdy2" ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n+1)); done
nc -w 1 127.0.0.1 8080 </dev/null 2>/dev/null
wait
cat "$CASE_OUT/snoop"
