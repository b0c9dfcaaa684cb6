# The timer runs on the CPU that armed it: call getppid on every CPU.
cpus=$(nproc)
c=0
while [ $c -lt "$cpus" ]; do
	taskset -c $c retval 3 >/dev/null
	c=$((c + 1))
done
