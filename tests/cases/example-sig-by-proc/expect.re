^Collecting data\.\.\. Type Ctrl-C to exit and display results$
^SENDER +RECEIVER +SIGNAL +COUNT$
^sh +sleep +SIGTERM +1$
