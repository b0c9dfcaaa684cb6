^ERROR: probe point 'kernel.function\("vfs_read"\)' has no parameter 'nosuch' \(BTF of the running kernel: parameters are file, buf, count, pos\)$
