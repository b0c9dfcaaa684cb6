# A kprobe on __x64_sys_getppid printing execname() and pid(), through
# the raw ioctls; the retval helper calls getppid 3 times meanwhile.
stp-ioctl run /stapvm/hostile/valid-kprobe.img 3 &
sleep 1
retval 3 >>"$VARS"
wait
