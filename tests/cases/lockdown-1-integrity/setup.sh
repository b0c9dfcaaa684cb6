# Integrity mode, then stapvm.ko again: the unsigned build must be refused,
# the one signed with the kernel's key must load (tests/guest/lib.sh
# build_module signs it). Lockdown cannot be lowered: the case is `last`.
rmmod stapvm || echo "setup: rmmod stapvm failed"
echo integrity >/sys/kernel/security/lockdown
cat /sys/kernel/security/lockdown >lockdown.state
if insmod /stapvm/stapvm-unsigned.ko 2>insmod-unsigned.err; then
	echo loaded >insmod-unsigned.result
	rmmod stapvm
else
	echo refused >insmod-unsigned.result
fi
insmod /stapvm/stapvm.ko && echo loaded >insmod-signed.result
