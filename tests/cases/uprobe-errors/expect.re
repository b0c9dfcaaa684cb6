^ERROR: probe point 'process\("/stapvm/bin/nosuch"\)\.function\("main"\)' cannot be resolved: no program '/stapvm/bin/nosuch' \(not a file, and not found in \$PATH\)$
^status=1$
^ERROR: probe point 'process\("/stapvm/bin/ucalls"\)\.statement\(0x10\)\.absolute' cannot be resolved: address 0x10 is not in the code of /stapvm/bin/ucalls$
^status=1$
^ERROR: probe point 'process\("/stapvm/bin/usdt"\)\.mark\("nosuch"\)' cannot be resolved: no USDT marker matches 'nosuch' in /stapvm/bin/usdt: .+$
^status=1$
^ERROR: probe point 'process\("/stapvm/bin/ucalls"\)\.mark\("tick"\)' cannot be resolved: no USDT marker matches 'tick' in /stapvm/bin/ucalls: it has no USDT markers \(no \.note\.stapsdt section\)$
^status=1$
^ERROR: probe point 'process\("/stapvm/bin/stapvm"\)\.library\("libnosuch\.so\.1"\)\.function\("f"\)' cannot be resolved: no library 'libnosuch\.so\.1' of /stapvm/bin/stapvm \(not among its dependencies, nor in the library directories\)$
^status=1$
^ERROR: no process [0-9]+ \(-x\): it has exited or never existed$
^status=1$
^ERROR: probe point 'process\.function\("ucall_leaf"\)' is in the -c command's program, and 'nosuchprogram' is not found in \$PATH$
^status=1$
^ERROR: probe point 'kernel\.data\("sysctl_overcommit_ratio"\)\.write' could not be armed: every debug register is in use .*\(ENOSPC\)$
^status=1$
^UCALLS_XOL=0$
