# The shell's process group and session (fields 5 and 6 of its stat;
# retval, its child, has the same ones), then a helper's getppid calls.
set -- $(cat /proc/$$/stat)
echo "PGRP=$5" >>"$VARS"
echo "SID=$6" >>"$VARS"
TIER8_VAR=hello-tier8 retval 3 >/dev/null
echo "LOADER=$STAPVM_PID" >>"$VARS"
