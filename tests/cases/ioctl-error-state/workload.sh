# The timer's first tick divides by zero (MAXERRORS is 0): STATUS says
# STP_STATE_ERROR (3) with exit requested, STOP runs no end handler (its
# printf 1 must not appear, PROBE_STATS counts no hit for it), and no
# tick runs after the error.
stp-ioctl run /stapvm/hostile/valid-divzero.img 3 2>&1
