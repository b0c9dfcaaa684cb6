# Module probes while nfsd is not loaded (this case runs before
# aliases-nfs-loaded loads it): a mandatory module("nfsd") point fails
# naming the module, an optional one is skipped, the nfsd.* aliases fail
# naming their function.
[ -d /sys/module/nfsd ] && echo "nfsd is loaded already"
cat > m.stp <<'S'
probe module("nfsd").function("nfsd_dispatch") { println("fired") }
probe begin { println("began"); exit() }
S
cat > o.stp <<'S'
probe module("nfsd").function("nfsd_dispatch") ? { println("fired") }
probe begin { println("began"); exit() }
S
cat > a.stp <<'S'
probe nfsd.dispatch { println(client_ip) }
probe begin { println("began"); exit() }
S
for s in m o a; do
	echo "== $s"
	stapvm compile -o $s.stpb $s.stp 2>&1 || echo "compile failed"
	stapvm load $s.stpb 2>&1
	echo "status $?"
done
