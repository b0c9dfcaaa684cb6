# One open(2) of /etc/motd by the open2 helper; the comm of pid 1 for
# pid2execname(1).
echo "INIT_COMM=$(cat /proc/1/comm)" >>"$VARS"
open2 1 /etc/motd >>"$VARS"
sleep 1
