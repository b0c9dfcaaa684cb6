optional probe point 'kernel\.trace\("no_such_tracepoint"\)\?' skipped: the kernel has no tracepoint matching 'no_such_tracepoint'
optional probe point 'kernel\.trace\("block:sched_switch"\)\?' skipped: the kernel has no tracepoint matching 'block:sched_switch'
^stapvm: probe point 'kernel\.trace\("sched:sched_process_\*"\)' matched ([4-9]|[1-9][0-9]) tracepoints$
^process events seen$
