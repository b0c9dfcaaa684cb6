# Nothing skipped, dropped or in error (the summary says so when any).
! grep -E 'skipped probes|Skipped|ERROR|dropped' "$CASE_OUT/err"
