# The planted bug 'kfence' (tests/guest/testmod/stapvm_planted.c): the kernel
# must report it ("BUG: KFENCE: out-of-bounds read").
insmod /stapvm/testmod/stapvm_planted.ko bug=kfence
rmmod stapvm_planted
dmesg | grep -q 'BUG: KFENCE: out-of-bounds read' && echo "reported: BUG: KFENCE: out-of-bounds read"
