^ok +kernel +Linux [0-9]
^ok +btf +/sys/kernel/btf/vmlinux, [0-9]+ KiB$
^ok +kallsyms +/proc/kallsyms, [0-9]+ symbols$
^ok +module +stapvm.ko loaded in 
^ok +device +/dev/stapvm, mode 600, owned by root: open needs CAP_SYS_ADMIN$
^ok +privileges +root$
^stapvm can run here \([0-9]+ warnings\)$
