# The args_size rules of the extensible ioctls (abi.h), through raw
# ioctls: larger with a zero tail is accepted, a non-zero tail is E2BIG,
# smaller is EINVAL, ioctl numbers with another size are the same request.
stp-ioctl args /stapvm/hostile/valid-timer.img
