ip link set lo up 2>/dev/null
# During the session: 5 sent, none received. After it (hook unregistered):
# the same traffic gets through.
grep -qx 'UDP_SENT=5' "$VARS" && grep -qx 'UDP_RECEIVED=0' "$VARS" || exit 1
udpcount 47002 5 500 | grep -qx 'UDP_RECEIVED=5'
