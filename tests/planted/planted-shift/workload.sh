# The planted bug 'shift' (tests/guest/testmod/stapvm_planted.c): the kernel
# must report it ("UBSAN: shift-out-of-bounds").
insmod /stapvm/testmod/stapvm_planted.ko bug=shift
rmmod stapvm_planted
dmesg | grep -q 'UBSAN: shift-out-of-bounds' && echo "reported: UBSAN: shift-out-of-bounds"
