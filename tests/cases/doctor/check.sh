# No item failed.
! grep '^FAIL' "$CASE_OUT/out"
