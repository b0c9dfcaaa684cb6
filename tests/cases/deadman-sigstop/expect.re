^hit$
^tick$
^ERROR: no consumer read the output for 10 s: the module disarmed every probe \(deadman\)$
