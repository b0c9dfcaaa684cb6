# The hand-made timer image through the raw ioctls (no CLI): 5 ticks,
# exit() at 5, then the end probe.
stp-ioctl run /stapvm/hostile/valid-timer.img 10
