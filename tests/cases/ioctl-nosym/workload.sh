# LOAD accepts a kprobe on a symbol no kernel has (symbols are resolved
# when arming); START must fail with ENOENT and leave nothing armed.
stp-ioctl run /stapvm/hostile/valid-nosym.img 1
