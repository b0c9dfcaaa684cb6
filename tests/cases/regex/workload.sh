cat /proc/version >/dev/null
cat /proc/version >/dev/null
