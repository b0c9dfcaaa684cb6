#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/all.sh - every test: setup, the Rust workspace tests (cargo test),
# the reference VM built alone (no C core), the module's W=1 build check, then the QEMU guest cases, on the
# installed Debian 6.1 kernel (1 and 2 vCPUs) and on bookworm-backports'
# 6.12 (fetched and unpacked under target/kernels/, not installed;
# STAPVM_SKIP_612=1 skips it). Runs them all and exits non-zero if any
# failed.
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
# The example scripts run on 2 vCPUs here (migrate.stp needs a second CPU
# to migrate to) and on 6.12, not again on 1 vCPU.
step guest env STAPVM_GUEST_EXAMPLES=0 tests/guest/run
# The same cases on 2 vCPUs (single-threaded TCG): concurrent hits,
# per-CPU rings merged, disarm racing handlers on the other CPU.
step guest-smp2 env STAPVM_GUEST_SMP=2 STAPVM_GUEST_NO_CARGO=1 \
	STAPVM_GUEST_OUT="$PWD/target/guest-smp2" tests/guest/run

guest_612() {
	local env
	env=$(tests/guest/fetch-kernel bookworm-backports) || return 1
	eval "$env"
	STAPVM_KDIR=$STAPVM_KDIR STAPVM_KERNEL=$STAPVM_KERNEL \
		STAPVM_KBUILD_OUT=$PWD/target/kbuild-check-6.12 tests/guest/kbuild-check || return 1
	STAPVM_KDIR=$STAPVM_KDIR STAPVM_KERNEL=$STAPVM_KERNEL \
		STAPVM_GUEST_OUT=$PWD/target/guest-6.12 STAPVM_GUEST_NO_CARGO=1 tests/guest/run
}
if [[ ${STAPVM_SKIP_612:-0} != 1 ]]; then
	step guest-6.12 guest_612
fi

if ((${#failed[@]})); then
	echo "all.sh: failed: ${failed[*]}"
	exit 1
fi
echo "all.sh: all steps passed"
