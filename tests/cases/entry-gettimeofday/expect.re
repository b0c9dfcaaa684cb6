^(clock_)?nanosleep: slept about 1s$
^vfs_read: count >= return$
