optional probe point 'kernel\.function\("no_such_fn"\)!' skipped
^stapvm: resolve [0-9.]+ ms, load [0-9.]+ ms \([0-9]+ bytes image, 2 probes, 
probes armed 2$
^kernel\.function\("vfs_read"\): hits [1-9][0-9]*, skipped 0$
^kernel\.function\("vfs_read"\)!: hits [1-9][0-9]*, skipped 0$
