^== m$
module 'nfsd' is not loaded
^status [1-9]
^== o$
optional probe point 'module\("nfsd"\)\.function\("nfsd_dispatch"\)\?' skipped: module 'nfsd' is not loaded
^began$
^status 0$
^== a$
^ERROR: probe point .kernel\.function\("nfsd_dispatch"\). cannot be resolved: the kernel has no function .nfsd_dispatch.
^status [1-9]
