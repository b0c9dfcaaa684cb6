# 4 x 25000 getppid(2) calls, one helper per CPU.
. /stapvm/case-lib.sh
retval_on_cpus 4 25000
