^ERROR: MAXNESTING exceeded near identifier 'f' at .*script\.stp:4:24$
^WARNING: Number of errors: 1, skipped probes: 0$
