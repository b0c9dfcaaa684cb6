# stapvm doctor on a machine that can run stapvm: the module loaded, its
# device, BTF and kallsyms present; exit status 0 (no FAIL line).
stapvm doctor
