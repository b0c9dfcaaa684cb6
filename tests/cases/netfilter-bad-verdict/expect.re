netfilter verdict 3 is not NF_DROP \(0\) or NF_ACCEPT \(1\); the packet is accepted
^tried 4$
^WARNING: Number of errors: 4, skipped probes: 0$
