^status: state=2 exit=1 hits=6 errors=0 skipped=0 dropped=7 armed=0$
