^compile 0$
^  k#3 +0 \(0x0\)  \[relocated: tv#0\]$
^target variables \(2\):$
^  tv#0 +\$file->f_inode->i_ino  \[parameter of vfs_read; handler#0, kernel\.function\("vfs_read"\) at 1:[0-9]+\]$
^    k#3 += 0 +byte offset of ->f_inode in its struct/union$
^  tv#1 +\$count  \[parameter of vfs_read;
^    k#0 += 0 +argument slot of \$file$
^    k#3 += [1-9][0-9]* +byte offset of ->f_inode in its struct/union$
^    k#4 += 1 +->f_inode reads memory
^    k#5 += [1-9][0-9]* +byte offset of ->i_ino in its struct/union$
^    k#8 += 0 +arithmetic right shift
^    k#10 += 2 +argument slot of \$count$
^dump 0$
