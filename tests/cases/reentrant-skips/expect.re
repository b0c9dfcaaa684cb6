^end$
^timer\.ms\(1\): hits [0-9]+, skipped [1-9][0-9]*$
