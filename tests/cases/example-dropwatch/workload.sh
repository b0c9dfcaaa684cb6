# SystemTap's network/dropwatch.stp, unchanged (tier E): kernel.trace
# ("kfree_skb") with $location and @choose_defined($reason, 0), whose
# @defined the loader answers from BTF (__bpf_trace_kfree_skb). A TCP SYN
# to a closed port on lo is dropped (no socket), then past the 5 s report.
ip link set lo up 2>/dev/null
i=0
while [ $i -lt 5 ]; do
	nc -w 1 127.0.0.1 9 </dev/null 2>/dev/null
	i=$((i + 1))
done
sleep 6
