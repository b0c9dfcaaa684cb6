^WARNING: optional probe point 'kprobe\.function\("nosuchfunction_\*"\)\?' skipped: no match
^stapvm: probe point 'kernel\.function\("vfs_read\*"\)' matched [1-9][0-9]* functions$
^hits yes$
