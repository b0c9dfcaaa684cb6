#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/all.sh - every test: setup, the Rust workspace tests (cargo test),
# the reference VM built alone (no C core), then the kernel matrix: the
# module's W=1 build against the headers of Debian's 6.1 (installed),
# 6.12 (bookworm-backports), 5.10 (bullseye) and 7.3 (trixie-backports)
# (the last three fetched and unpacked under target/kernels/, not
# installed; 5.10's and 7.3's built in a chroot of their release with its
# compiler, tests/guest/kbuild-root), and the QEMU guest cases on each:
# 6.1 on 1, 2 and 4 vCPUs (4: the smp-* exactness cases), 6.12, 5.10 and
# 7.3, every run loading the same .stpb files, compiled once
# (target/guest-stpb/); and the packages installed on a real Debian
# bookworm machine (tests/guest/debian). The guest runs go two at a time (single-threaded
# TCG: one host core each); STAPVM_GUEST_JOBS=N changes that. Runs every
# step and exits non-zero if any failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

failed=()
step() {	# step NAME COMMAND...
	local name=$1 t0=$SECONDS
	shift
	echo "=== $name"
	if "$@"; then
		echo "=== $name: ok ($((SECONDS - t0)) s)"
	else
		echo "=== $name: FAILED ($((SECONDS - t0)) s)"
		failed+=("$name")
	fi
}

step setup tests/setup.sh
step cargo-test cargo test --workspace
# The reference VM alone, where cargo enables only the features it asks
# for (vm-spec without `c-core`): it must build without the C core it
# checks (docs/architecture.md).
step refvm-independent cargo check -q -p vm-refvm
step kbuild-check tests/guest/kbuild-check

# ---- the other kernels: fetched once, W=1 build checked ---------------------
declare -A kenv=()
fetch() {	# fetch LABEL SUITE: kenv[LABEL] = fetch-kernel's three lines
	local env
	env=$(tests/guest/fetch-kernel "$2") || return 1
	kenv[$1]=$env
	(eval "$env" && export STAPVM_KDIR STAPVM_KERNEL STAPVM_KROOT &&
		STAPVM_KBUILD_OUT=$PWD/target/kbuild-check-$1 tests/guest/kbuild-check)
}
step kernel-6.12 fetch 6.12 bookworm-backports
step kernel-5.10 fetch 5.10 bullseye
step kernel-7.3 fetch 7.3 trixie-backports

# Every package, the module ones for each kernel of the matrix (vermagic
# checked); tests/guest/debian installs those of 6.1 and 6.12.
step packages packaging/build-packages host bookworm-backports bullseye trixie-backports
# stapvm-dkms on a machine with a compiler and headers (a chroot: builds,
# installs and purges the module, loads nothing).
step dkms-check tests/guest/dkms-check target/packages

# ---- guest runs, a few at a time ----------------------------------------
# One set of .stpb files for every run: the first run that needs a case
# compiles it, the others copy it (tests/guest/run, STAPVM_GUEST_STPB).
rm -rf target/guest-stpb
export STAPVM_GUEST_STPB=$PWD/target/guest-stpb
cargo build --release -q -p stapvm -p stapvm-tests --bins || failed+=(cargo-build-release)
export STAPVM_GUEST_NO_CARGO=1

guest_on() {	# guest_on LABEL [VAR=VALUE...] [-- CASE...]: a run on kernel LABEL
	local label=$1
	shift
	local vars=() cases=()
	while (($#)) && [[ $1 != -- ]]; do
		vars+=("$1")
		shift
	done
	[[ ${1:-} == -- ]] && shift
	cases=("$@")
	if [[ $label != 6.1 ]]; then
		[[ -n ${kenv[$label]:-} ]] || { echo "kernel $label was not fetched"; return 1; }
		eval "${kenv[$label]}"
		export STAPVM_KDIR STAPVM_KERNEL STAPVM_KROOT
	fi
	env "${vars[@]}" tests/guest/run "${cases[@]}"
}

# Longest first, so the last to start are the short ones.
jobs_list=(
	"guest-7.3|guest_on 7.3 STAPVM_GUEST_OUT=$PWD/target/guest-7.3"
	"guest-6.12|guest_on 6.12 STAPVM_GUEST_OUT=$PWD/target/guest-6.12"
	# The packages on a real Debian machine (systemd, no compiler), 6.1
	# with the boot tracer and 6.12.
	"debian|tests/guest/debian"
	# Concurrent hits, per-CPU rings merged, disarm racing handlers on
	# the other CPU; the examples run here (migrate.stp needs a second
	# CPU) and on the other kernels, not again on 1 vCPU.
	"guest-smp2|guest_on 6.1 STAPVM_GUEST_SMP=2 STAPVM_GUEST_OUT=$PWD/target/guest-smp2"
	"guest-5.10|guest_on 5.10 STAPVM_GUEST_SMP=2 STAPVM_GUEST_OUT=$PWD/target/guest-5.10"
	"guest|guest_on 6.1 STAPVM_GUEST_EXAMPLES=0 STAPVM_GUEST_OUT=$PWD/target/guest"
	# Four CPUs on one probe: the exactness cases.
	"guest-smp4|guest_on 6.1 STAPVM_GUEST_SMP=4 STAPVM_GUEST_RUNOK=0 STAPVM_GUEST_EXAMPLES=0 STAPVM_GUEST_OUT=$PWD/target/guest-smp4 -- smp-* stats-smp stat-arrays-smp stats-delete-smp"
)
[[ ${STAPVM_SKIP_612:-0} == 1 ]] && jobs_list=("${jobs_list[@]/guest-6.12|*/}")

max_jobs=${STAPVM_GUEST_JOBS:-2}
logs=target/all-logs
rm -rf "$logs"
mkdir -p "$logs"
declare -A running=() started=()
finish_one() {	# waits for one job; prints its log and verdict
	local pid name rc
	wait -n -p pid "${!running[@]}"
	rc=$?
	name=${running[$pid]}
	unset "running[$pid]"
	echo "=== $name"
	cat "$logs/$name.log"
	if ((rc == 0)); then
		echo "=== $name: ok ($((SECONDS - started[$name])) s)"
	else
		echo "=== $name: FAILED ($((SECONDS - started[$name])) s)"
		failed+=("$name")
	fi
}
for j in "${jobs_list[@]}"; do
	[[ -n $j ]] || continue
	name=${j%%|*}
	read -r -a cmd <<<"${j#*|}"
	while ((${#running[@]} >= max_jobs)); do finish_one; done
	echo "=== $name: started"
	started[$name]=$SECONDS
	"${cmd[@]}" >"$logs/$name.log" 2>&1 &
	running[$!]=$name
	# Let this run take the build lock before the next one asks.
	sleep 2
done
while ((${#running[@]})); do finish_one; done
# stapvm's initramfs-tools hook in a real mkinitramfs run (the guest runs
# built the CLI and 6.1's stapvm.ko it packs).
step initramfs-hook tests/initramfs-hook.sh

if ((${#failed[@]})); then
	echo "all.sh: failed: ${failed[*]}"
	exit 1
fi
echo "all.sh: all steps passed"
