# A process tree of known shape and opens for docs/examples/boot-summary.stp
# (case boot-summary). Under this workload shell (WL_PID):
#
#   sh tree.sh (TREE_PID)  read 3: tree.sh and the two </dev/null below;
#                          write 4: its two >>"$VARS", open2's >>"$VARS",
#                          sleep 1's >/dev/null
#     open2 3 in.txt       read 3 (open(2)), write 0
#     tee o1 o2            read 0, write 2 (o1, o2)
#     sh -c (INNER_PID)    read 0, write 1 (its >>"$VARS")
#       cat in.txt x2      read 2, write 0
#     sleep 1              read 0, write 0; ran ~1 s
#     sleep 60 &           read 2, write 1; still running at the end
#
# busybox sh (like dash) opens the redirections of a simple command itself,
# around the fork, so they count for the shell; those of a background
# command are opened in the child, which also gets </dev/null for its
# standard input (a POSIX asynchronous list): read 2 for sleep 60.
# Commands by full path, so busybox sh forks and execs them (an applet
# named without a path may run inside the shell); busybox starts a nested
# `sh` through /proc/self/exe, so its name may be `exe`. The trailing
# `true`s keep a shell from exec'ing its last command in place of forking.
echo "WL_PID=$$" >>"$VARS"
echo data >in.txt
cat >tree.sh <<'TREE'
echo "TREE_PID=$$" >>"$VARS"
open2 3 in.txt >>"$VARS"
/bin/tee o1 o2 </dev/null
sh -c 'echo "INNER_PID=$$" >>"$VARS"; /bin/cat in.txt in.txt; true'
/bin/sleep 1 </dev/null >/dev/null
/bin/sleep 60 </dev/null >/dev/null &
echo "SLEEP_PID=$!" >>"$VARS"
true
TREE
sh tree.sh
