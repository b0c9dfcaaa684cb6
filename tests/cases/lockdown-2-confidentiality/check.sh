# Programs that read kernel memory are refused under confidentiality
# lockdown, each with a message naming lockdown, before anything is armed.
fail=0
grep -q '\[confidentiality\]' lockdown.state || { echo "lockdown: $(cat lockdown.state)"; fail=1; }
armed() { grep -c . /sys/kernel/debug/kprobes/list; }
before=$(armed)

# refused NAME SCRIPT: stapvm -e SCRIPT must fail, naming lockdown.
refused() {
	stapvm run -T 2 -e "$2" >"$1.out" 2>"$1.err"
	st=$?
	if [ "$st" = 0 ] || ! grep -q 'locked down (confidentiality)' "$1.err" ||
		! grep -q 'kernel_lockdown(7) at .*:[0-9][0-9]*:[0-9][0-9]*' "$1.err"; then
		echo "$1: status $st, stderr:"; cat "$1.err"; fail=1
	elif [ "$(armed)" != "$before" ]; then
		echo "$1: probes armed:"; cat /sys/kernel/debug/kprobes/list; fail=1
	else
		echo "$1: refused: $(grep -o 'insn [0-9]*: [A-Z_]*).* at [^ ]*' "$1.err")"
	fi
}
refused kernel-long 'probe kernel.function("__x64_sys_getppid") { printf("%d\n", kernel_long(task_current())) }'
refused kernel-string 'probe timer.ms(10) { println(kernel_string(task_current())); exit() }'
refused cast 'probe begin { printf("%d\n", @cast(task_current(), "task_struct", "kernel")->tgid); exit() }'
refused pretty 'probe begin { println(@cast(task_current(), "task_struct", "kernel")->se$); exit() }'
refused in-function 'function f(a) { return kernel_int(a) } probe begin { printf("%d\n", f(task_current())); exit() }'

# What stays allowed: registers and context, user memory.
stapvm run -T 2 -e 'probe begin { printf("pid %d ok\n", pid() > 0); exit() }' >allowed.out 2>allowed.err
grep -q 'pid 1 ok' allowed.out || { echo "a program without kernel reads:"; cat allowed.out allowed.err; fail=1; }
exit $fail
