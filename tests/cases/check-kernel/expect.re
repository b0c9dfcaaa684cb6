^semantic error: probe point 'kernel\.function\("vfs_read"\)': cannot read \$file->f_inod: struct file has no member 'f_inod' \(similar: f_inode[,)].*: identifier '\$file' at bad\.stp:2:10$
^        source: .println\(\$file->f_inod\)$
^                .        \^$
^Pass 2: analysis failed\.  \[man error::pass2\]$
^status 1$
^semantic error: probe point 'kernel\.trace\("sched_wakeup"\)' has no parameter 'pp' \(similar: p\).*: identifier '\$pp' at <input>:1:46$
^status 1$
^semantic error: cannot read @cast\(\.\.\., "task_struct"\)->pidd: struct task_struct has no member 'pidd' \(similar: pid[,)].*: operator '@cast' at <input>:1:23$
^status 1$
^status 0$
