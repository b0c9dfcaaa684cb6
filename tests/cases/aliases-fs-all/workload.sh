# dd on a ramfs file (its write_iter is generic_file_write_iter on every
# kernel; tmpfs has its own since 6.6) and on a brd ram disk; stty on the
# serial console.
mkdir -p /mnt/ramfs
mount -t ramfs ramfs /mnt/ramfs
dd if=/dev/zero of=/mnt/ramfs/f bs=4096 count=4 2>/dev/null
dd if=/mnt/ramfs/f of=/dev/null bs=4096 2>/dev/null
[ -b /dev/ram0 ] || insmod /stapvm/modules/brd.ko rd_nr=1 rd_size=16384
dd if=/dev/zero of=/dev/ram0 bs=4096 count=8 oflag=direct 2>/dev/null
stty -F /dev/ttyS0 rows 30 cols 100
sleep 1
umount /mnt/ramfs
