# The still-running sleeper of workload.sh ends here, so that no process of
# the case outlives it.
. "$VARS"
kill "$SLEEP_PID"
# The bound: with room for 3 records (-G MAX_PROCS=3), a command that
# starts 6 processes gets at most 3 rows and the closing line counts the
# processes left out.
stapvm run -G MAX_PROCS=3 -c 'sh -c "for i in 1 2 3 4 5 6; do /bin/true; done; true"' \
	"$CASE_DIR/script.stp" >"$CASE_OUT/bounded" 2>&1
st=$?
cat "$CASE_OUT/bounded"
[ "$st" -eq 0 ] || exit 1
rows=$(grep -c ' read  *[0-9]* write ' "$CASE_OUT/bounded")
[ "$rows" -ge 1 ] && [ "$rows" -le 3 ] || exit 1
grep -Eq '^[0-9]+ processes not shown: more than 3 records \(MAX_PROCS\)$' "$CASE_OUT/bounded" || exit 1
