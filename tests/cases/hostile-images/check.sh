# Nothing may stay loaded after refused or closed sessions.
# debugfs files report size 0, so test the contents; a missing list fails too.
if ! [ -r /sys/kernel/debug/kprobes/list ] || grep -q . /sys/kernel/debug/kprobes/list; then
	echo "kprobes left armed:"; cat /sys/kernel/debug/kprobes/list; exit 1
fi
# Every program this run compiled was mutated (gen-hostile: three refused
# mutations of each, tests/guest/run passes them all).
progs=0
missing=0
for f in /cases/*/case.stpb; do
	[ -f "$f" ] || continue
	progs=$((progs + 1))
	n=${f%/case.stpb}
	n=${n##*/}
	ls /stapvm/hostile/corpus-"$n"-* >/dev/null 2>&1 || missing=$((missing + 1))
done
corpus=$(ls /stapvm/hostile/ | grep -c '^corpus-.*\.img$')
echo "compiled programs: $progs, their mutations: $corpus, programs without: $missing"
[ "$missing" = 0 ]
