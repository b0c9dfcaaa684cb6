# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# lib.sh - host-side pieces of the QEMU guest harness, sourced by
# tests/guest/run, tests/guest/kbuild-check and tests/demo.sh: pick the
# Debian kernel and headers, build the module, the CLI and the static
# helpers, lay out and pack an initramfs, boot it under TCG.
#
# Nothing here loads a module into the host kernel: stapvm.ko is only ever
# insmod'ed by the guest's /init.

STAPVM_ROOT=${STAPVM_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
GUEST_DIR=$STAPVM_ROOT/tests/guest
MARK='@@STAPVM@@'

log() { printf '[guest %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# debian_mirror: prints the archive URI. Among the configured binary
# (`deb`) sources of component main, as `apt-get indextargets` lists them
# (apt's parser of both formats, with Enabled: no and options handled),
# the one whose path is the `debian` archive (`.../debian/`: not
# debian-security, debian-ports ...); failing that, the first that serves
# no `*-security` suite.
debian_mirror() {
	if [[ -n ${STAPVM_DEBIAN_MIRROR:-} ]]; then
		echo "${STAPVM_DEBIAN_MIRROR%/}"
		return
	fi
	local targets uri
	targets=$(apt-get indextargets --no-release-info \
		--format '$(TARGET_OF) $(COMPONENT) $(REPO_URI) $(RELEASE)' 2>/dev/null |
		awk '$1 == "deb" && $2 == "main" { print $3, $4 }') ||
		die "apt-get indextargets failed: set STAPVM_DEBIAN_MIRROR"
	uri=$(awk '$1 ~ /\/debian\/?$/ { print $1; exit }' <<<"$targets")
	[[ -n $uri ]] || uri=$(awk '$2 !~ /-security$/ { print $1; exit }' <<<"$targets")
	[[ -n $uri ]] ||
		die "no Debian archive for main in the apt sources: set STAPVM_DEBIAN_MIRROR"
	echo "${uri%/}"
}

# debian_sources RELEASE: one `deb URI SUITE main` line per binary source
# of component main in the machine's apt configuration whose suite is
# RELEASE or RELEASE-* (updates, security: a kernel of the host may come
# from there), as `apt-get indextargets` lists them; at least `deb
# $(debian_mirror) RELEASE main`. For mmdebstrap roots of that release.
debian_sources() {
	local rel=$1 lines
	# shellcheck disable=SC2016 # apt's format, not the shell's
	lines=$(apt-get indextargets --no-release-info \
		--format '$(TARGET_OF) $(COMPONENT) $(REPO_URI) $(RELEASE)' 2>/dev/null |
		awk -v r="$rel" '$1 == "deb" && $2 == "main" && ($4 == r || index($4, r "-") == 1) {
			print "deb " $3 " " $4 " main" }' | sort -u)
	grep -q " $rel main\$" <<<"$lines" || lines+=$'\n'"deb $(debian_mirror) $rel main"
	sed '/^$/d' <<<"$lines"
}

# The newest Debian amd64 headers that have a matching kernel image in
# /boot; sets KVER, KNUM, KDIR, KERNEL and KROOT. STAPVM_KVER picks another
# version; STAPVM_KDIR plus STAPVM_KERNEL name a build tree and a kernel
# image anywhere (e.g. packages unpacked with dpkg -x, not installed),
# and STAPVM_KROOT the chroot that builds modules for it (fetch-kernel).
pick_kernel() {
	local d v
	KROOT=${STAPVM_KROOT:-}
	if [[ -n ${STAPVM_KDIR:-} && -n ${STAPVM_KERNEL:-} ]]; then
		KDIR=$STAPVM_KDIR
		KERNEL=$STAPVM_KERNEL
		# The release uname -r shows (and the modules' directory):
		# kernel.release is the upstream version on some (5.10's 5.10.223
		# for 5.10.0-32-amd64).
		KVER=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
			"$KDIR/include/generated/utsrelease.h" 2>/dev/null)
		[[ -n $KVER ]] || die "$KDIR has no include/generated/utsrelease.h"
		kernel_number
		return
	fi
	KVER=${STAPVM_KVER:-}
	if [[ -z $KVER ]]; then
		for d in $(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V -r); do
			v=${d#/usr/src/linux-headers-}
			if [[ -f /boot/vmlinuz-$v ]]; then
				KVER=$v
				break
			fi
		done
	fi
	[[ -n $KVER ]] || die "no /usr/src/linux-headers-*-amd64 with a /boot/vmlinuz-* (run tests/setup.sh)"
	KDIR=/usr/src/linux-headers-$KVER
	KERNEL=/boot/vmlinuz-$KVER
	[[ -d $KDIR && -f $KERNEL ]] || die "missing $KDIR or $KERNEL"
	[[ -r $KERNEL ]] || die "$KERNEL is not readable"
	kernel_number
}

# kernel_number: KNUM, the upstream version of $KDIR (6.1.192 for Debian's
# 6.1.0-57-amd64, 7.3.4 for 7.3.4+deb13-amd64), for tests/guest/run's
# `needs kernel` rules.
kernel_number() {
	KNUM=$(sed 's/[-+].*//' "$KDIR/include/config/kernel.release" 2>/dev/null)
	[[ -n $KNUM ]] || KNUM=${KVER%%[-+]*}
}

# kmake ARGS...: make, for a build against $KDIR: on the host, or when
# $KROOT is set, inside that chroot (tests/guest/kbuild-root), with the
# repository and the unpacked kernel tree bind-mounted at their own paths
# in a private mount namespace (nothing stays mounted afterwards).
kmake() {
	if [[ -z ${KROOT:-} ]]; then
		make "$@"
		return
	fi
	local tree
	tree=$(realpath "$KDIR/../../..")
	unshare --mount --propagation private -- /bin/sh -c '
		root=$1 repo=$2 tree=$3
		shift 3
		for d in "$repo" "$tree"; do
			mkdir -p "$root$d" && mount --bind "$d" "$root$d" || exit 1
		done
		mount --bind /dev "$root/dev" && mount -t proc proc "$root/proc" || exit 1
		exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/ LC_ALL=C.UTF-8 make "$@"' sh "$KROOT" "$STAPVM_ROOT" "$tree" "$@"
}

# kbuild_btf_args: make arguments that skip module BTF when the build
# environment has no pahole (kernels with module BTF, 6.12 on, call it).
kbuild_btf_args() {
	if [[ -n ${KROOT:-} ]]; then
		[[ -x $KROOT/usr/bin/pahole ]] && return
	else
		command -v pahole >/dev/null 2>&1 && return
	fi
	echo CONFIG_DEBUG_INFO_BTF_MODULES=
}

# build_module [extra make args...]: stapvm.ko against $KDIR, built in
# target/kmod-build/$KVER/ ($KMOD_BUILD_BASE/$KVER/ when set: inside the
# repository, which a build root sees) (a copy of the module's sources and the ABI
# headers, the layout of `make -C kmod dkms-tree`, copied with their
# times so make rebuilds only what changed); sets KO to its path. One
# directory per kernel: runs for several kernels may build at once.
# Where the kernel build has its module signing key (a kernel built here,
# tests/guest/checking-kernel: Debian's keys are not in their headers), KO
# is a copy signed with it (signed/stapvm.ko) and KO_UNSIGNED the module as
# built; else KO_UNSIGNED is empty.
build_module() {
	local btf dir=${KMOD_BUILD_BASE:-$STAPVM_ROOT/target/kmod-build}/$KVER
	btf=$(kbuild_btf_args)
	[[ -n $btf ]] && set -- "$@" "$btf"
	mkdir -p "$dir/core" "$dir/include/stapvm"
	cp -p "$STAPVM_ROOT"/kmod/{Kbuild,Makefile,dkms.conf} "$STAPVM_ROOT"/kmod/*.[ch] "$dir/"
	cp -p "$STAPVM_ROOT"/kmod/core/*.[ch] "$dir/core/"
	cp -p "$STAPVM_ROOT"/vm-spec/include/stapvm/*.h "$dir/include/stapvm/"
	kmake -s -C "$KDIR" M="$dir" "$@" modules >&2 || die "module build failed"
	KO=$dir/stapvm.ko
	KO_UNSIGNED=
	[[ -f $KO ]] || die "$KO not built"
	local key=$KDIR/certs/signing_key.pem cert=$KDIR/certs/signing_key.x509 hash
	if [[ -f $key && -f $cert && -x $KDIR/scripts/sign-file ]]; then
		hash=$(sed -n 's/^CONFIG_MODULE_SIG_HASH="\(.*\)"$/\1/p' "$KDIR/.config")
		mkdir -p "$dir/signed"
		cp "$KO" "$dir/signed/stapvm.ko"
		"$KDIR/scripts/sign-file" "${hash:-sha256}" "$key" "$cert" "$dir/signed/stapvm.ko" ||
			die "signing $KO failed"
		KO_UNSIGNED=$KO
		KO=$dir/signed/stapvm.ko
	fi
}

# The stapvm CLI and gen-hostile, release build; sets STAPVM_BIN.
# STAPVM_GUEST_NO_CARGO=1 uses the binaries already built.
build_cli() {
	if [[ ${STAPVM_GUEST_NO_CARGO:-0} != 1 ]]; then
		(cd "$STAPVM_ROOT" && cargo build --release -q -p stapvm -p stapvm-tests --bins) >&2 ||
			die "cargo build failed"
	fi
	STAPVM_BIN=$STAPVM_ROOT/target/release/stapvm
	[[ -x $STAPVM_BIN ]] || die "$STAPVM_BIN not built"
}

# build_helpers OUTDIR: the helpers of tests/guest/helpers/*.c, static,
# except those whose source has the line `// guest-build: dynamic`: they
# link against the system's shared glibc (the guest gets the libraries
# the CLI needs, glibc among them; copy_with_libs), for probes in
# libc.so.6 itself. A helper's own compiler flags, if any, on a
# `// build-flags: ...` line.
build_helpers() {
	local out=$1 c link flags
	mkdir -p "$out"
	for c in "$GUEST_DIR"/helpers/*.c; do
		link=(-static)
		grep -qx '// guest-build: dynamic' "$c" && link=()
		read -r -a flags <<<"$(sed -n 's|^// build-flags: ||p' "$c" | head -n 1)"
		gcc "${link[@]}" -O2 -Wall -Wextra -Werror "${flags[@]}" \
			-I"$STAPVM_ROOT/vm-spec/include" \
			-o "$out/$(basename "$c" .c)" "$c" >&2 ||
			die "helper $c failed to build"
	done
}

# copy_python ROOT: the system's python3 as Debian ships it (not
# stripped: its USDT notes stay), at its own path with a python3 link
# beside it, its shared libraries, and the part of its standard library
# that `python3 -S` needs to start (os.py, the prefix's landmark, and the
# codecs of encodings/), for the USDT cases of a real interpreter. Without
# a Debian python3 on the host nothing is copied and those cases fail.
copy_python() {
	local root=$1 py ver lib
	# Debian's (the package python3's link), not one a user installed.
	py=$(readlink -f /usr/bin/python3) || return 0
	[[ -x $py && $(basename "$py") == python3.* ]] || return 0
	ver=$(basename "$py")
	mkdir -p "$root/usr/bin"
	cp "$py" "$root/usr/bin/$ver"
	ln -sf "$ver" "$root/usr/bin/python3"
	for lib in $(ldd "$py" 2>/dev/null | grep -o '/[^ ]*' | sort -u); do
		mkdir -p "$root/$(dirname "$lib")"
		cp -L "$lib" "$root/$lib"
	done
	mkdir -p "$root/usr/lib/$ver"
	cp /usr/lib/"$ver"/os.py "$root/usr/lib/$ver/"
	mkdir -p "$root/usr/lib/$ver/lib-dynload" # the exec prefix's landmark
	cp -r /usr/lib/"$ver"/encodings "$root/usr/lib/$ver/"
	rm -rf "$root/usr/lib/$ver/encodings/__pycache__"
}

# build_testmods ROOT: the test modules of tests/guest/testmod/ (their
# Kbuild), built against $KDIR in $OUT/testmod-build/ (the source tree
# stays clean; one per run), into ROOT/stapvm/testmod/ with their sources (for the
# cases' checks), and as debuginfo below ROOT/stapvm/debug (a module
# built with the kernel's flags keeps its DWARF), for statement probes.
build_testmods() {
	local root=$1 dir=$OUT/testmod-build
	rm -rf "$dir"
	mkdir -p "$dir" "$root/stapvm/testmod" "$root/stapvm/debug/lib/modules/$KVER/extra"
	cp "$GUEST_DIR"/testmod/Kbuild "$GUEST_DIR"/testmod/*.c "$dir/"
	local extra=()
	mapfile -t extra < <(kbuild_btf_args)
	kmake -s -C "$KDIR" M="$dir" "${extra[@]}" modules >&2 || die "test module build failed"
	cp "$dir"/*.ko "$GUEST_DIR"/testmod/*.c "$root/stapvm/testmod/"
	cp "$dir"/*.ko "$root/stapvm/debug/lib/modules/$KVER/extra/"
}

# copy_with_libs BIN ROOT DESTDIR: BIN (stripped) plus the shared
# libraries ldd lists, at their own paths under ROOT.
copy_with_libs() {
	local bin=$1 root=$2 dest=$3 lib
	mkdir -p "$root/$dest"
	strip -o "$root/$dest/$(basename "$bin")" "$bin" 2>/dev/null ||
		cp "$bin" "$root/$dest/"
	for lib in $(ldd "$bin" 2>/dev/null | grep -o '/[^ ]*' | sort -u); do
		mkdir -p "$root/$(dirname "$lib")"
		cp -L "$lib" "$root/$lib"
	done
}

# guest_moddir: the guest kernel's module tree: STAPVM_KMODDIR when set
# (tests/guest/checking-kernel), /lib/modules/$KVER, or
# in an unpacked kernel (fetch-kernel) the lib/modules beside its boot/,
# or the directory of the image itself (7.x: usr/lib/modules/V/vmlinuz).
guest_moddir() {
	if [[ -n ${STAPVM_KMODDIR:-} ]]; then	# a kernel built here
		echo "$STAPVM_KMODDIR"
	elif [[ -n ${STAPVM_KERNEL:-} && $(basename "$KERNEL") == vmlinuz ]]; then
		dirname "$KERNEL"
	elif [[ -n ${STAPVM_KERNEL:-} ]]; then
		echo "$(dirname "$(dirname "$KERNEL")")/lib/modules/$KVER"
	else
		echo "/lib/modules/$KVER"
	fi
}

# guest_modules_dep: the path of the guest kernel's modules.dep. An
# unpacked package (fetch-kernel) has none, since depmod runs at install
# time: it is generated there, in the unpacked tree, with depmod -b.
guest_modules_dep() {
	local mdir
	mdir=$(guest_moddir)
	if [[ ! -f $mdir/modules.dep && -n ${STAPVM_KERNEL:-} && -d $mdir/kernel ]]; then
		/usr/sbin/depmod -b "${mdir%/lib/modules/"$KVER"}" "$KVER" >&2 || return 1
	fi
	[[ -f $mdir/modules.dep ]] || return 1
	echo "$mdir/modules.dep"
}

# copy_guest_modules DIR: the Debian kernel's modules that cases load
# inside the guest (brd: a ram disk, bio-based; loop: a blk-mq device; the
# block-alias cases), as DIR/NAME.ko. From /lib/modules/$KVER, or the
# lib/modules beside an unpacked kernel's boot/ (fetch-kernel); a module
# compressed with xz is unpacked (busybox insmod reads plain .ko). A
# missing module is skipped: the case that needs it then fails.
copy_guest_modules() {
	local dir=$1 moddir m f
	moddir=$(guest_moddir)
	mkdir -p "$dir"
	for m in drivers/block/brd drivers/block/loop; do
		f=$moddir/kernel/$m.ko
		if [[ -f $f ]]; then
			cp "$f" "$dir/"
		elif [[ -f $f.xz ]]; then
			xz -dc "$f.xz" >"$dir/$(basename "$m").ko"
		fi
	done
}

# init_root ROOT: busybox, mount points, a few files for workloads.
init_root() {
	local root=$1 bb
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,run,stapvm/bin,cases,lib64}
	bb=/bin/busybox
	[[ -x $bb ]] || die "no /bin/busybox (tests/setup.sh installs busybox-static)"
	! ldd "$bb" >/dev/null 2>&1 || die "/bin/busybox is not static (busybox-static)"
	cp -L "$bb" "$root/bin/busybox"
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
	printf 'root:x:0:\n' >"$root/etc/group"
	printf 'stapvm guest\n' >"$root/etc/hostname"
	printf 'hello from the stapvm guest\n' >"$root/etc/motd"
}

# pack_root ROOT OUT.cpio.gz
pack_root() {
	local root=$1 out=$2
	(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) >"$out" ||
		die "cpio failed"
}

# boot_guest INITRD CONSOLE_LOG TIMEOUT_SECS [extra kernel args]:
# one TCG boot; the guest powers off at the end of /init.
boot_guest() {
	local initrd=$1 logf=$2 secs=$3 extra=${4:-} smp=${STAPVM_GUEST_SMP:-1} accel=tcg
	[[ $smp -gt 1 ]] && accel=tcg,thread=single
	timeout --foreground -k 5 "$secs" qemu-system-x86_64 \
		-accel "$accel" -cpu max -smp "$smp" -m 1024 \
		-nodefaults -display none -serial stdio -monitor none -no-reboot \
		-kernel "$KERNEL" -initrd "$initrd" \
		-append "console=ttyS0 quiet loglevel=3 oops=panic panic=-1 $extra" \
		</dev/null >"$logf" 2>&1
}
