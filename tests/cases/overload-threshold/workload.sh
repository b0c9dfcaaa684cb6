# getppid in a loop until the session ends (at most 10 s), then stop it.
. /stapvm/case-lib.sh
getppid_until_gone "$STAPVM_PID" 100
