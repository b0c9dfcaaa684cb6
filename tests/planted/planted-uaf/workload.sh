# The planted bug 'uaf' (tests/guest/testmod/stapvm_planted.c): the kernel
# must report it ("BUG: KASAN: use-after-free").
insmod /stapvm/testmod/stapvm_planted.ko bug=uaf
rmmod stapvm_planted
dmesg | grep -q 'BUG: KASAN: use-after-free' && echo "reported: BUG: KASAN: use-after-free"
