^parse error: 
^Pass 1: parse failed\.  \[man error::pass1\]$
^status 1$
^status 0$
