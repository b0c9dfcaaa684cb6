cat /dev/null
sleep 1
dd if=/dev/zero of=/dev/null bs=512 count=1 2>/dev/null
sleep 1
