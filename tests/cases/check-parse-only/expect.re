^parse error: 
^Pass 1: parse failed\.  \[man error::pass1\]$
^status 1$
^# parse tree dump$
^# file <input>$
^probe begin \{$
^  printf\("%d\\n", undefined_fn\(\)\);$
^\}$
^status 0$
