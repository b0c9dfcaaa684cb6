n=$(grep -c '^Pass 1: parse failed' "$CASE_OUT/out")
[ "$n" = 1 ] || { echo "pass-1 summary printed $n times"; exit 1; }
