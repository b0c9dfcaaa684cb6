^pid1 @INIT_COMM@$
^nopid \[\]$
^begin is_return 0$
^begin: cannot access CPU registers in this context$
^modname\(0\): Cannot determine kernel module name$
^kstr <fault>$
^     0 open2\(@OPEN2_PID@\): -> do_sys_openat2$
^dfd -100 4294967196$
^name /etc 1668572463 47 \[bad\] \[/etc/motd\] 0$
^comm ope$
^is_return 0 uaddr 1 task 1 probemod kernel$
^ 0x[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f] : do_sys_openat2\+0x[0-9a-f]+/0x[0-9a-f]+ \[kernel\]$
^ret is_return 1 ax [0-9]+ 1 1$
^ +[0-9]+ open2\(@OPEN2_PID@\): <- do_sys_openat2$
^modname kernel$
^modname stapvm$
