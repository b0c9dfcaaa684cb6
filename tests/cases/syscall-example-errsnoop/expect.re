HITS ERRSTR +SYSCALL +PROCESS +PID ARGSTR$
^ +[0-9]+ +2/ENOENT +open +open2 +[0-9]+ "/nonexistent", O_RDONLY$
