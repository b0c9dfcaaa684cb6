# stapvm check where the kernel can be read (BTF, /proc/kallsyms): target
# variables, members and tracepoint arguments are resolved as load would
# resolve them, and a misspelling is reported as stap -p2 reports it:
# file:line:col, the source line with a caret, (similar: ...).
printf 'probe kernel.function("vfs_read") {\n\tprintln($file->f_inod)\n}\n' >bad.stp
stapvm check bad.stp 2>&1
echo "status $?"
stapvm check -e 'probe kernel.trace("sched_wakeup") { println($pp) }' 2>&1
echo "status $?"
stapvm check -e 'probe begin { println(@cast(0, "task_struct")->pidd) }' 2>&1
echo "status $?"
stapvm check -e 'probe kernel.function("vfs_read") { println($file->f_inode->i_ino, $count) }' 2>&1
echo "status $?"
