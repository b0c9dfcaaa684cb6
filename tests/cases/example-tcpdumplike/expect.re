^       Source IP         Dest IP  SPort  DPort  U  A  P  R  S  F $
^       127\.0\.0\.1       127\.0\.0\.1  +@TCP_CPORT@   5841  0  0  0  0  1  0$
^       127\.0\.0\.1       127\.0\.0\.1   5841  +@TCP_CPORT@  0  1  0  0  0  0$
^       127\.0\.0\.1         0\.0\.0\.0   5842      0  UDP$
