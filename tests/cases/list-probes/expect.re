^kernel\.function\("vfs_read"\)$
^status 0$
^kernel\.function\("vfs_read"\) \$file:struct file\* \$buf:char\* \$count:size_t \$pos:loff_t\*$
^kernel\.function\("vfs_read"\)\.return \$file:struct file\* \$buf:char\* \$count:size_t \$pos:loff_t\* \$return:ssize_t$
^syscall\.open$
^syscall\.openat$
^syscall\.openat \$dfd:.+ \$filename:.+ \$flags:.+ \$mode:.+$
^syscalls [1-9][0-9][0-9]+$
^empty status 0$
^bad status 1$
