# Busy in user space on one CPU while the other idles in the kernel.
i=0
while [ $i -lt 100000 ]; do i=$((i + 1)); done
