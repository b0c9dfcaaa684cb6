^ERROR: probe overhead \([0-9]+ cycles\) exceeded threshold \(500000000 cycles\) in last 1000000000 cycles$
^WARNING: Number of errors: 1, skipped probes: 0$
