^running 0$
^on this cpu yes$
^init sleeps yes$
