^Collecting data\.\.\. Type Ctrl-C to exit and display results$
^#SysCalls +PID$
^[0-9]+ +@RETVAL_PID@$
