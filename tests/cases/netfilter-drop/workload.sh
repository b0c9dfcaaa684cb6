udpcount 47002 5 500 >>"$VARS"
