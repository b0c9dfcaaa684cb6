^first:$
^ 0x[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f] : __(x64|do)_sys_getppid\+0x[0-9a-f]+/0x[0-9a-f]+ \[kernel\]$
^ 0x[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f] : do_syscall_64\+0x[0-9a-f]+/0x[0-9a-f]+ \[kernel\]$
^traces\[[A-Za-z0-9_.-]+,$
^ 0x[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f] : __(x64|do)_sys_getppid\+0x[0-9a-f]+/0x[0-9a-f]+ \[kernel\]$
^ 0x[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f] : do_syscall_64\+0x[0-9a-f]+/0x[0-9a-f]+ \[kernel\]$
^\] = 5$
