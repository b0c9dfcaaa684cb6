# Every image gen-hostile wrote goes through the LOAD ioctl: hostile ones
# must be refused with the errno in NAME.expect and a log message holding
# its second line; valid ones accepted. Uses `stapvm debug load-image`
# when the CLI has it, else the raw stp-ioctl helper (same output format).
if stapvm debug load-image /stapvm/hostile/valid-timer.img >/dev/null 2>&1; then
	load() { stapvm debug load-image "$1"; }
	echo "loader: stapvm debug load-image"
else
	load() { stp-ioctl load "$1"; }
	echo "loader: stp-ioctl load"
fi
n=0
bad=0
for img in /stapvm/hostile/*.img; do
	name=${img##*/}
	name=${name%.img}
	got=$(load "$img" 2>&1)
	errno=$(sed -n 1p "${img%.img}.expect")
	frag=$(sed -n 2p "${img%.img}.expect")
	n=$((n + 1))
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
echo "hostile images: $n checked, $bad mismatched"
