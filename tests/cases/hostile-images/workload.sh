# Every image gen-hostile wrote goes through the LOAD ioctl: hostile ones
# (hand-written attacks and refused mutations) must be refused with the
# errno in NAME.expect and a log message holding its second line (for a
# mutation, the whole message of the user-space verifiers); valid ones
# accepted; accepted mutations (`run`) are loaded, started, stopped and
# closed (`stp-ioctl run IMG 0`: begin probes run, probes armed for a
# moment). Uses `stapvm debug load-image` when the CLI has it, else the
# raw stp-ioctl helper (same output format); mutations always go through
# stp-ioctl, which starts faster. Prints the counts and the seconds the
# loop took in the guest.
if stapvm debug load-image /stapvm/hostile/valid-timer.img >/dev/null 2>&1; then
	load() { stapvm debug load-image "$1"; }
	echo "loader: stapvm debug load-image"
else
	load() { stp-ioctl load "$1"; }
	echo "loader: stp-ioctl load"
fi
t0=$(cut -d. -f1 /proc/uptime)
n=0
bad=0
ran=0
refused=0
for img in /stapvm/hostile/*.img; do
	name=${img##*/}
	name=${name%.img}
	errno=$(sed -n 1p "${img%.img}.expect")
	frag=$(sed -n 2p "${img%.img}.expect")
	n=$((n + 1))
	if [ "$errno" = run ]; then
		got=$(stp-ioctl run "$img" 0 2>&1)
		case "$got" in
		refused:*)
			echo "$name: MISMATCH: got '$got', want accepted"
			bad=$((bad + 1))
			;;
		*)
			ran=$((ran + 1))
			echo "$name: ran: $(printf '%s\n' "$got" | tail -n 1)"
			;;
		esac
		continue
	fi
	case "$name" in
	mut-* | corpus-*) got=$(stp-ioctl load "$img" 2>&1) ;;	# fast: no CLI start-up
	*) got=$(load "$img" 2>&1) ;;
	esac
	if [ "$errno" = accepted ]; then
		case "$got" in
		accepted) echo "$name: accepted" ;;
		*) echo "$name: MISMATCH: got '$got', want accepted"; bad=$((bad + 1)) ;;
		esac
		continue
	fi
	case "$got" in
	"refused: $errno ("*)
		if printf '%s\n' "$got" | grep -qF -- "$frag"; then
			refused=$((refused + 1))
			echo "$name: $got"
		else
			echo "$name: MISMATCH: got '$got', want message with '$frag'"
			bad=$((bad + 1))
		fi
		;;
	*)
		echo "$name: MISMATCH: got '$got', want refused: $errno"
		bad=$((bad + 1))
		;;
	esac
done
t1=$(cut -d. -f1 /proc/uptime)
echo "hostile images: $n checked, $refused refused, $ran ran, $bad mismatched"
echo "hostile images: $((t1 - t0)) s in the guest"
