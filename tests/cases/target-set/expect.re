^status=0$
^target set:$
^@LOADER_PID@ begat @SH_PID@$
^@SH_PID@ begat [0-9]+$
^target set:$
^@LOADER_PID@ begat @SH_PID@$
^@SH_PID@ begat [0-9]+$
^target set:$
^last: target set:$
