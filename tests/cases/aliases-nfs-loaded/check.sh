# Lines whose place among the others depends on thread scheduling: the
# client's callback service, the server's first request, the first
# synchronous client call; and the data that crossed the mount.
o=$CASE_OUT/out
grep -q '^svc.create NFSv4 callback prog=1073741824 nvers=[0-9]* bufsize=set$' "$o" || { echo "no svc.create"; exit 1; }
grep -q '^svc.process nfsd sv_prog=100003 peer=127.0.0.1 vers=4 prot=6$' "$o" || { echo "no svc.process"; exit 1; }
grep -q '^clnt.call_sync nfs prog=100003 vers=4 port=2049 prot=6 proc=named$' "$o" || { echo "no call_sync"; exit 1; }
grep -q '^hello-nfs$' "$CASE_OUT/workload" || { echo "nothing read over NFS"; exit 1; }
