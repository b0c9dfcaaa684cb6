^free @R_PID@ prio=120 exit_prio=120$
