^cpu 0 hits [1-9][0-9]*$
^without addr 0$
