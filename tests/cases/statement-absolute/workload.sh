# kernel.statement(ADDR).absolute at the running kernel's address of
# __x64_sys_getppid (read here: KASLR moves it every boot): the loader
# finds the symbol holding it, the kprobe fires on the 5 calls retval
# makes (the shell that execs it makes one more, for $PPID: only
# retval's are counted), and pp() names the address. One byte further is not an
# instruction boundary: the kernel refuses the kprobe and the load fails,
# naming the point.
addr=$(grep ' __x64_sys_getppid$' /proc/kallsyms | cut -d' ' -f1)
echo "address found: ${addr:+yes}"
stapvm run -c 'retval 5' -e "global n, where
probe kernel.statement(0x$addr).absolute { if (execname() == \"retval\") { n++; where = pp() } }
probe end { printf(\"hits %d at %s\\n\", n, where) }" 2>&1 | grep -v '^RETVAL' |
	sed "s/0x$addr/ADDR/"
next=$(printf '%x' $((0x$addr + 1)))
stapvm run -e "probe kprobe.statement(0x$next).absolute { } probe begin { }" 2>&1 |
	sed "s/0x$next/ADDR+1/"
