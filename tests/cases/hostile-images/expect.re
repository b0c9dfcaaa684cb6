^loader: 
^arg-in-timer: refused: EINVAL \(22\): .*ARG
^corpus-[A-Za-z0-9_.-]+-[0-9]+-[a-z-]+: refused: E[A-Z0-9]+ \([0-9]+\): 
^mut-[0-9]+-[a-z-]+: refused: E[A-Z0-9]+ \([0-9]+\): 
^mut-[0-9]+-[a-z-]+: ran: 
^oversized: refused: E2BIG \(7\): .*the cap is
^uninit-register: refused: EINVAL \(22\): .*read before it is written
^hostile images: ([2-9][0-9][0-9]|[1-9][0-9][0-9][0-9]+) checked, [0-9]+ refused, [1-9][0-9]* ran, 0 mismatched$
^hostile images: [0-9]+ s in the guest$
