# The planted bug 'odebug' (tests/guest/testmod/stapvm_planted.c): the kernel
# must report it ("ODEBUG: free active").
insmod /stapvm/testmod/stapvm_planted.ko bug=odebug
rmmod stapvm_planted
dmesg | grep -q 'ODEBUG: free active' && echo "reported: ODEBUG: free active"
