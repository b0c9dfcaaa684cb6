ip link set lo up 2>/dev/null
udpcount 47002 5 500 >>"$VARS"
