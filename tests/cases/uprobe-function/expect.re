^pid @UCALLS_PID@ calls 7 args 21 rets @UCALLS_SUM@ nret 7 ctx 7$
^process\("/stapvm/bin/ucalls"\)\.function\("ucall_leaf"\)\.return 7$
