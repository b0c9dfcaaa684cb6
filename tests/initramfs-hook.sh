#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/initramfs-hook.sh - stapvm's initramfs-tools files
# (packaging/initramfs-tools/) in a real mkinitramfs run on the build host,
# without touching its /etc, /boot or kernel: a temporary configuration
# directory (mkinitramfs -d) holds the hook and the init-top script as the
# package installs them, the programs' directory, the CLI and stapvm.ko are
# given to the hook through its test variables (STAPVM_BOOT_DIR,
# STAPVM_BINARY, STAPVM_MODULE), and the image goes to a temporary file.
# Checks, in the unpacked image: the CLI and its libraries, stapvm.ko in
# modules.dep, both programs byte for byte, the init-top script in its
# ORDER; and that an image built without programs has no stapvm at all.
# Then shellcheck on both scripts, when it is installed.
#
# Run by hand or by tests/all.sh; needs mkinitramfs and unmkinitramfs
# (initramfs-tools), a kernel's /lib/modules/RELEASE (STAPVM_KVER, else the
# newest there), target/release/stapvm and a stapvm.ko built for RELEASE
# (STAPVM_KO, else target/kmod-build/RELEASE/stapvm.ko, which
# tests/guest/run builds). Whatever is missing: "SKIP: why", exit 0.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PKG=$ROOT/packaging/initramfs-tools

skip() {
	echo "SKIP: $*"
	exit 0
}
fail() {
	echo "FAIL: $*"
	exit 1
}

if command -v shellcheck >/dev/null; then
	shellcheck -s sh "$PKG/hooks/stapvm" "$PKG/scripts/init-top/stapvm" || fail "shellcheck"
	echo "ok: shellcheck"
fi

for c in mkinitramfs unmkinitramfs; do
	command -v "$c" >/dev/null || PATH=$PATH:/usr/sbin
	command -v "$c" >/dev/null || skip "no $c (initramfs-tools)"
done
KVER=${STAPVM_KVER:-$(find /lib/modules -mindepth 2 -maxdepth 2 -name modules.dep -printf '%h\n' 2>/dev/null |
	xargs -r -n1 basename | sort -V | tail -n 1)}
[[ -n $KVER && -f /lib/modules/$KVER/modules.dep ]] || skip "no kernel modules in /lib/modules"
STAPVM=$ROOT/target/release/stapvm
[[ -x $STAPVM ]] || skip "no $STAPVM (cargo build --release -p stapvm)"
KO=${STAPVM_KO:-$ROOT/target/kmod-build/$KVER/stapvm.ko}
[[ -f $KO ]] || skip "no stapvm.ko for $KVER ($KO; tests/guest/run builds it)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
conf=$tmp/conf
mkdir -p "$conf/hooks" "$conf/scripts/init-top" "$conf/conf.d" "$tmp/programs"
printf 'MODULES=list\nBUSYBOX=n\nCOMPRESS=gzip\nRUNSIZE=10%%\nFSTYPE=auto\n' >"$conf/initramfs.conf"
: >"$conf/modules"
install -m 0755 "$PKG/hooks/stapvm" "$conf/hooks/stapvm"
install -m 0755 "$PKG/scripts/init-top/stapvm" "$conf/scripts/init-top/stapvm"

# build IMAGE: mkinitramfs with the test configuration.
build() {
	STAPVM_BOOT_DIR=$tmp/programs STAPVM_BINARY=$STAPVM STAPVM_MODULE=$KO TMPDIR=$tmp \
		mkinitramfs -d "$conf" -o "$1" "$KVER" >"$tmp/mkinitramfs.log" 2>&1 ||
		fail "mkinitramfs: $(cat "$tmp/mkinitramfs.log")"
}

# Without programs the hook adds nothing.
build "$tmp/empty.img"
unmkinitramfs "$tmp/empty.img" "$tmp/empty"
[[ -z $(find "$tmp/empty" -name 'stapvm*' ! -path '*/scripts/init-top/stapvm') ]] ||
	fail "an image without programs has stapvm files: $(find "$tmp/empty" -name 'stapvm*')"
echo "ok: no programs, nothing added"

"$STAPVM" compile -w "$ROOT/docs/examples/boot-summary.stp" -o "$tmp/programs/boot-summary.stpb"
"$STAPVM" compile -w -e 'probe begin { println("hello from the initramfs") }' -o "$tmp/programs/hello.stpb"
build "$tmp/initrd.img"
unmkinitramfs "$tmp/initrd.img" "$tmp/x"
img=$tmp/x
[[ -d $tmp/x/main ]] && img=$tmp/x/main
[[ -x $img/usr/bin/stapvm ]] || fail "no /usr/bin/stapvm in the image"
cmp -s "$STAPVM" "$img/usr/bin/stapvm" || fail "/usr/bin/stapvm differs from $STAPVM"
while read -r lib; do
	[[ -e $img$lib || -e $img/usr$lib ]] || fail "library $lib of stapvm is not in the image"
done < <(ldd "$STAPVM" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
for p in boot-summary hello; do
	cmp -s "$tmp/programs/$p.stpb" "$img/etc/stapvm/boot/$p.stpb" || fail "/etc/stapvm/boot/$p.stpb missing or different"
done
ko=$(find "$img/usr/lib/modules/$KVER" "$img/lib/modules/$KVER" -name stapvm.ko 2>/dev/null | head -n 1)
[[ -n $ko ]] && cmp -s "$KO" "$ko" || fail "stapvm.ko missing or different"
grep -q 'stapvm\.ko:' "$img"/*lib/modules/"$KVER"/modules.dep || fail "stapvm.ko is not in modules.dep (modprobe would not find it)"
[[ -x $img/scripts/init-top/stapvm ]] || fail "no executable scripts/init-top/stapvm"
grep -q '/scripts/init-top/stapvm' "$img/scripts/init-top/ORDER" || fail "init-top's ORDER does not run stapvm"
[[ -x $img/sbin/modprobe || -x $img/usr/sbin/modprobe || -x $img/bin/modprobe || -x $img/usr/bin/modprobe ]] ||
	fail "no modprobe in the image"
echo "ok: the image has /usr/bin/stapvm and its libraries, stapvm.ko ($KVER, in modules.dep), both programs, init-top/stapvm in ORDER"
