# Five iterations while the markers are armed.
usdt 5 >>"$VARS"
