^printf 0 "retval" @RETVAL_PPID@$
^printf 0 "retval" @RETVAL_PPID@$
^printf 0 "retval" @RETVAL_PPID@$
