# A hostile consumer_pos in every ring (user-writable, never trusted):
# the timer session runs as usual, every record is dropped and counted.
stp-ioctl evil /stapvm/hostile/valid-timer.img 10 2>&1
