stapvm run -w -c "/bin/true '' 'x y'" "$CASE_DIR/t.stp"
# begin runs in the loader's context: its own command line.
stapvm run -e 'probe begin { printf("[%s]\n", cmdline_str()); exit() }' | grep -c '^\[stapvm run -e probe begin'
# SystemTap's lwtools/execsnoop-nd.stp.
stapvm run --ready-file "$CASE_OUT/rdy" -T 4 "$CASE_DIR/execsnoop-nd.stp" >"$CASE_OUT/snoop" &
n=0; while [ ! -e "$CASE_OUT/rdy" ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n+1)); done
/bin/true with args
wait
grep -c ' true /bin/true with args$' "$CASE_OUT/snoop"
