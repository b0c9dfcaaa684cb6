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
# retval_on_cpus N CALLS: N retval helpers making CALLS getppid(2) calls
# each, the i-th pinned to CPU i mod nproc (unpinned on one CPU), all at
# once; returns when every one has ended.
retval_on_cpus() {
	_n=$1 _calls=$2 _cpus=$(nproc) _i=0
	while [ "$_i" -lt "$_n" ]; do
		if [ "$_cpus" -gt 1 ]; then
			taskset -c $((_i % _cpus)) retval "$_calls" >/dev/null &
		else
			retval "$_calls" >/dev/null &
		fi
		_i=$((_i + 1))
	done
	wait
}

# records_accounted PATTERN TOTAL: in a check.sh, every line of the
# case's output is a whole record matching PATTERN (none torn or
# interleaved), there is at least one, and lines + the dropped records the
# summary reports == TOTAL (every hit accounted for).
records_accounted() {
	_n=$(grep -c . "$CASE_OUT/out")
	_bad=$(grep -vcE "$1" "$CASE_OUT/out")
	_dropped=$(sed -n 's/.*Number of dropped records: \([0-9]*\).*/\1/p' "$CASE_OUT/err")
	_dropped=${_dropped:-0}
	echo "lines: $_n, malformed: $_bad, dropped: $_dropped"
	[ "$_bad" = 0 ] && [ "$_n" -gt 0 ] && [ $((_n + _dropped)) = "$2" ]
}

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
# TCP connect and UDP send, an accepted TCP connection with data (netpair),
# a signal to a child, getppid calls, a dynamic program's malloc and free
# (mallocs), open(2) itself (busybox uses openat),
# a sleep, a direct 4 KiB write to a brd ram disk (loaded on the first
# call; tests/guest/lib.sh copies brd.ko).
workload_mix() {
	ip link set lo up 2>/dev/null
	# A brd ram disk for block I/O (ioblock.* examples), once per boot.
	[ -b /dev/ram0 ] || insmod /stapvm/modules/brd.ko rd_nr=1 rd_size=4096 2>/dev/null
	n=0
	f=${CASE_OUT:-/tmp}/mix.$$
	while alive "$1" && [ "$n" -lt "$2" ]; do
		# The quick calls first: many example runs last one second.
		open2 1 /etc/passwd >/dev/null 2>&1
		sleep 5 &
		kill -USR1 $! 2>/dev/null
		wait $! 2>/dev/null
		retval 7 >/dev/null 2>&1
		# A dynamic program: glibc's malloc and free (user-space examples).
		mallocs 2 >/dev/null 2>&1
		cat /proc/version /proc/self/status >/dev/null
		echo "round $n" >"$f"
		dd if="$f" of="$f.copy" bs=512 count=1 conv=fsync 2>/dev/null
		[ -b /dev/ram0 ] && dd if=/dev/zero of=/dev/ram0 bs=4096 count=1 oflag=direct 2>/dev/null
		ls / >/dev/null
		sh -c 'exit 0'
		nc -w 1 127.0.0.1 9 </dev/null >/dev/null 2>&1
		echo x | nc -u -w 1 127.0.0.1 9 >/dev/null 2>&1
		# An accepted loopback connection with data (netpair.c).
		netpair tcp 5860 64 >/dev/null 2>&1
		sleep 0.1
		n=$((n + 1))
	done
	rm -f "$f" "$f.copy"
}

# workload_examples: once, beside workload_mix, the kernel paths of the
# example scripts that workload_mix does not reach: futexes, System V
# semaphores, reads of DMI attributes (sys_dmi_field_show, one of the few
# `sys_*` functions left now that system calls are `__x64_sys_*`:
# fntimes.stp), a read of vm_dirty_ratio (hw_watch_sym.stp), hugetlb faults and copy-on-write, a THP collapse, a TCP
# retransmission, native AIO (kmix.c), and requests inserted into a block I/O scheduler
# (a loop device on mq-deadline: brd is bio-based, so it has no requests).
# What the kernel lacks is skipped.
workload_examples() {
	# First, in the background: the retransmission comes one RTO (~200
	# ms) after the write, inside the examples' one-second runs, while
	# the rest goes on.
	kmix retrans &
	kmix aio
	kmix ipc
	cat /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/modalias >/dev/null 2>&1
	# hw_watch_sym.stp's kernel.data("vm_dirty_ratio").rw: the sysctl
	# handler reads the variable.
	cat /proc/sys/vm/dirty_ratio >/dev/null
	echo 4 >/proc/sys/vm/nr_hugepages 2>/dev/null
	kmix huge
	loop_dev
	echo mq-deadline >/sys/block/loop0/queue/scheduler 2>/dev/null
	dd if=/dev/zero of=/dev/loop0 bs=4096 count=16 oflag=direct 2>/dev/null
	dd if=/dev/loop0 of=/dev/null bs=4096 count=16 iflag=direct 2>/dev/null
	memcg_reclaim
	wait
}

# loop_dev: /dev/loop0 attached to a 4 MiB file in /tmp (loop.ko from the
# initramfs if the kernel has it as a module); a no-op once it is.
loop_dev() {
	if [ ! -b /dev/loop0 ] && [ -f /stapvm/modules/loop.ko ]; then
		insmod /stapvm/modules/loop.ko 2>/dev/null
	fi
	if [ -b /dev/loop0 ] && ! losetup /dev/loop0 >/dev/null 2>&1; then
		dd if=/dev/zero of=/tmp/loop.img bs=1M count=4 2>/dev/null
		losetup /dev/loop0 /tmp/loop.img 2>/dev/null
	fi
}

# memcg_reclaim: page reclaim without pressure on the guest: a buffered
# read of /dev/loop0 (its page cache dropped first) by a shell in a memory
# cgroup whose memory.high is 1 MiB, so the kernel reclaims the cgroup's
# cache as it grows (mm_vmscan_memcg_reclaim_*, mm_vmscan_lru_shrink_inactive:
# mmreclaim.stp). memory.high throttles and reclaims, it never OOM-kills.
# Skipped where the kernel has no cgroup2 memory controller.
memcg_reclaim() {
	local cg=/sys/fs/cgroup
	[ -f $cg/cgroup.controllers ] || mount -t cgroup2 none $cg 2>/dev/null || return 0
	echo +memory >$cg/cgroup.subtree_control 2>/dev/null
	mkdir -p $cg/stapvm-reclaim 2>/dev/null
	[ -f $cg/stapvm-reclaim/memory.high ] || return 0
	echo 1M >$cg/stapvm-reclaim/memory.high
	echo 1 >/proc/sys/vm/drop_caches
	sh -c "echo \$\$ >$cg/stapvm-reclaim/cgroup.procs &&
		dd if=/dev/loop0 of=/dev/null bs=64k 2>/dev/null"
	rmdir $cg/stapvm-reclaim 2>/dev/null
}

# nfs_mount: an NFSv4.1 server on a tmpfs export (/srv, holding f =
# "hello-nfs" and gone) and a loopback mount of it on /mnt/n, without nfs-utils:
# the export caches are filled the way rpc.mountd would (one line per
# entry into /proc/net/rpc/*/channel), grace is ended at once. Needs the
# sunrpc, nfsd and nfsv4 modules (a case's `kmods`). Nothing when /mnt/n
# is mounted already.
nfs_mount() {
	grep -q ' /mnt/n ' /proc/mounts && return 0
	ip link set lo up 2>/dev/null
	mkdir -p /srv /mnt/n
	grep -q ' /srv ' /proc/mounts || mount -t tmpfs tmpfs /srv
	echo hello-nfs >/srv/f
	echo bye >/srv/gone
	grep -q ' /proc/fs/nfsd ' /proc/mounts || mount -t nfsd nfsd /proc/fs/nfsd
	echo "-2" >/proc/fs/nfsd/versions 2>/dev/null
	echo "-3 +4 +4.1" >/proc/fs/nfsd/versions 2>/dev/null
	echo 10 >/proc/fs/nfsd/nfsv4leasetime 2>/dev/null
	echo 10 >/proc/fs/nfsd/nfsv4gracetime 2>/dev/null
	# Newer kernels (7.3 here) start no threads without a listener (EIO)
	# where earlier ones made and registered their default listeners:
	# then a TCP listener first.
	if ! echo 2 >/proc/fs/nfsd/threads 2>/dev/null; then
		echo "tcp 2049" >/proc/fs/nfsd/portlist 2>/dev/null
		echo 2 >/proc/fs/nfsd/threads || echo "nfsd did not start"
	fi
	echo Y >/proc/fs/nfsd/v4_end_grace 2>/dev/null
	# flags 9218: NFSEXP_NOSUBTREECHECK | NFSEXP_FSID | NFSEXP_INSECURE_PORT.
	printf 'nfsd 127.0.0.1 2147483647 anyclient\n' >/proc/net/rpc/auth.unix.ip/channel
	printf 'anyclient /srv 2147483647 9218 65534 65534 0\n' >/proc/net/rpc/nfsd.export/channel
	printf 'anyclient 1 \\x00000000 2147483647 /srv\n' >/proc/net/rpc/nfsd.fh/channel
	timeout 60 mount -t nfs4 -o vers=4.1,addr=127.0.0.1,clientaddr=127.0.0.1 \
		127.0.0.1:/ /mnt/n || echo "mount failed"
}

# ext4_mount: a 1 MiB ext2 file system (busybox mke2fs) on /dev/loop1,
# mounted with the ext4 driver on /mnt/e (needs the ext4 module: a case's
# `kmods`). Nothing when /mnt/e is mounted already.
ext4_mount() {
	grep -q ' /mnt/e ' /proc/mounts && return 0
	loop_dev
	mkdir -p /mnt/e
	dd if=/dev/zero of=/tmp/e.img bs=1024 count=1024 2>/dev/null
	mke2fs -F /tmp/e.img >/dev/null 2>&1 || echo "mke2fs failed"
	losetup /dev/loop1 /tmp/e.img 2>/dev/null
	mount -t ext4 /dev/loop1 /mnt/e || echo "ext4 mount failed"
}

# ext4_fill: writes to the ext4 mount (ext4_mount) until it is full
# (ENOSPC: ext4_should_retry_alloc), then frees the space.
ext4_fill() {
	dd if=/dev/zero of=/mnt/e/fill bs=4096 2>/dev/null
	rm -f /mnt/e/fill
}

# nfs_traffic: file operations on the NFS mount (nfs_mount): a remove, a
# read, a create and write, a rename, a remove, a create (of the file the
# next call removes first).
nfs_traffic() {
	# The remove first (a one-second run ends before a slow write).
	rm -f /mnt/n/gone
	dd if=/mnt/n/f 2>/dev/null
	echo written-over-nfs >/mnt/n/g
	sync
	mv /mnt/n/g /mnt/n/h
	rm /mnt/n/h
	echo bye >/mnt/n/gone
}
