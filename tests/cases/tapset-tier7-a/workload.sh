# tapset-tier7-a: t.stp compiled and run in the guest, once in UTC (no TZ
# and no /etc/localtime: glibc's UTC) and once with TZ set (POSIX form:
# "CET-1" is one hour east of UTC).
stapvm run -T 20 "$CASE_DIR/t.stp"
echo "status $?"
TZ=CET-1 stapvm run -T 20 "$CASE_DIR/t.stp" | grep '^tz '
echo "status $?"
