# SystemTap's network/tcp_connections.stp, unchanged: inet_csk_accept's
# return (inet_get_local_port, inet_get_ip_source of the new socket) as
# netpair accepts its own connection on 127.0.0.1:5843.
ip link set lo up 2>/dev/null
netpair tcp 5843 100 >>"$VARS"
sleep 1
