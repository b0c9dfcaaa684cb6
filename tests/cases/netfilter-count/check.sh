# udpcount's own counts: 7 sent, 7 received (the probe accepted them)
grep -qx 'UDP_SENT=7' "$VARS" && grep -qx 'UDP_RECEIVED=7' "$VARS"
