^begin: kernel string copy fault at 0x0 \[man error::fault\]$
^begin: division by 0$
^timer: user string copy fault -14 at 0x[0-9a-f]+ \[man error::fault\]$
^end: 3 caught in the timer$
