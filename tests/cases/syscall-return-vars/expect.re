^pipe2? fds ok=1$
^wait4 WEXITSTATUS=7$
