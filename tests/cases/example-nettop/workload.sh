# SystemTap's network/nettop.stp, unchanged (tier E): netdev.transmit and
# netdev.receive (kernel_aliases.rs: the net_dev_queue and
# netif_receive_skb tracepoints, dev_name and length from $skb). TCP
# connects over lo (SYN out, RST back), then past the 5 s report.
. /stapvm/case-lib.sh
connect_lo_closed 3
sleep 6
