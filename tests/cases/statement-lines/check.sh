# Each marked line of the module's source ran the number of times the
# workload makes it run, under the pp() that names its file and line.
src=/stapvm/testmod/stapvm_lines.c
out=$CASE_OUT/out
line_of() { grep -n "/\* $1 \*/" "$src" | head -1 | cut -d: -f1; }
fail=0
expect() { # expect KIND LINE COUNT
	got=$(grep -E "^$1 module\(\"stapvm_lines\"\)\.statement\(\"lines_walk@[^\"]*stapvm_lines\.c:$2\"\) " "$out" | awk '{ print $NF }')
	if [ "$got" != "$3" ]; then
		echo "line $2 ($1): expected $3 hits, got '${got:-none}'"
		fail=1
	fi
}
body=$(line_of LINE-BODY)
iff=$(line_of LINE-IF)
expect line "$body" 205
expect line "$(line_of LINE-CAP)" 1
expect line "$(line_of LINE-RET)" 2
expect line "$iff" 2
[ "$((iff - 1))" = 31 ] || { echo "the source moved: LINE-IF is line $iff, the script names 31"; fail=1; }
expect near "$iff" 2
# Every probe point names the function's own file, and no line fired
# that the walk does not run (the line numbers are in lines_walk).
n=$(grep -c '^line ' "$out")
[ "$n" -ge 6 ] || { echo "only $n lines fired"; fail=1; }
rmmod stapvm_lines || fail=1
exit $fail
