dd if=/dev/zero of=out bs=4321 count=2 2>/dev/null
