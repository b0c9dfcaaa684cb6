# Direct I/O on a loop device (the reader sleeps in io_schedule, in_iowait
# set) and a loopback TCP connection with data.
. /stapvm/case-lib.sh
loop_dev
ip link set lo up 2>/dev/null
dd if=/dev/zero of=/dev/loop0 bs=4096 count=32 oflag=direct 2>/dev/null
dd if=/dev/loop0 of=/dev/null bs=4096 count=32 iflag=direct 2>/dev/null
netpair tcp 5861 64 >/dev/null 2>&1
