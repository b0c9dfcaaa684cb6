# SystemTap's network/dropwatch.stp, unchanged (tier E): kernel.trace
# ("kfree_skb") with $location and @choose_defined($reason, 0), whose
# @defined the loader answers from BTF (__bpf_trace_kfree_skb). A TCP SYN
# to a closed port on lo is dropped (no socket), then past the 5 s report.
. /stapvm/case-lib.sh
connect_lo_closed 5
sleep 6
