^counted 7, raw 7, bad 0$
