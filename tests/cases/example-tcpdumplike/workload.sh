# SystemTap's network/tcpdumplike.stp, unchanged: tcp.receive (tcp_v4_rcv:
# addresses, ports and flags from the packet's headers) and udp.recvmsg
# (the socket's). netpair's TCP exchange on 127.0.0.1:5841 and a UDP
# datagram to :5842 (tests/guest/helpers/netpair.c).
ip link set lo up 2>/dev/null
netpair tcp 5841 1000 >>"$VARS"
netpair udp 5842 300 >>"$VARS"
sleep 1
