#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/demo.sh [SCRIPT.stp] [-- WORKLOAD...] - runs a real script against a
# real kernel and prints its output.
#
# Default script: the seed syscall-open.stp, probing syscall.open and
# syscall.openat; default workload: the open2 helper (3 open(2) calls) and
# busybox cat (openat(2)).
#
# Where: on this machine if /dev/stapvm exists (stapvm.ko loaded by you;
# this script never loads a module here), otherwise in a QEMU guest booted
# with the Debian kernel (the tests/guest harness, one case named demo).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

script=
workload=()
while (($#)); do
	case $1 in
	--) shift; workload=("$@"); break ;;
	*) script=$1; shift ;;
	esac
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ -z $script ]]; then
	script=$tmp/syscall-open-openat.stp
	sed 's/^probe syscall\.open$/probe syscall.open, syscall.openat/' \
		"$ROOT/tests/cases/syscall-open/script.stp" >"$script"
fi
[[ -f $script ]] || { echo "demo: no such script: $script" >&2; exit 1; }

"$ROOT/tests/setup.sh" >&2

if [[ -e /dev/stapvm ]]; then
	# On this machine: the user loaded stapvm.ko.
	(cd "$ROOT" && cargo build --release -q -p stapvm)
	stapvm=$ROOT/target/release/stapvm
	gcc -static -O2 -o "$tmp/open2" "$ROOT/tests/guest/helpers/open2.c"
	"$stapvm" compile "$script" -o "$tmp/demo.stpb"
	"$stapvm" load --ready-file "$tmp/ready" "$tmp/demo.stpb" &
	pid=$!
	for _ in $(seq 100); do
		[[ -e $tmp/ready ]] && break
		sleep 0.1
	done
	if ((${#workload[@]})); then
		"${workload[@]}" >/dev/null
	else
		"$tmp/open2" 3 /etc/hostname >/dev/null
		cat /etc/hostname >/dev/null
	fi
	sleep 0.5
	kill -INT "$pid" 2>/dev/null || true
	wait "$pid"
	exit
fi

# In the guest: one case, printed in full.
mkdir -p "$tmp/cases/demo"
cp "$script" "$tmp/cases/demo/script.stp"
if ((${#workload[@]})); then
	printf '%q ' "${workload[@]}" >"$tmp/cases/demo/workload.sh"
	echo >>"$tmp/cases/demo/workload.sh"
else
	printf 'open2 3 /etc/motd >/dev/null\ncat /etc/motd >/dev/null\n' \
		>"$tmp/cases/demo/workload.sh"
fi
echo "demo: no /dev/stapvm here; running in a QEMU guest" >&2
rc=0
STAPVM_GUEST_CASES=$tmp/cases STAPVM_GUEST_OUT=$ROOT/target/demo \
	"$ROOT/tests/guest/run" demo >&2 || rc=$?
echo "--- output of $(basename "$script") in the guest:" >&2
cat "$ROOT/target/demo/results/demo/out" 2>/dev/null || true
if [[ -s $ROOT/target/demo/results/demo/err ]]; then
	echo "--- stapvm's standard error:" >&2
	cat "$ROOT/target/demo/results/demo/err" >&2
fi
exit "$rc"
