# Untraced: calls.py's output before the script is loaded, and the
# interpreter's own account of its calls (oracle.py, sys.setprofile).
python3 -S "$CASE_DIR/calls.py" >"$CASE_OUT/untraced" 2>&1
python3 -S "$CASE_DIR/oracle.py" "$CASE_DIR/calls.py" >/dev/null 2>"$CASE_OUT/oracle"
