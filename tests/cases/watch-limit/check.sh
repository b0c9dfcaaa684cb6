# The four armed before the fifth failed were unwound: four watchpoints
# load now (they would find every debug register taken otherwise).
cat >"$CASE_OUT/four.stp" <<'S'
probe kernel.data("dirty_writeback_interval").write, kernel.data("vm_dirty_ratio").write,
      kernel.data("dirty_background_ratio").write,
      kernel.data("sysctl_overcommit_memory").write { }
probe timer.ms(10) { println("four armed") exit() }
S
stapvm run "$CASE_OUT/four.stp" 2>&1 | tee "$CASE_OUT/four.out"
grep -q '^four armed$' "$CASE_OUT/four.out"
