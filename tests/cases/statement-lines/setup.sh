# The test module (tests/guest/lib.sh build_testmods); its procfs file
# runs lines_walk(N).
[ -d /sys/module/stapvm_lines ] || insmod /stapvm/testmod/stapvm_lines.ko
