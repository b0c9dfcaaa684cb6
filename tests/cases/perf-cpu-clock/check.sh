# Every online CPU sampled: as many "cpu N hits" lines as CPUs online.
online=$(grep -c '^processor' /proc/cpuinfo)
seen=$(grep -c '^cpu [0-9]* hits [1-9]' "$CASE_OUT/out")
echo "online $online, sampled $seen"
[ "$online" -ge 1 ] && [ "$seen" -eq "$online" ]
