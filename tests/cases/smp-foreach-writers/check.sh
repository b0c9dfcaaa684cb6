# The writers' probe skipped nothing (-v's per-probe counts) and nothing
# was dropped or in error. The timer may show skipped hits: one that fires
# while a getppid handler runs on its CPU (kprobes on ftrace run with
# interrupts on) is dropped as stap drops a nested hit; the walks that ran
# are enough.
grep -E '^kernel\.function\("__x64_sys_getppid"\): hits [0-9]+, skipped 0$' "$CASE_OUT/err" &&
	! grep -E 'ERROR|dropped [1-9]|Number of dropped|Skipped too many' "$CASE_OUT/err"
