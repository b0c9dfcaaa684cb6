^/proc/version dfd=-100$
