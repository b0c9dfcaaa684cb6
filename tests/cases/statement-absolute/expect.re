^address found: yes$
^hits 5 at kernel\.statement\(ADDR\)\.absolute$
^ERROR: probe point 'kprobe\.statement\(ADDR\+1\)\.absolute' could not be armed: EILSEQ \(
