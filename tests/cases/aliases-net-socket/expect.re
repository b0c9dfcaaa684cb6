^socket\.close n=5 sum=5 prot=TCP fam=INET state=UNCONNECTED type=STREAM$
^socket\.close\.return n=[5-9] sum=[5-9] socket\.close\.return$
^socket\.create n=4 sum=4 fam=INET type=STREAM prot=0 kern=0$
^socket\.create\.return n=4 sum=4 err=0$
^socket\.read_iter n=[1-9][0-9]* sum=[1-9][0-9]* prot=TCP fam=INET state=CONNECTED type=STREAM$
^socket\.read_iter\.return n=[1-9][0-9]* sum=2000 prot=TCP fam=INET state=CONNECTED type=STREAM$
^socket\.receive n=[3-9][0-9]* sum=4300 ok=1 flags=[A-Z_|]*$
^socket\.recvmsg n=[2-9][0-9]* sum=[1-9][0-9]* prot=TCP fam=INET state=CONNECTED type=STREAM$
^socket\.recvmsg\.return n=[2-9][0-9]* sum=2300 prot=TCP fam=INET state=CONNECTED type=STREAM$
^socket\.send n=[1-9] sum=(1000|3300) ok=1 flags=[A-Z_|]*$
^socket\.write_iter n=1 sum=1000 prot=TCP fam=INET state=CONNECTED type=STREAM$
^socket\.write_iter\.return n=1 sum=1000 prot=TCP fam=INET state=CONNECTED type=STREAM$
