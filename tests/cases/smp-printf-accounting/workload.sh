# 4 x 10000 getppid(2) calls, one helper per CPU.
. /stapvm/case-lib.sh
retval_on_cpus 4 10000
sleep 0.5
