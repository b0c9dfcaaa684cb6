# The soak (tests/guest/soak): sessions of soak.stp one after another for
# $CASE_DIR/soak-seconds seconds under a busy workload on every CPU, each
# checked exactly; the module's memory (vmalloc, unreclaimable slab,
# measured with the load stopped and caches dropped) after every session
# against the start; then 100 cycles of insmod, a session, rmmod under
# load. Prints one line per round and a summary; check.sh judges them.
. /stapvm/case-lib.sh
secs=$(cat "$CASE_DIR/soak-seconds")
calls=${SOAK_CALLS:-20000}
cp /stapvm/bin/retval /tmp/soakcall
stapvm compile -D STP_NO_OVERLOAD "$CASE_DIR/soak.stp" -o soak.stpb || exit 1
stapvm compile "$CASE_DIR/small.stp" -o small.stpb || exit 1

# mem: "vmalloc_kb sunreclaim_kb" with nothing running and caches dropped.
mem() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	sleep 1
	awk '/^VmallocUsed:/ { v = $2 } /^SUnreclaim:/ { s = $2 } END { print v, s }' /proc/meminfo
}

# busy_start / busy_stop: the mixed workload on every CPU.
busy_start() {
	sleep 100000 &
	busy_anchor=$!
	busy_pids=
	i=0
	while [ "$i" -lt "$(nproc)" ]; do
		workload_mix "$busy_anchor" 1000000 >/dev/null 2>&1 &
		busy_pids="$busy_pids $!"
		i=$((i + 1))
	done
}
busy_stop() {
	kill "$busy_anchor" 2>/dev/null
	wait $busy_pids 2>/dev/null
	wait "$busy_anchor" 2>/dev/null
}

# soakcall_on_cpus N CALLS: retval_on_cpus with the helper named soakcall
# (waiting for those helpers only: the busy workload runs on).
soakcall_on_cpus() {
	_i=0
	_pids=
	while [ "$_i" -lt "$1" ]; do
		taskset -c $((_i % $(nproc))) /tmp/soakcall "$2" >/dev/null &
		_pids="$_pids $!"
		_i=$((_i + 1))
	done
	wait $_pids
}

# say LINE: on standard output and, as progress, on the console.
say() {
	echo "$*"
	echo "soak: $*" >/dev/console
}

base=$(mem)
say "memory at start: $base"
start=$(date +%s)
round=0
while [ $(($(date +%s) - start)) -lt "$secs" ]; do
	round=$((round + 1))
	busy_start
	rm -f ready
	stapvm load -v --ready-file ready -o flood.out soak.stpb >/dev/null 2>session.err &
	sp=$!
	n=0
	while [ ! -e ready ] && alive $sp && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
	# Twice 4 x CALLS calls, a pause between: the session runs a while.
	soakcall_on_cpus 4 "$calls"
	sleep 5
	soakcall_on_cpus 4 "$calls"
	kill -INT $sp
	wait_gone $sp 600 || { echo "round $round: stapvm did not stop"; kill -KILL $sp; }
	wait $sp
	st=$?
	busy_stop
	want=$((8 * calls))
	summary=$(grep '^calls ' flood.out)
	alive_line=$(grep '^alive ' flood.out)
	flood=$(sed -n 's/^flood \([0-9]*\)$/\1/p' flood.out)
	lines=$(grep -c '^f [0-9]*$' flood.out)
	dropped=$(sed -n 's/.*Number of dropped records: \([0-9]*\).*/\1/p' session.err)
	dropped=${dropped:-0}
	armed=$(grep -c . /sys/kernel/debug/kprobes/list)
	m=$(mem)
	verdict=ok
	[ "$st" = 0 ] || verdict="status $st"
	[ "$summary" = "calls $want returns $want map $want stat $want/$want" ] || verdict="counts: $summary"
	[ "$alive_line" = "alive switches 1 ticks 1 profile 1" ] || verdict="probes: $alive_line"
	[ -n "$flood" ] && [ "$flood" -ge "$want" ] && [ $((lines + dropped)) = "$flood" ] ||
		verdict="flood $flood, $lines lines + $dropped dropped"
	[ "$armed" = 0 ] || verdict="$armed kprobes left"
	say "round $round: $verdict; flood $flood ($lines delivered, $dropped dropped); memory $m"
	[ "$verdict" = ok ] || cat session.err
	rm -f flood.out*
done
say "rounds: $round in $(($(date +%s) - start)) s"

# 100 cycles of insmod, a session, rmmod, under load.
busy_start
rmmod stapvm || echo "rmmod before the cycles failed"
cycles=0
bad=0
while [ "$cycles" -lt 100 ]; do
	cycles=$((cycles + 1))
	insmod /stapvm/stapvm.ko || { echo "cycle $cycles: insmod failed"; bad=$((bad + 1)); continue; }
	rm -f ready
	stapvm load --ready-file ready small.stpb >cycle.out 2>cycle.err &
	sp=$!
	n=0
	while [ ! -e ready ] && alive $sp && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
	/tmp/soakcall 3 >/dev/null
	wait_gone $sp 600 || kill -KILL $sp
	wait $sp
	grep -qx 'cycle 3 3' cycle.out || { echo "cycle $cycles: $(cat cycle.out cycle.err)"; bad=$((bad + 1)); }
	rmmod stapvm || { echo "cycle $cycles: rmmod failed"; bad=$((bad + 1)); }
done
busy_stop
say "cycles: $cycles, failed: $bad"
say "memory at end (module unloaded): $(mem)"
insmod /stapvm/stapvm.ko
