^pid_max written by sh: 40000 \(kernel address 1\)$
^pid_max written by sh: @OLD@ \(kernel address 1\)$
^writes 2$
