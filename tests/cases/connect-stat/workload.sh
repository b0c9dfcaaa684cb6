# Connections to 127.0.0.1 (busybox nc; lo may be down: the connect
# is traced either way) and one to 127.0.0.2 the filter drops.
stapvm run --ready-file "$CASE_OUT/rdy" -T 3 "$CASE_DIR/t.stp" 127.0.0.1 >"$CASE_OUT/snoop" 2>&1 &
n=0; while [ ! -e "$CASE_OUT/rdy" ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n+1)); done
nc -w 1 127.0.0.1 8080 </dev/null 2>/dev/null
nc -w 1 127.0.0.2 9 </dev/null 2>/dev/null
nc -w 1 127.0.0.1 9 </dev/null 2>/dev/null
wait
cat "$CASE_OUT/snoop"
echo "127.0.0.2 lines: $(grep -c '127\.0\.0\.2' "$CASE_OUT/snoop")"
# connect_stat.stp itself still needs task_current() & co.
stapvm compile "$CASE_DIR/connect_stat.stp" 127.0.0.1 -o "$CASE_OUT/cs.stpb" 2>&1 | grep -c 'not supported yet: function task_current()'
