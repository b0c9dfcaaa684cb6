division by 0
^end$
