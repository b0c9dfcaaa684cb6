# The module glob armed a kprobe in sunrpc while the script ran.
grep -q '^armed$' "$CASE_OUT/workload" || { echo "no kprobe on rpc_create"; cat "$CASE_OUT/workload"; exit 1; }
