^FAULTS=[0-9]+$
^TOUCHED=4000$
^perf page faults [0-9]+, other processes 0$
