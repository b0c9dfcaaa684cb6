^vfs.write.return @FILE@ N/A 16384 ok=1$
^vfs.read.return @FILE@ 24576$
^vfs.do_sync_write do_sync_write 16384$
^generic.fop.write_iter generic_file_write_iter 16384 bytes$
^generic.fop.read_iter.return generic_file_read_iter 24576$
^generic.fop.llseek 8192 SEEK_(SET|CUR)$
^vfs.open @FILE@$
^ioblock.request ram0 R 32768$
^ioblock.request ram0 W 32768$
^ioblock.request sector0 1$
^ioblock.request (whole=1 start=0|whole=0 start=-1)$
^ioblock.end ram0 R (32768|0)$
^ioblock.end ram0 W (32768|0)$
^ioblock.end error=0 n=16$
^ioblock_trace.request R 8$
^ioblock_trace.request W 8$
^ioblock_trace.end R 8$
^ioblock_trace.end W 8$
^ioscheduler_trace.elv_issue_request loop0 1$
^ioscheduler_trace.elv_completed_request loop0 1$
^elevator \[(mq-deadline|none|)\]$
^tty.open ttyS0 ino=1$
^tty.ioctl ttyS0 TIOCSWINSZ$
^tty.resize "ttyS0" 30 100 old=1$
^tty.write "fs-tty-probe\\n" 13 ttyS0 "serial(_8250)?"$
^tty.release ttyS0$
