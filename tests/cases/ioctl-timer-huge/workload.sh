# A timer period of 2^64 - 1 ns (the verifier bounds it from below only)
# must never fire: after 2 s only the end probe has printed.
stp-ioctl run /stapvm/hostile/valid-timer-huge.img 2 2>&1
