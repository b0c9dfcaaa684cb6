# Traced: the same program while the markers are armed.
python3 -S "$CASE_DIR/calls.py" >"$CASE_OUT/traced" 2>&1
echo "python status=$?"
