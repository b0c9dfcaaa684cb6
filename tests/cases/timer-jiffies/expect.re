^HZ [0-9]+, jiffies\(1\) [0-9]+ hits, jiffies\(25\) [0-9]+ hits$
^jiffies\(1\) plausible 1$
^jiffies\(25\) plausible 1$
^probe_type timer$
