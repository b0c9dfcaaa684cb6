#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/debian/guest.sh - runs inside the Debian guest of tests/guest/debian
# (started by stapvm-guest-test.service after multi-user.target, as root,
# output on ttyS1), from the payload in /run/payload: the packages, the
# static tarball, the .stpb compiled on the build host, and `mode`
# (`plain` or `boottrace`).
#
# One line per check: `ok NAME` or `FAIL NAME: why`, with the commands'
# output indented beneath; `@@DONE STAGE` at the end of each boot. The
# stage survives reboots in /var/lib/stapvm-test/stage:
#   (none)     install the packages, modprobe, load the host's .stpb, run
#              stapvm -e, doctor, man, completions; in boottrace mode add
#              the boot tracer and power off (the host boots again);
#              otherwise go on to the removal
#   boottrace  stop the boot tracer, check its summary against /proc,
#              remove it, then the removal
#   removal    purge the packages: no module loaded, no file left
set -u
P=/run/payload
STATE=/var/lib/stapvm-test
REL=$(uname -r)
mode=$(cat "$P/mode" 2>/dev/null || echo plain)

# What `stapvm boot add` puts into the initramfs (the init-top script is
# there whenever the package is installed: it does nothing without these).
BOOT_FILES='^usr/bin/stapvm$|/extra/stapvm\.ko$|^etc/stapvm/boot/boot-summary\.stpb$'

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; }
show() { sed 's/^/    /' "$@"; }
# check NAME CMD...: runs CMD, its output indented; ok when it succeeds.
check() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	[[ -n $out ]] && printf '%s\n' "$out" | show
	if ((rc == 0)); then ok "$name"; else fail "$name" "exit status $rc"; fi
	return $rc
}
finish() {
	echo "@@DONE $1"
	sync
	systemctl poweroff --no-block
	exit 0
}

stage_install() {
	echo "kernel $REL, mode $mode"
	if command -v gcc cc >/dev/null 2>&1 || compgen -G '/usr/src/linux-headers-*' >/dev/null; then
		fail bare-machine "a compiler or kernel headers are installed"
	else
		ok bare-machine
	fi
	check install dpkg -i "$P"/debs/stapvm_*.deb "$P/debs/stapvm-modules-${REL}_"*.deb || finish install
	check modprobe modprobe stapvm
	if grep -q '^stapvm ' /proc/modules && [[ -c /dev/stapvm ]]; then
		ok module-loaded
	else
		fail module-loaded "no stapvm in /proc/modules or no /dev/stapvm"
	fi

	# The program compiled on the build host, unchanged.
	local out
	out=$(timeout 60 stapvm load "$P/opens.stpb" -c 'cat /etc/hostname' 2>&1)
	printf '%s\n' "$out" | show
	if grep -qx 'cat opened "/etc/hostname"' <<<"$out"; then
		ok host-stpb
	else
		fail host-stpb "no 'cat opened \"/etc/hostname\"' line"
	fi

	# A script compiled here, stap's way: opens by cat while it runs.
	(for _ in $(seq 100); do cat /etc/os-release >/dev/null; sleep 0.1; done) &
	local loop=$!
	out=$(timeout 60 stapvm -e 'probe syscall.openat { if (execname() == "cat") printf("%s %s\n", execname(), filename) }' -T 2 2>&1)
	kill "$loop" 2>/dev/null
	wait "$loop" 2>/dev/null
	printf '%s\n' "$out" | sort | uniq -c | show
	if grep -qx 'cat "/etc/os-release"' <<<"$out"; then
		ok stapvm-e
	else
		fail stapvm-e "no 'cat \"/etc/os-release\"' line"
	fi

	# The static tarball's CLI, for hosts that are not Debian: no library
	# of the machine's, and it runs a script on the module as it is.
	local st=/tmp/static
	mkdir -p "$st" && tar -xzf "$P"/stapvm-*-x86_64-linux-static.tar.gz -C "$st"
	local sbin
	sbin=$(echo "$st"/stapvm-*/bin/stapvm)
	out=$("$sbin" --version 2>&1 && timeout 60 "$sbin" -e 'probe begin { println("static ok") exit() }' 2>&1)
	printf '%s\n' "$out" | show
	if [[ -x $sbin ]] && ldd "$sbin" 2>&1 | grep -Eq 'statically linked|not a dynamic executable' &&
		grep -qx 'static ok' <<<"$out"; then
		ok static-cli
	else
		fail static-cli "the static CLI did not run a script"
	fi

	out=$(stapvm doctor 2>&1)
	printf '%s\n' "$out" | show
	if grep -qx 'stapvm can run here (0 warnings)' <<<"$out" && ! grep -q '^FAIL' <<<"$out"; then
		ok doctor
	else
		fail doctor "not all green"
	fi

	out=$(MANWIDTH=80 man stapvm 2>&1)
	printf '%s\n' "$out" | head -n 12 | show
	if grep -q '^SYNOPSIS' <<<"$out" && grep -q 'compile' <<<"$out"; then
		ok man
	else
		fail man "man stapvm shows no SYNOPSIS"
	fi
	out=$(MANWIDTH=80 man 7 stapvm-language 2>&1)
	if grep -q 'foreach' <<<"$out"; then ok man-language; else fail man-language "no foreach in it"; fi
	check completion bash -c 'source /usr/share/bash-completion/completions/stapvm && complete -p stapvm'

	mkdir -p "$STATE"
	if [[ $mode == boottrace ]]; then
		check boot-add stapvm boot add --kernel "$REL" /usr/share/doc/stapvm/examples/boot-summary.stp
		out=$(lsinitramfs "/boot/initrd.img-$REL" | grep -E "$BOOT_FILES")
		printf '%s\n' "$out" | show
		if [[ $(grep -cE "$BOOT_FILES" <<<"$out") == 3 ]]; then
			ok initramfs-has-stapvm
		else
			fail initramfs-has-stapvm "the initramfs lacks the CLI, the module or the program"
		fi
		echo boottrace >"$STATE/stage"
		finish install
	fi
	stage_removal
}

# summary_ancestry FILE: for every row of the boot summary whose process and
# parent both still run, /proc must name the same parent. Prints the
# number checked and the mismatches.
summary_ancestry() {
	local checked=0 bad=0 line indent pid name status depth ppid real comm
	local -a stack=()
	while IFS= read -r line; do
		[[ $line =~ ^(\ *)([0-9]+)\ +([^ ]+)\ .*(running\.\.\.|run\ [0-9.]+s) ]] || continue
		indent=${BASH_REMATCH[1]}
		pid=${BASH_REMATCH[2]}
		name=${BASH_REMATCH[3]}
		status=${BASH_REMATCH[4]}
		depth=$((${#indent} / 2))
		stack[depth]=$pid:$status
		((depth > 0)) || continue
		[[ $status == running... ]] || continue
		[[ ${stack[depth - 1]} == *:running... ]] || continue
		ppid=${stack[depth - 1]%%:*}
		[[ -r /proc/$pid/stat ]] || continue
		comm=$(cat "/proc/$pid/comm" 2>/dev/null)
		[[ $comm == "${name:0:15}" ]] || continue
		real=$(awk '{ print $4 }' "/proc/$pid/stat")
		checked=$((checked + 1))
		if [[ $real != "$ppid" ]]; then
			echo "    mismatch: $pid ($name): summary parent $ppid, /proc parent $real"
			bad=$((bad + 1))
		fi
	done <"$1"
	echo "    ancestry: $checked rows checked against /proc, $bad mismatched"
	((checked >= 3 && bad == 0))
}

stage_boottrace() {
	echo "kernel $REL, second boot: the boot tracer ran from the initramfs"
	check boot-list stapvm boot list
	local sum=/tmp/boot-summary.txt
	stapvm boot stop boot-summary >"$sum" 2>&1
	local rc=$?
	show "$sum"
	if ((rc == 0)); then ok boot-stop; else fail boot-stop "exit status $rc"; fi
	if grep -Eq '^ *1 +systemd +read +[0-9]+ +write +[0-9]+ +running\.\.\.' "$sum"; then
		ok summary-systemd
	else
		fail summary-systemd "no running row for pid 1 (systemd)"
	fi
	local svc missing=
	for svc in systemd-journal systemd-udevd; do
		grep -Eq "^ +[0-9]+ +${svc}[a-z]* +read +[0-9]+ +write +[0-9]+ +(running\.\.\.|run [0-9.]+s)" "$sum" ||
			missing+=" $svc"
	done
	if [[ -z $missing ]]; then ok summary-services; else fail summary-services "no row for$missing"; fi
	if summary_ancestry "$sum"; then ok summary-ancestry; else fail summary-ancestry "see above"; fi
	check boot-remove stapvm boot remove --kernel "$REL" boot-summary
	if lsinitramfs "/boot/initrd.img-$REL" | grep -E "$BOOT_FILES"; then
		fail initramfs-clean "the initramfs still holds stapvm's boot files"
	else
		ok initramfs-clean
	fi
	stage_removal
}

stage_removal() {
	echo removal >"$STATE/stage"
	local files=/tmp/package-files
	# Files and symbolic links, not directories (nor /lib, a link to one).
	dpkg -L stapvm "stapvm-modules-$REL" | while IFS= read -r f; do
		[[ -d $f ]] || echo "$f"
	done >"$files"
	echo "    $(wc -l <"$files") files installed"
	check purge dpkg --purge stapvm "stapvm-modules-$REL"
	if grep -q '^stapvm ' /proc/modules; then
		fail no-module "stapvm is still loaded"
	else
		ok no-module
	fi
	local left
	left=$(while IFS= read -r f; do [[ -e $f || -L $f ]] && echo "$f"; done <"$files")
	[[ -e /etc/stapvm ]] && left+=$'\n/etc/stapvm'
	if [[ -z ${left//$'\n'/} ]]; then
		ok no-files-left
	else
		printf '%s\n' "$left" | show
		fail no-files-left "files left after purge"
	fi
	rm -rf "$STATE"
	finish removal
}

case $(cat "$STATE/stage" 2>/dev/null) in
boottrace) stage_boottrace ;;
removal) stage_removal ;;
*) stage_install ;;
esac
