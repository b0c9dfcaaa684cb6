^dispatch prog=100003 version=4 proto=6 proc=[01] xid=nonzero client=127\.0\.0\.1:[0-9]+$
^dispatch.return 1$
