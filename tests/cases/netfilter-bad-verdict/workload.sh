udpcount 47003 4 300 >>"$VARS"
