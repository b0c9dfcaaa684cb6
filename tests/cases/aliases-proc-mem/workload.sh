# (compile-args: MAXSKIPPED raised, since the allocator, fault and irq
# aliases fire inside one another's handlers, whose hits are skipped.)
# A static helper exec'd (mmap of its segments, page faults, allocations)
# and a second of kernel work (softirqs, workqueue items).
retval 1 >/dev/null
sleep 1
