^  PID   UID DEV          XMIT_PK RECV_PK XMIT_KB RECV_KB COMMAND +$
^ *[0-9]+ +0 lo +[1-9][0-9]* +[0-9]+ +[0-9]+ +[0-9]+ nc +$
