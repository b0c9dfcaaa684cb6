# The ring mapping rules (abi.h): consumer page RW alone, the rest RO, no
# way to add write later, nothing past a ring or past the last CPU.
stp-ioctl mmap /stapvm/hostile/valid-timer.img
