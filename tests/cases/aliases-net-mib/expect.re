^ip InReceives=([4-9]|[1-9][0-9]+) OutRequests=([4-9]|[1-9][0-9]+) InDiscards=0$
^tcp ActiveOpens=2 PassiveOpens=1 AttemptFails=[1-9] EstabResets=[1-9]$
^tcp OutRsts=[1-9][0-9]* InSegs=([3-9]|[1-9][0-9]+) OutSegs=([3-9]|[1-9][0-9]+) RetransSegs=0$
^tcp CurrEstab=-?[0-9]+$
^linux ListenDrops=0 ListenOverflows=0$
