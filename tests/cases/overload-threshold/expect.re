^ERROR: probe overhead \([0-9]+ cycles\) exceeded threshold \(100000000 cycles\) in last 200000000 cycles$
^WARNING: Number of errors: 1, skipped probes: 0$
