^ERROR: MAXACTION exceeded near keyword 'while' at .*script\.stp:7:9$
^ERROR: MAXACTION exceeded near keyword 'while' at .*script\.stp:7:9$
^WARNING: Number of errors: 2, skipped probes: 0$
