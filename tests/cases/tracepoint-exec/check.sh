# The tracepoint probe is gone: a third exec after the session prints
# nothing (the session output is closed), and rmmod (next) must succeed.
retval 1 >/dev/null
