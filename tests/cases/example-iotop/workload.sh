# SystemTap's io/iotop.stp, unchanged (tier E): vfs.read.return and
# vfs.write.return (kernel_aliases.rs: kretprobes on vfs_read/vfs_write,
# bytes_read/bytes_written from $return). dd moves 400 KiB each way; the
# report comes at 5 s.
dd if=/dev/zero of=/tmp/iotop.dat bs=4096 count=100 2>/dev/null
sleep 6
