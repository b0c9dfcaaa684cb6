^ERROR: kernel string copy fault at 0x0 \[man error::fault\] near identifier 'kernel_string' at .*script\.stp:6:24$
^WARNING: Number of errors: 1, skipped probes: 0$
