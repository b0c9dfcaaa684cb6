# -o FILE and switch_file(): the output goes on in FILE.1, FILE.2 (stapio's
# stream-mode names); then SystemTap's io/switchfile.stp for 7 s (switch
# at 5 s: two files, the first starts with the begin line, the second ends
# with the end line).
stapvm run -o "$CASE_OUT/log" -e 'probe begin { println("a"); switch_file(); println("b"); switch_file(); println("c"); exit() }'
for f in log log.1 log.2; do echo "== $f"; cat "$CASE_OUT/$f"; done
stapvm run -o "$CASE_OUT/sw" -T 7 "$CASE_DIR/switchfile.stp"
echo "== sw"
head -n 1 "$CASE_OUT/sw"
tail -n 1 "$CASE_OUT/sw.1"
ls "$CASE_OUT" | grep -c '^sw'
# -S SIZE,N: FILE.0, FILE.1, ... and only the last N kept.
stapvm run -o "$CASE_OUT/lim" -S 1,2 -e 'probe begin { println("0"); switch_file(); println("1"); switch_file(); println("2"); switch_file(); println("3"); exit() }'
ls "$CASE_OUT" | grep '^lim'
cat "$CASE_OUT/lim.2" "$CASE_OUT/lim.3"
