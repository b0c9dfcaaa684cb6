# The 2006 script verbatim compiles (string() with a deprecation warning)
# but names 2.6-era functions: loading it fails, naming the probe point.
stapvm run "$CASE_DIR/boot-trace-2006.stp" >"$CASE_OUT/verbatim" 2>&1
st=$?
cat "$CASE_OUT/verbatim"
[ "$st" -ne 0 ] || exit 1
grep -q 'WARNING: function string() is deprecated' "$CASE_OUT/verbatim" || exit 1
grep -q "probe point 'kernel.function(\"sys_clone\").return' cannot be resolved" "$CASE_OUT/verbatim" || exit 1
