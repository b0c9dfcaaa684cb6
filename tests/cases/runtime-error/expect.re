^ERROR: division by 0 near operator '/' at .*script\.stp:5:[0-9]+$
^WARNING: Number of errors: 1, skipped probes: 0$
