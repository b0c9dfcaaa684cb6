^open\("/etc/motd", O_RDONLY\)$
^open = 3$
^close\(3\) fd=3$
^open\("/nonexistent", O_RDONLY\)$
^open = -2 \(ENOENT\)$
