^ERROR: probe point 'kernel\.function\("vfs_read"\)' has no parameter 'nosuch' \(similar: [a-z_, ]+\) \(BTF of the running kernel: parameters are file, buf, count, pos; kernel global variables cannot be read as target variables
^        at .*script\.stp:3:43$
^        source: probe kernel\.function\("vfs_read"\) \{ print\(\$nosuch\) \}$
^                                                          \^$
