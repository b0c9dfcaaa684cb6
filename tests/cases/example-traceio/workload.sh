# SystemTap's io/traceio.stp, unchanged (tier E): vfs.read.return and
# vfs.write.return with returnval(); cumulative per-process totals every
# second. dd moves 400 KiB each way.
dd if=/dev/zero of=/tmp/traceio.dat bs=4096 count=100 2>/dev/null
sleep 2
