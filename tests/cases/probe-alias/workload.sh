echo hello >f
cat f >/dev/null
