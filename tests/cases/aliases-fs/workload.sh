# A ramfs under the case's directory (on /tmp's tmpfs, on the tmpfs
# rootfs): 4 pages written, read back, then read again after a 2-page
# skip (lseek); brd (16 MiB ram disk) with 8 direct 4 KiB writes and
# reads; a loop device on a tmpfs file with 4 direct writes; the serial
# console resized by stty and written by echo.
mkdir d && mount -t ramfs ramfs d || exit 1
echo "FILE=$CASE_OUT/d/f" >>"$VARS"
dd if=/dev/zero of=d/f bs=4096 count=4 2>/dev/null
dd if=d/f of=/dev/null bs=4096 2>/dev/null
dd if=d/f of=/dev/null bs=4096 skip=2 2>/dev/null
[ -b /dev/ram0 ] || insmod /stapvm/modules/brd.ko rd_nr=1 rd_size=16384 || exit 1
dd if=/dev/zero of=/dev/ram0 bs=4096 count=8 oflag=direct 2>/dev/null
dd if=/dev/ram0 of=/dev/null bs=4096 count=8 iflag=direct 2>/dev/null
[ -b /dev/loop0 ] || insmod /stapvm/modules/loop.ko || exit 1
dd if=/dev/zero of=loop.img bs=4096 count=64 2>/dev/null
losetup /dev/loop0 loop.img || exit 1
dd if=/dev/zero of=/dev/loop0 bs=4096 count=4 oflag=direct 2>/dev/null
sync
stty -F /dev/ttyS0 rows 30 cols 100
echo fs-tty-probe >/dev/ttyS0
sleep 1
losetup -d /dev/loop0
umount d
