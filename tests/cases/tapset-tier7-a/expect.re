^times 1 1 1$
^nopid usr: 0m0\.000s, sys: 0m0\.000s$
^string ok$
^comm "stapvm\\0" "sta"\.\.\.$
^null 0x0$
^kerr kernel buffer copy fault at 0x0 \[man error::fault\]$
^uerr user long copy fault 0x0 \[man error::fault\]$
^tz 0 \[UTC\] Thu Jan  1 00:00:00 1970 UTC$
^status 0$
^tz -3600 \[CET\] Thu Jan  1 01:00:00 1970 CET$
^status 0$
