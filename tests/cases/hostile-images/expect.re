^loader: 
^arg-in-timer: refused: EINVAL \(22\): .*ARG
^oversized: refused: E2BIG \(7\): .*the cap is
^uninit-register: refused: EINVAL \(22\): .*read before it is written
^hostile images: [1-9][0-9]* checked, 0 mismatched$
