^tcp\.disconnect n=1 sum=1 fam=2 flags=[0-9]+ 127\.0\.0\.1:@TCP_CPORT@ -> 127\.0\.0\.1:5801$
^tcp\.disconnect\.return n=1 sum=1 tcp\.disconnect ret=0$
^tcp\.ipv4\.receive n=1 sum=1 fam=2 proto=6 127\.0\.0\.1:@TCP_CPORT@ -> 127\.0\.0\.1:5801 urg=0 psh=0 rst=0 fin=0 seq=1 ackseq=0 window=1 hdrs=20$
^tcp\.ipv4\.setsockopt n=2 sum=2 fam=10 level=41 26 UNDEF_SOCKOPT\(26\) len=4$
^tcp\.ipv6\.setsockopt n=1 sum=1 fam=10 level=41 26 IPV6_V6ONLY len=4$
^tcp\.receive n=[3-9][0-9]* sum=[0-9]+ tcp\.ipv4\.receive$
^tcp\.recvmsg n=[1-9][0-9]* sum=[0-9]+ fam=2 127\.0\.0\.1:5801 -> 127\.0\.0\.1:@TCP_CPORT@$
^tcp\.recvmsg\.return n=[1-9][0-9]* sum=2000 fam=2 127\.0\.0\.1:5801 -> 127\.0\.0\.1:@TCP_CPORT@$
^tcp\.sendmsg n=2 sum=2000 fam=2 sock=1$
^tcp\.sendmsg\.return n=2 sum=2000 tcp\.sendmsg$
^tcp\.setsockopt n=3 sum=3 IPV6_V6ONLY$
^tcp\.setsockopt\.return n=3 sum=3 tcp\.ipv4\.setsockopt$
^udp\.disconnect n=1 sum=1 fam=2 127\.0\.0\.1:@UDP_SPORT@ -> 127\.0\.0\.1:5802 sock=1$
^udp\.disconnect\.return n=1 sum=1 fam=2 [0-9.]+:[0-9]+ -> 0\.0\.0\.0:0$
^udp\.recvmsg n=1 sum=65536 fam=2 127\.0\.0\.1:5802 -> 0\.0\.0\.0:0 sock=1$
^udp\.recvmsg\.return n=1 sum=300 fam=2 127\.0\.0\.1:5802 -> 0\.0\.0\.0:0$
^udp\.sendmsg n=1 sum=300 fam=2 127\.0\.0\.1:@UDP_SPORT@ -> 127\.0\.0\.1:5802 sock=1$
^udp\.sendmsg\.return n=1 sum=300 fam=2 127\.0\.0\.1:@UDP_SPORT@ -> 127\.0\.0\.1:5802$
