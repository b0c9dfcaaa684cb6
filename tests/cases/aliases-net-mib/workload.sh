# netpair's TCP exchange on 127.0.0.1:5821 (connect, accept, 2000 bytes,
# connect(AF_UNSPEC): an active reset), then a connect to the closed
# 127.0.0.1:5822.
ip link set lo up 2>/dev/null
netpair tcp 5821 1000 >/dev/null
nc -w 1 127.0.0.1 5822 </dev/null 2>/dev/null
sleep 1
