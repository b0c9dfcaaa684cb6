^netdev\.change_mtu n=2 sum=2=n lo 65000 -> 65536$
^netdev\.get_stats n=[1-9][0-9]* sum=[0-9]+=n lo$
^netdev\.hard_transmit n=[1-9][0-9]* sum=[0-9]+=n lo proto=800$
^netdev\.ioctl n=[1-9][0-9]* sum=[0-9]+=n cmd=0x89 arg="lo"$
^netdev\.receive n=[1-9][0-9]* sum=[0-9]+=n lo proto=800$
^netdev\.rx n=[1-9][0-9]* sum=[0-9]+=n lo proto=800$
^netdev\.transmit n=[1-9][0-9]* sum=[0-9]+=n lo proto=800$
