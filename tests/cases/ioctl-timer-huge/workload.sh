# A timer period of STP_MAX_TIMER_NS (one day, the longest the verifier
# accepts) must not fire: after 2 s only the end probe has printed.
stp-ioctl run /stapvm/hostile/valid-timer-huge.img 2 2>&1
