# The NFSv4.1 server and its loopback mount (case-lib.sh's nfs_mount),
# then file operations on it with known sizes.
. /stapvm/case-lib.sh
nfs_mount
# dd, not cat: busybox cat uses sendfile(2), which since 6.5 splices
# without ->read_iter (nfs.fop.read_iter would not fire).
dd if=/mnt/n/f 2>/dev/null
echo written-over-nfs > /mnt/n/g
sync
mv /mnt/n/g /mnt/n/h
rm /mnt/n/h
umount /mnt/n
echo 0 > /proc/fs/nfsd/threads
cat /srv/f
