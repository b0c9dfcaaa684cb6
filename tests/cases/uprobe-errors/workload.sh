# What a user gets wrong, each a clear error with nothing armed: a missing
# program, an address outside the code, an unknown marker, an unknown
# library, a dead -x process, a -c command not in $PATH; then a failure at
# START (five watchpoints, x86-64 has four debug registers) after a
# uprobe on ucalls was armed: the uprobe is unwound with the rest.
try() { # try ARGS...: stapvm run ARGS, its error and status
	stapvm run "$@" 2>&1
	echo "status=$?"
}
try -e 'probe process("/stapvm/bin/nosuch").function("main") { }'
try -e 'probe process("/stapvm/bin/ucalls").statement(0x10).absolute { }'
try -e 'probe process("/stapvm/bin/usdt").mark("nosuch") { }'
try -e 'probe process("/stapvm/bin/ucalls").mark("tick") { }'
try -e 'probe process("/stapvm/bin/stapvm").library("libnosuch.so.1").function("f") { }'
sleep 0 &
dead=$!
wait $dead
try -x "$dead" -e 'probe process.function("ucall_leaf") { }'
try -c 'nosuchprogram 1' -e 'probe process.function("ucall_leaf") { }'
try -e 'probe process("/stapvm/bin/ucalls").function("ucall_leaf") { }
	probe kernel.data("dirty_writeback_interval").write, kernel.data("vm_dirty_ratio").write,
	      kernel.data("dirty_background_ratio").write,
	      kernel.data("sysctl_overcommit_memory").write,
	      kernel.data("sysctl_overcommit_ratio").write { }' | sed 's/(ENOSPC.*/(ENOSPC)/'
# No breakpoint is left in ucalls: a new run has no [uprobes] area.
ucalls 3 xol | grep '^UCALLS_XOL='
