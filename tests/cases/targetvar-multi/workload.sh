dd if=/dev/zero of=dd.data bs=4321 count=2 2>/dev/null
