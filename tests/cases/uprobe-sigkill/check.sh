# Armed before the kill (the area exists), gone after it.
if ! grep -qx 'UCALLS_XOL=1' "$CASE_OUT/before"; then
	echo "the uprobe did not fire before SIGKILL:"; cat "$CASE_OUT/before"; exit 1
fi
if ! grep -qx 'UCALLS_XOL=0' "$CASE_OUT/after"; then
	echo "a uprobe is left after SIGKILL:"; cat "$CASE_OUT/after"; exit 1
fi
