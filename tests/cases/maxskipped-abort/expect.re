^ERROR: Skipped too many probes, check MAXSKIPPED or try again with stap -t for more details\.$
^WARNING: Number of errors: 0, skipped probes: [1-9][0-9]*$
