# netpair's TCP and UDP loopback exchanges (tests/guest/helpers/netpair.c),
# their client ports recorded for the expectation.
ip link set lo up 2>/dev/null
netpair tcp 5801 1000 >>"$VARS"
netpair udp 5802 300 >>"$VARS"
sleep 1
