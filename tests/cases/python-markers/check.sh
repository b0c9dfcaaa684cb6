# The traced program printed exactly what it prints untraced.
cmp "$CASE_OUT/untraced" "$CASE_OUT/traced" || { echo "output changed under tracing"; exit 1; }
grep -qx 'total 16' "$CASE_OUT/traced" || { echo "calls.py did not run:"; cat "$CASE_OUT/traced"; exit 1; }
# Every call and return, in order, as the interpreter saw them.
grep '^[-<][->] ' "$CASE_OUT/out" >"$CASE_OUT/calls"
diff "$CASE_OUT/oracle" "$CASE_OUT/calls" || { echo "the markers differ from sys.setprofile's calls"; exit 1; }
grep -qx 'lines seen' "$CASE_OUT/out" || { echo "no line marker hit"; exit 1; }
# (Not two empty lists: calls.py makes 16 calls, each returns.)
[ "$(grep -c '^-> ' "$CASE_OUT/calls")" -eq 16 ] || { echo "want 16 calls"; exit 1; }
[ "$(grep -c '^<- ' "$CASE_OUT/calls")" -eq 16 ] || { echo "want 16 returns"; exit 1; }
