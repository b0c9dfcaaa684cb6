# Every round exact and clean, the 100 cycles clean, and no memory drift.
fail=0
out=$CASE_OUT/out
set -- $(sed -n 's/^memory at start: \([0-9]*\) \([0-9]*\)$/\1 \2/p' "$out")
v0=$1 s0=$2
[ -n "$v0" ] || { echo "no start figures"; exit 1; }
rounds=$(grep -c '^round [0-9]*: ' "$out")
badr=$(grep '^round [0-9]*: ' "$out" | grep -vc ': ok;')
[ "$rounds" -gt 0 ] && [ "$badr" = 0 ] || { echo "rounds $rounds, not ok $badr"; fail=1; }
grep -qx 'cycles: 100, failed: 0' "$out" || { echo "cycles: $(grep '^cycles' "$out")"; fail=1; }
# Memory: vmalloc after every session within 512 kB of the start; the
# unreclaimable slab after every session and at the end within 2 MiB of
# what the first session left (its one-time allocations: kprobe
# instruction slots, tracepoint and ftrace structures), i.e. no drift.
set -- $(sed -n 's/^round 1: .*memory \([0-9]*\) \([0-9]*\)$/\1 \2/p' "$out")
s1=${2:-$s0}
grep -E '^round [0-9]+: |^memory at end' "$out" | sed 's/.*: //; s/.*memory //' | while read -r v s; do
	if [ $((v - v0)) -gt 512 ] || [ $((s - s1)) -gt 2048 ]; then
		echo "memory drift: vmalloc $v0 -> $v kB, unreclaimable slab $s0 (after session 1: $s1) -> $s kB"
		exit 1
	fi
done || fail=1
echo "rounds: $rounds; memory (vmalloc, unreclaimable slab kB) at start: $v0 $s0, after session 1: $s1, at end: $(tail -n 1 "$out" | sed 's/.*: //')"
exit $fail
