# lines_walk(5): body 5 times, no cap; lines_walk(200): body 200 times,
# the cap once.
echo 5 >/proc/stapvm_lines
echo 200 >/proc/stapvm_lines
