^ [0-9]+ +run-case +read +[0-9]+ write +[0-9]+ running\.\.\.$
^   @WL_PID@ +(sh|exe) +read +[0-9]+ write +[0-9]+ run [0-9]+\.[0-9][0-9]s$
^     @TREE_PID@ +(sh|exe) +read +3 write +4 run [0-9]+\.[0-9][0-9]s$
^       @OPEN2_PID@ +open2 +read +3 write +0 run [0-9]\.[0-9][0-9]s$
^       [0-9]+ +tee +read +0 write +2 run [0-9]\.[0-9][0-9]s$
^       @INNER_PID@ +(sh|exe) +read +0 write +1 run [0-9]+\.[0-9][0-9]s$
^         [0-9]+ +cat +read +2 write +0 run [0-9]\.[0-9][0-9]s$
^       [0-9]+ +sleep +read +0 write +0 run 1\.[0-9][0-9]s$
^       @SLEEP_PID@ +sleep +read +2 write +1 running\.\.\.$
