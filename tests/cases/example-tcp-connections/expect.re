^   UID              CMD    PID   PORT        IP_SOURCE$
^     0          netpair +[0-9]+   5843        127\.0\.0\.1$
