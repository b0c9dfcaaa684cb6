^(__x64_sys|__do_sys)_getppid (__x64_sys|__do_sys)_getppid (do_syscall_64|x64_sys_call)$
^(__x64_sys|__do_sys)_getppid (__x64_sys|__do_sys)_getppid (do_syscall_64|x64_sys_call)$
