# The planted bug 'sleep' (tests/guest/testmod/stapvm_planted.c): the kernel
# must report it ("BUG: sleeping function called from invalid context").
insmod /stapvm/testmod/stapvm_planted.ko bug=sleep
rmmod stapvm_planted
dmesg | grep -q 'BUG: sleeping function called from invalid context' && echo "reported: BUG: sleeping function called from invalid context"
