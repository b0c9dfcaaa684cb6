^ERROR: division by 0 near operator '%' at .*script\.stp:4:41$
^WARNING: Number of errors: 1, skipped probes: 0$
