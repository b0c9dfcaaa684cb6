# Keep one CPU busy in user space for a while (the samples' <user> line).
i=0
while [ $i -lt 100000 ]; do i=$((i + 1)); done
