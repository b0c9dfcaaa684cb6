# A shell that forks and execs a few busybox commands: one writes a file, one
# reads it, one is a grandchild (an inner sh -c). The trailing `true`s keep
# the shell from exec'ing its last command in place of forking.
sh -c 'echo marker >"$CASE_OUT/bt.out"; /bin/cat "$CASE_OUT/bt.out" >/dev/null; sh -c "/bin/ls / >/dev/null; true"; true'
sleep 0.2
