^printf 0 "retval" @RETVAL_PID@$
^printf 0 "retval" @RETVAL_PID@$
^printf 0 "retval" @RETVAL_PID@$
