^count 3 label hello n 3$
^begin: hits 1, skipped 0$
^timer\.ms\(10\): hits 3, skipped 0$
^end: hits 1, skipped 0$
