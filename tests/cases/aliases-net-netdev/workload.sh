# lo up, TCP over it (netpair), two MTU changes (netlink: dev_set_mtu_ext),
# ifconfig (SIOCGIF* ioctls on "lo"), /proc/net/dev (dev_get_stats).
ip link set lo up 2>/dev/null
netpair tcp 5811 1000 >/dev/null
ip link set lo mtu 65000
ip link set lo mtu 65536
ifconfig lo >/dev/null
cat /proc/net/dev >/dev/null
sleep 1
