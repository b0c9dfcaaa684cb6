^cat \(@CAT_PID@\) open$
