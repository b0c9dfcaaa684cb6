^stapvm: resolve [0-9.]+ ms, load [0-9.]+ ms \([0-9]+ bytes image, 4 probes, [0-9]+ CPUs x 64 ring pages\)$
^begin$
^end n=5$
^stapvm: start [0-9.]+ ms, ran [0-9.]+ ms, stopped by -T timeout: hits [0-9]+, skipped 0, dropped 0, errors 0, probes armed 2$
^begin: hits 1, skipped 0$
^kernel\.function\("__x64_sys_getppid"\): hits ([5-9]|[1-9][0-9]+), skipped 0$
^timer\.ms\(100\): hits [1-9][0-9]*, skipped 0$
^end: hits 1, skipped 0$
