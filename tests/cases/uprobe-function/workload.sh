# Seven calls: arguments 0 .. 6 (sum 21), returns 3x+1 (sum 70).
ucalls 7 >>"$VARS"
