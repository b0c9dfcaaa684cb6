# stapvm list (stap -l / -L) against the guest kernel's /proc/kallsyms and
# BTF: sorted points, parameters with stap's type spelling, syscalls.
stapvm list 'kernel.function("vfs_rea*")'
echo "status $?"
stapvm list -L 'kernel.function("vfs_read")' 'kernel.function("vfs_read").return'
stapvm list 'syscall.open*'
stapvm list -L 'syscall.openat'
echo "syscalls $(stapvm list 'syscall.*' | wc -l)"
stapvm list 'kernel.function("no_such_function_*")'
echo "empty status $?"
stapvm list 'foo.bar' 2>/dev/null
echo "bad status $?"
