grep -qx 'UDP_SENT=4' "$VARS" && grep -qx 'UDP_RECEIVED=4' "$VARS"
