old=$(cat /proc/sys/kernel/pid_max)
echo "OLD=$old" >>"$VARS"
cat /proc/sys/kernel/pid_max >/dev/null
echo 40000 >/proc/sys/kernel/pid_max
cat /proc/sys/kernel/pid_max >/dev/null
echo "$old" >/proc/sys/kernel/pid_max
