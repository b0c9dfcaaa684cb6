# The hits are the faults the kernel counted for faulter, within 10 %,
# and at least the 4000 pages it touched.
k=$(sed -n 's/^FAULTS=//p' "$CASE_OUT/out")
h=$(sed -n 's/^perf page faults \([0-9]*\),.*/\1/p' "$CASE_OUT/out")
echo "kernel count $k, perf hits $h"
[ -n "$k" ] && [ -n "$h" ] || exit 1
[ "$k" -ge 4000 ] || exit 1
d=$((h - k))
[ "$d" -lt 0 ] && d=$((-d))
[ $((d * 10)) -le "$k" ]
