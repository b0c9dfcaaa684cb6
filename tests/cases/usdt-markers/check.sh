# The program saw its guard open on every iteration (the semaphore raised).
grep -qx 'USDT_GUARDED=5' "$VARS" || { echo "guard not raised:"; cat "$VARS"; exit 1; }
# Unloaded: the semaphore is back to 0, so the guard stays shut.
usdt 3 | grep -qx 'USDT_GUARDED=0' || { echo "guard still open after the session"; exit 1; }
