# The planted bug 'lockdep' (tests/guest/testmod/stapvm_planted.c): the kernel
# must report it ("WARNING: possible circular locking dependency detected").
insmod /stapvm/testmod/stapvm_planted.ko bug=lockdep
rmmod stapvm_planted
dmesg | grep -q 'WARNING: possible circular locking dependency detected' && echo "reported: WARNING: possible circular locking dependency detected"
