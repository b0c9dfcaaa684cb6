# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# case-lib.sh - shell functions of the guest, for run-case and for the
# cases' workload.sh and check.sh: `. /stapvm/case-lib.sh` (tests/guest/run
# copies it there).

# alive PID: running (a zombie, already dead but not reaped, is not).
alive() {
	[ -r "/proc/$1/stat" ] && ! grep -q ') Z ' "/proc/$1/stat" 2>/dev/null
}

# wait_gone PID TENTHS: wait until PID has exited, at most TENTHS/10 s.
wait_gone() {
	n=0
	while alive "$1" && [ "$n" -lt "$2" ]; do
		sleep 0.1
		n=$((n + 1))
	done
	! alive "$1"
}

# getppid_until_gone PID TENTHS: getppid in a loop (`retval -1`) until PID
# has exited (at most TENTHS/10 s), then stops the loop; the status is the
# loop's (killed).
getppid_until_gone() {
	retval -1 &
	r=$!
	wait_gone "$1" "$2"
	kill $r
	wait $r
}

# connect_lo_closed N: brings lo up, then N TCP connects to a closed port
# on it (127.0.0.1:9: SYN out, RST back, the SYN dropped for want of a
# socket).
connect_lo_closed() {
	ip link set lo up 2>/dev/null
	i=0
	while [ $i -lt "$1" ]; do
		nc -w 1 127.0.0.1 9 </dev/null 2>/dev/null
		i=$((i + 1))
	done
}

# workload_mix PID TENTHS: while PID runs (at most about TENTHS/10 s), a
# round each tenth of a second of what the kernel tapsets and the
# examples probe: file reads and writes with fsync, fork/exec, a loopback
# TCP connect and UDP send, a signal to a child, getppid calls, open(2)
# itself (busybox uses openat), a sleep.
workload_mix() {
	ip link set lo up 2>/dev/null
	n=0
	f=${CASE_OUT:-/tmp}/mix.$$
	while alive "$1" && [ "$n" -lt "$2" ]; do
		cat /proc/version /proc/self/status >/dev/null
		echo "round $n" >"$f"
		dd if="$f" of="$f.copy" bs=512 count=1 conv=fsync 2>/dev/null
		ls / >/dev/null
		sh -c 'exit 0'
		nc -w 1 127.0.0.1 9 </dev/null >/dev/null 2>&1
		echo x | nc -u -w 1 127.0.0.1 9 >/dev/null 2>&1
		sleep 5 &
		kill -USR1 $! 2>/dev/null
		wait $! 2>/dev/null
		retval 7 >/dev/null 2>&1
		open2 1 /etc/passwd >/dev/null 2>&1
		sleep 0.1
		n=$((n + 1))
	done
	rm -f "$f" "$f.copy"
}
