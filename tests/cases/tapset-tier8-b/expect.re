^stp_pid @LOADER@ myproc 1 pid 1$
^mem size 1 rss 1 rss<=size 1 shr<=rss 1 txt 1 data 1$
^pid forms 1 1 1 1 1$
^none 0 size:     0, rss:     0, shr:     0, txt:     0, data:     0$
^string size: [ 0-9.KMG][ 0-9.KMG][ 0-9.KMG][ 0-9.KMG][ 0-9.KMG], rss: [ 0-9.KMG][ 0-9.KMG][ 0-9.KMG][ 0-9.KMG][ 0-9.KMG], shr: [ 0-9.KMG][ 0-9.KMG][ 0-9.KMG][ 0-9.KMG][ 0-9.KMG], txt: [ 0-9.KMG][ 0-9.KMG][ 0-9.KMG][ 0-9.KMG][ 0-9.KMG], data: [ 0-9.KMG][ 0-9.KMG][ 0-9.KMG][ 0-9.KMG][ 0-9.KMG]$
^ns 11111 pgrp @PGRP@ sid @SID@$
^nr 110$
^caller do_syscall_64 0x[0-9a-f]+$
^callers 0x[0-9a-f]+ 1$
^stack (16384|32768) 1 1$
^env hello-tier8|$
^RIP: [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$
^RSP: [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]  EFLAGS: [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$
^RAX: [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f] RBX: [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f] RCX: [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$
^R13: [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f] R14: [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f] R15: [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$
^CS:  0010 SS: [0-9a-f][0-9a-f][0-9a-f][0-9a-f]$
