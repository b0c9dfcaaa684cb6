# A damaged .stpb is refused by `stapvm load` before anything reaches the
# module: a truncated file, 20 MB of random bytes appended, one byte
# changed at its start, middle and end. Each gets its own message and
# exit status 1, and nothing is armed; the undamaged file still loads.
stpb=$CASE_DIR/case.stpb
size=$(wc -c <"$stpb")
fail=0
armed() { grep -c . /sys/kernel/debug/kprobes/list; }
before=$(armed)

# try NAME FILE PATTERN: the load must fail with a message matching PATTERN.
try() {
	stapvm load -T 2 "$2" >"$1.out" 2>"$1.err"
	st=$?
	if [ "$st" != 1 ] || ! grep -q "$3" "$1.err"; then
		echo "$1: status $st, stderr:"; cat "$1.err"; fail=1
	elif [ "$(armed)" != "$before" ]; then
		echo "$1: probes armed:"; cat /sys/kernel/debug/kprobes/list; fail=1
	else
		echo "$1: refused: $(head -n 1 "$1.err")"
	fi
}

# flip OFFSET: a copy with the byte at OFFSET changed (to the next value).
flip() {
	cp "$stpb" "flip$1.stpb"
	v=$(od -An -tu1 -j "$1" -N 1 "$stpb" | tr -d ' ')
	printf "$(printf '\\%03o' $(((v + 1) % 256)))" |
		dd of="flip$1.stpb" bs=1 seek="$1" conv=notrunc 2>/dev/null
}

head -c $((size - 1)) "$stpb" >short.stpb
try truncated short.stpb 'corrupt .stpb: truncated'
head -c 30 "$stpb" >header.stpb
try header-only header.stpb 'corrupt .stpb: truncated'
{ cat "$stpb"; head -c 20000000 /dev/urandom; } >long.stpb
try appended long.stpb 'corrupt .stpb: 20000000 bytes after the program'
for off in 20 $((size / 2)) $((size - 1)); do
	flip $off
	try "byte-$off" "flip$off.stpb" 'corrupt .stpb (checksum)'
done
# The header's own fields: magic, version.
flip 0
try magic flip0.stpb 'not a stapvm program'
flip 4
try version flip4.stpb 'unsupported .stpb version'

stapvm load -T 2 "$stpb" >again.out 2>again.err || { echo "undamaged: refused"; cat again.err; fail=1; }
grep -q armed again.out || { echo "undamaged: no output"; fail=1; }
exit $fail
