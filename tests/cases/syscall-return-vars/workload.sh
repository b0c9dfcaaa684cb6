# A pipeline (busybox sh makes the pipe) and a child that exits with 7,
# which its parent shell reaps with wait4.
sh -c 'echo x | cat >/dev/null'
sh -c 'sh -c "exit 7"; true'
