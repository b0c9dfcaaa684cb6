# stap's buildok scripts of the networking families (testsuite/buildok,
# copied unchanged), each compiled and LOADED here for 2 s while netpair
# exchanges TCP and UDP on lo: every alias they name must arm on this
# kernel (`?` points may be skipped) and the probes that print must fire
# (tcpmib-all-probes prints the counter arrays it writes and never reads).
ip link set lo up 2>/dev/null
for f in "$CASE_DIR"/*.stp; do
	n=$(basename "$f" .stp)
	rm -f "$CASE_OUT/rdy"
	stapvm run -w --ready-file "$CASE_OUT/rdy" -T 2 "$f" >"$CASE_OUT/$n.out" 2>"$CASE_OUT/$n.err" &
	p=$!
	i=0; while [ ! -e "$CASE_OUT/rdy" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
	netpair tcp 5851 500 >/dev/null
	netpair udp 5852 50 >/dev/null
	wait $p
	echo "$n rc=$? lines=$(wc -l <"$CASE_OUT/$n.out")"
	grep -v 'WARNING: optional probe point' "$CASE_OUT/$n.err" | head -3
done
