# An NFSv4.1 server on a tmpfs export and a loopback mount of it, without
# nfs-utils: the export caches are filled the way rpc.mountd would (one
# line per entry into /proc/net/rpc/*/channel), grace is ended at once.
ifconfig lo 127.0.0.1 up
mkdir -p /srv /mnt/n
mount -t tmpfs tmpfs /srv
echo hello-nfs > /srv/f
mount -t nfsd nfsd /proc/fs/nfsd
echo "-2" > /proc/fs/nfsd/versions 2>/dev/null
echo "-3 +4 +4.1" > /proc/fs/nfsd/versions
echo 10 > /proc/fs/nfsd/nfsv4leasetime
echo 10 > /proc/fs/nfsd/nfsv4gracetime
echo 2 > /proc/fs/nfsd/threads || echo "nfsd did not start"
echo Y > /proc/fs/nfsd/v4_end_grace
# flags 9218: NFSEXP_NOSUBTREECHECK | NFSEXP_FSID | NFSEXP_INSECURE_PORT.
printf 'nfsd 127.0.0.1 2147483647 anyclient\n' > /proc/net/rpc/auth.unix.ip/channel
printf 'anyclient /srv 2147483647 9218 65534 65534 0\n' > /proc/net/rpc/nfsd.export/channel
printf 'anyclient 1 \\x00000000 2147483647 /srv\n' > /proc/net/rpc/nfsd.fh/channel
timeout 60 mount -t nfs4 -o vers=4.1,addr=127.0.0.1,clientaddr=127.0.0.1 127.0.0.1:/ /mnt/n || echo "mount failed"
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
