^kernel\.function\("vfs_read"\) same$
^kernel\.function\("vfs_write"\)\.return same$
^kernel\.trace\("sched_process_exec"\) -$
^kernel\.trace\("sched_process_exit"\) -$
