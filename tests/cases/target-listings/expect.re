^execve \["cat", "/dev/null", "stapvm-marker"\] \[/\* 2 vars \*/\]$
^openat2 dfd=0xffffffffffffff9c filename=0x[0-9a-f]+ how=0x[0-9a-f]+$
^vars dfd=0xffffffffffffff9c filename=0x[0-9a-f]+ how=0x[0-9a-f]+\|locals \|$
^return=0x10e1$
