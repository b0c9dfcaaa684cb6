# The planted bug 'oob' (tests/guest/testmod/stapvm_planted.c): the kernel
# must report it ("BUG: KASAN: slab-out-of-bounds").
insmod /stapvm/testmod/stapvm_planted.ko bug=oob
rmmod stapvm_planted
dmesg | grep -q 'BUG: KASAN: slab-out-of-bounds' && echo "reported: BUG: KASAN: slab-out-of-bounds"
