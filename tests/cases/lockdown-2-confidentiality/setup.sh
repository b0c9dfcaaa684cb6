# Confidentiality mode, with stapvm.ko already loaded (on a kernel whose
# signing key is not ours the module could not be loaded now). Lockdown
# cannot be lowered: the case is `last`, after lockdown-1-integrity.
echo confidentiality >/sys/kernel/security/lockdown
cat /sys/kernel/security/lockdown >lockdown.state
