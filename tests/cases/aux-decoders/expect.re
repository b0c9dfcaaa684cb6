^(clock_nanosleep: CLOCK_REALTIME 0x0 |nanosleep: )\[1[.]000000000\]$
^openat: O_WRONLY[|]O_CREAT[|]O_TRUNC([|]O_LARGEFILE)? S_IWOTH[|]S_IROTH[|]S_IWGRP[|]S_IRGRP[|]S_IWUSR[|]S_IRUSR$
