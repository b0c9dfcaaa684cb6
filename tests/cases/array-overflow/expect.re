^ERROR: Array overflow, check size limit \(10\) near .*script\.stp:4:[0-9]+$
^WARNING: Number of errors: 1, skipped probes: 0$
