# Direct I/O on a loop device (the reader sleeps in io_schedule, in_iowait
# set) and a loopback TCP connection with data.
. /stapvm/case-lib.sh
loop_dev
ip link set lo up 2>/dev/null
# Several rounds of many small reads: a read the loop worker completes
# before the reader sleeps is no iowait switch (seen once on 6.12 with 32).
dd if=/dev/zero of=/dev/loop0 bs=4096 count=256 oflag=direct 2>/dev/null
for _ in 1 2 3 4; do
	dd if=/dev/loop0 of=/dev/null bs=4096 count=256 iflag=direct 2>/dev/null
done
netpair tcp 5861 64 >/dev/null 2>&1
