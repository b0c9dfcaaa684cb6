^dirty_writeback_interval written by sh: 700 \(kernel address 1\)$
^dirty_writeback_interval written by sh: @OLD@ \(kernel address 1\)$
^writes 2$
