# Lines whose place among the others depends on thread scheduling: the
# client's callback service, the server's first request, the first
# synchronous client call; and the data that crossed the mount.
o=$CASE_OUT/out
grep -q '^svc.create NFSv4 callback prog=1073741824 nvers=[0-9]* bufsize=set$' "$o" || { echo "no svc.create"; exit 1; }
grep -q '^svc.process nfsd sv_prog=100003 peer=127.0.0.1 vers=4 prot=6$' "$o" || { echo "no svc.process"; exit 1; }
grep -q '^clnt.call_sync nfs prog=100003 vers=4 port=2049 prot=6 proc=named$' "$o" || { echo "no call_sync"; exit 1; }
grep -q '^hello-nfs$' "$CASE_OUT/workload" || { echo "nothing read over NFS"; exit 1; }
# nfs.fop.read, nfs.fop.aio_read and the client's nfs.proc.* procedures.
grep -q '^nfs.fop.read count=[0-9]* pos=0 devname=0:[0-9]*$' "$o" || { echo "no nfs.fop.read"; exit 1; }
grep -q '^nfs.fop.aio_read f parent=.* cache_valid=set units=bytes$' "$o" || { echo "no nfs.fop.aio_read"; exit 1; }
grep -q '^nfs.proc.lookup h len=1 ip=127.0.0.1 prot=6 v4$' "$o" || { echo "no nfs.proc.lookup"; exit 1; }
grep -q '^nfs.proc.lookup.return v4$' "$o" || { echo "no nfs.proc.lookup.return"; exit 1; }
grep -q '^nfs.proc.write_setup count=17 offset=0 ip=127.0.0.1 prot=6 v4 client=set$' "$o" || { echo "no nfs.proc.write_setup"; exit 1; }
grep -q '^nfs.proc.remove h len=1 ip=127.0.0.1 v4 fh=set$' "$o" || { echo "no nfs.proc.remove"; exit 1; }
