# The kernel has no PMU here (else this case proves nothing), and no
# session is left: the module has no open session (rmmod at the end of the
# batch checks the rest).
dmesg | grep -E 'Performance Events|PMU' | head -3
[ ! -d /sys/bus/event_source/devices/cpu ]
