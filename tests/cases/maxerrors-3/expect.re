^ERROR: division by 0 near operator '/'
^ERROR: division by 0 near operator '/'
^ERROR: division by 0 near operator '/'
^WARNING: Number of errors: 3, skipped probes: 0$
