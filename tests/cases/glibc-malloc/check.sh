# Every pointer malloc returned, in order, as the helper printed them.
grep '^MALLOCS_PTR=' "$CASE_OUT/helper" >"$CASE_OUT/want-ptrs"
grep '^MALLOCS_PTR=' "$CASE_OUT/out" >"$CASE_OUT/got-ptrs"
[ "$(wc -l <"$CASE_OUT/want-ptrs")" -eq 6 ] || { echo "helper output:"; cat "$CASE_OUT/helper"; exit 1; }
diff "$CASE_OUT/want-ptrs" "$CASE_OUT/got-ptrs" || { echo "\$return differs from the helper's pointers"; exit 1; }
# The calls and the sizes asked, exactly.
sizes=$(sed -n 's/^MALLOCS_SIZES=//p' "$CASE_OUT/helper")
grep -qx "calls 6 sizes $sizes" "$CASE_OUT/out" || { echo "want calls 6 sizes $sizes"; exit 1; }
# The .library probe counted in the mallocs program only.
[ "$(grep -c '^library probe in ' "$CASE_OUT/out")" -eq 1 ] &&
	grep -qx 'library probe in mallocs' "$CASE_OUT/out" || { echo "library probe outside its program"; exit 1; }
