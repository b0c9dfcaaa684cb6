# count = done + skipped; no run-time error; exit status 0 (MAXSKIPPED is
# high).
out="$CASE_OUT/out"
count=$(sed -n 's/^count=\([0-9]*\) done=.*/\1/p' "$out")
done=$(sed -n 's/^count=[0-9]* done=\([0-9]*\)$/\1/p' "$out")
skipped=$(sed -n 's/^WARNING: Number of errors: 0, skipped probes: \([0-9]*\)$/\1/p' "$out")
skipped=${skipped:-0}
echo "count=$count done=$done skipped=$skipped"
if grep -q 'ERROR' "$out"; then echo "an error was reported"; exit 1; fi
[ -n "$count" ] && [ -n "$done" ] && [ "$count" -eq $((done + skipped)) ]
