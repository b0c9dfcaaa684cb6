^svc.register nfsd nfsd prog=100003$
^clnt.create_client 127\.0\.0\.1 nfs prog=100003 vers=4 port=2049$
^sched.execute prog=100003 vers=4$
^dispatch prog=100003 version=4 proto=6 proc=[01] xid=nonzero client=127\.0\.0\.1:[0-9]+$
^dispatch.return 1$
^nfs.read_iter count=[0-9]+ pos=0$
^nfs.read_iter.return 10 size=10$
^nfs.write_iter count=17 pos=0 devname=0:[0-9]+ ino=set$
^nfs.write_begin pos=0 count=17$
^proc4.write count=17 offset=0 stable=[0-2]$
^proc4.write.return count=17 nfsderr 0\(NFS_OK\)$
^proc4.lookup h len=1 uid=0 gid=0 fh=set client=127\.0\.0\.1:[0-9]+$
^lookup h len=1 fh=[0-9]+: $
^lookup.return nfsderr 2\(NFSERR_NOENT\)$
^proc4.lookup.return nfsderr 2\(NFSERR_NOENT\) v4$
^rename g -> h \(1, 1\) fh=same dir$
^unlink h type=0$
^unlink.return nfsderr 0\(NFS_OK\)$
