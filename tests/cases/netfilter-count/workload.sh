udpcount 47001 7 300 >>"$VARS"
