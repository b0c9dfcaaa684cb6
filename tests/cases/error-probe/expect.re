^ERROR: division by 0 near operator '/' at .*script\.stp:5:[0-9]+$
^error one x=0$
^error two$
^WARNING: Number of errors: 1, skipped probes: 0$
