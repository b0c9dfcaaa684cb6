# stapvm run -c: the session ends by itself when the command exits.
stapvm run -w -c 'cat /proc/version > /dev/null' "$CASE_DIR/t.stp"
echo "status=$?"
stapvm run -e 'probe begin { printf("no -c/-x: target()=%d\n", target()); exit() }'
# SystemTap's process/strace.stp -c: the command's system calls only, each
# line stamped with ctime().
stapvm run -w -c 'cat /proc/version > /dev/null' "$CASE_DIR/strace.stp" >"$CASE_OUT/strace"
grep -c 'openat(AT_FDCWD, "/proc/version", O_RDONLY' "$CASE_OUT/strace"
grep -vc '^[A-Z][a-z][a-z] [A-Z][a-z][a-z] ' "$CASE_OUT/strace" || true
