^jiffies grows 1 matches 1$
^loadavg index 1$
^loadavg \[[0-9]+\.[0-9][0-9] [0-9]+\.[0-9][0-9] [0-9]+\.[0-9][0-9]\]$
^defined 1 0$
^zero page 0$
^status 0$
cannot read @var\("nosuchsym_xyz"\) at 1:23: the kernel has no symbol 'nosuchsym_xyz'
^status 1$
