. /stapvm/case-lib.sh
getppid_until_gone "$STAPVM_PID" 100
