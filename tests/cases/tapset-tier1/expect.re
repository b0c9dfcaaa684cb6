^status 0$
^HZ plausible 1$
^egid 0 1$
^ktime monotonic 1$
^cycles 1$
^cpu_clock 1 1$
^local_clock_us 1$
^randint buckets 10$
^probe_type begin_end$
^timer hrtimer 1$
^end$
^timer lines: 1$
^not reached lines: 0$
^-- stderr$
^WARNING: from begin$
^status2 [01]$
^end2$
^-- stderr2$
^ERROR: cpu 100000 is not online
^ERROR: range too wide
^WARNING: Number of errors: 2, skipped probes: 0$
^sleeper uid 1234 gid 567 egid 567 kprobe$
