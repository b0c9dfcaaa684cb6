# The module glob's kprobe is armed on sunrpc's rpc_create; then a
# second busy in user space for the profile timer.
grep -q 'rpc_create' /sys/kernel/debug/kprobes/list && echo armed
i=0
while [ $i -lt 100000 ]; do i=$((i + 1)); done
sleep 1
