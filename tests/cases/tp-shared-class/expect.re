^exit @RETVAL_PID@ retval self=1$
^free @RETVAL_PID@$
^wakeup @SLEEP_PID@ sleep new=1$
