# A kretprobe on __x64_sys_getppid printing execname() and the return
# value, through the raw ioctls.
stp-ioctl run /stapvm/hostile/valid-kretprobe.img 3 &
sleep 1
retval 3 >>"$VARS"
wait
