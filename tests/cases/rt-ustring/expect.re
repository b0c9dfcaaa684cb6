^ERROR: user string copy fault -14 at 0xffffffffffffffff \[man error::fault\] near identifier 'user_string' at .*script\.stp:3:30$
^WARNING: Number of errors: 1, skipped probes: 0$
