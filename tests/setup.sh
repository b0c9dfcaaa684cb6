#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/setup.sh - installs what the tests need, if anything is missing
# (idempotent; a no-op on a ready machine): QEMU, a Debian amd64 kernel
# image and its headers (the guest kernel and the module's build tree),
# static busybox, libclang/clang (bindgen), cpio, gcc, make, the static
# libc (helpers), the kernel source tarball (checkpatch.pl for
# tests/guest/kbuild-check), perl (which runs it), <sys/sdt.h>, Debian's
# python3 (the guest's real USDT binary), mmdebstrap (build roots for
# other releases' kernels), groff and man-db (the man pages' test), and
# the rustfmt/clippy components.
set -euo pipefail

SUDO=
if [[ $(id -u) != 0 ]]; then
	SUDO=sudo
fi

missing=()
need_pkg() {	# need_pkg PACKAGE TEST...
	local pkg=$1
	shift
	"$@" >/dev/null 2>&1 || missing+=("$pkg")
}
have_glob() { compgen -G "$1" >/dev/null; }

need_pkg qemu-system-x86 command -v qemu-system-x86_64
need_pkg linux-image-amd64 have_glob '/boot/vmlinuz-*-amd64'
need_pkg linux-headers-amd64 have_glob '/usr/src/linux-headers-*-amd64/Makefile'
need_pkg busybox-static test -x /bin/busybox
need_pkg libclang-dev have_glob '/usr/lib/llvm-*/lib/libclang*.so*'
need_pkg clang command -v clang
need_pkg cpio command -v cpio
need_pkg gcc command -v gcc
need_pkg make command -v make
need_pkg libc6-dev test -f /usr/lib/x86_64-linux-gnu/libc.a
need_pkg binutils command -v strip
need_pkg linux-source have_glob '/usr/src/linux-source-*.tar.xz'
need_pkg perl command -v perl
need_pkg systemtap-sdt-dev test -f /usr/include/x86_64-linux-gnu/sys/sdt.h
# Debian's own interpreter for the USDT markers of a real binary
# (tests/guest/lib.sh copy_python: /usr/bin/python3 and its os.py).
need_pkg python3-minimal test -x /usr/bin/python3
need_pkg libpython3-stdlib have_glob '/usr/lib/python3.*/os.py'
# Build roots of other Debian releases for their kernels' headers
# (tests/guest/kbuild-root: bullseye's gcc-10, trixie's gcc-14).
need_pkg mmdebstrap command -v mmdebstrap
# Packages and the Debian guest (packaging/build-packages, tests/guest/debian):
# dpkg-shlibdeps, mke2fs -d and debugfs, lintian; a throwaway MOK key for the signing
# check of tests/guest/kbuild-check.
need_pkg dpkg-dev command -v dpkg-shlibdeps
need_pkg e2fsprogs command -v debugfs
need_pkg openssl command -v openssl
need_pkg lintian command -v lintian
need_pkg kmod command -v modinfo
# The man pages' test renders them (userspace/tests/man.rs: groff with
# tbl, and man -l).
need_pkg groff-base command -v groff
need_pkg man-db command -v man

# busybox must be the static build (the guest has no libc of its own).
if [[ -x /bin/busybox ]] && ldd /bin/busybox >/dev/null 2>&1; then
	missing+=(busybox-static)
fi

# Headers without the matching kernel image (or the reverse) are useless
# to the guest harness: make sure one pair exists.
pair=0
for d in /usr/src/linux-headers-*-amd64; do
	[[ -f /boot/vmlinuz-${d#/usr/src/linux-headers-} ]] && pair=1
done
((pair)) || missing+=(linux-image-amd64 linux-headers-amd64)

if ((${#missing[@]})); then
	mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
	echo "setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -q
	$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if command -v rustup >/dev/null 2>&1; then
	for c in rustfmt clippy; do
		rustup component list --installed 2>/dev/null | grep -q "^$c" ||
			rustup component add "$c"
	done
fi
echo "setup: ok"
