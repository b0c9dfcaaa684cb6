# The kernel is in integrity mode, refused the unsigned module and took
# the signed one.
fail=0
grep -q '\[integrity\]' lockdown.state || { echo "lockdown: $(cat lockdown.state)"; fail=1; }
[ "$(cat insmod-unsigned.result)" = refused ] ||
	{ echo "the unsigned stapvm.ko loaded under integrity lockdown"; fail=1; }
[ "$(cat insmod-signed.result 2>/dev/null)" = loaded ] ||
	{ echo "the signed stapvm.ko did not load"; fail=1; }
echo "lockdown: $(cat lockdown.state); unsigned: $(cat insmod-unsigned.result) ($(cat insmod-unsigned.err)); signed: loaded"
exit $fail
