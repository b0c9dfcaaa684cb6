^Monitoring for dropped packets$
^[0-9]+ packets dropped at [A-Za-z0-9_.]+\+0x[0-9a-f]+/0x[0-9a-f]+ \[kernel\] for reason: [1-9][0-9]*$
^Stopping dropped packet monitor$
