# netpair's UDP then TCP exchanges on lo.
ip link set lo up 2>/dev/null
netpair udp 5832 300 >/dev/null
netpair tcp 5831 1000 >/dev/null
sleep 1
