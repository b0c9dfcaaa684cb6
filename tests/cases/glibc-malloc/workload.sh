# Six allocations (five small, one mmap'd) while the probes are armed;
# a dynamic program beside it (the CLI) also calls malloc.
mallocs 6 >"$CASE_OUT/helper"
echo "mallocs status=$?"
stapvm --version >/dev/null
