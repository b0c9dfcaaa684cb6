^randomized: [0-9]+ intervals, [0-9]+ below 12 ms, [0-9]+ above 28 ms, [0-9]+ in \[4, 40\] ms$
^fixed: [0-9]+ intervals, [0-9]+ in \(12, 28\) ms$
^jiffies randomized: [0-9]+ hits$
^randomized count plausible 1$
^randomized intervals vary 1$
^randomized intervals within N \+/- M 1$
^fixed intervals steady 1$
^jiffies randomized plausible 1$
