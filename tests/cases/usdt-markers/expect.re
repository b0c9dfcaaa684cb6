^pid @USDT_PID@ tick 5 guarded 5$
^process\("/stapvm/bin/usdt"\)\.provider\("stapvm"\)\.mark\("guarded"\) 5$
