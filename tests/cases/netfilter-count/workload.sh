ip link set lo up 2>/dev/null
udpcount 47001 7 300 >>"$VARS"
