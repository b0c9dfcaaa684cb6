^switches 1 iowait 1 bad 0$
^loopback 1 ip_summed 1 bad 0$
