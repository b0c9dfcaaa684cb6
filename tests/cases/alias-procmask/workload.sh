# A shell that waits for a child blocks and unblocks signals around it.
sh -c 'sleep 0.1 & wait'
