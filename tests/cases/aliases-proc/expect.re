^proc @R_PID@ created=1 started=1 exec=/.*retval complete=0 1$
^proc @R_PID@ exit=15 released=1 fork=1 wakeup_new=1 prio=120$
^sig @R_PID@ send=SIGTERM retval 1 kill=SIGTERM retval perm=SIGTERM handle=SIGKILL 0 0 User Mode Signal sched=signal_send$
^exit3 @E_PID@$
^tick 1 ctxswitch 1 bad 0 cpu_off 1 bad 0$
^do_action 1$
