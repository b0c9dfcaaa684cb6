# Kernel global variables read with @var, then a @var of a symbol the
# kernel does not have: a load error naming it and its place.
. /stapvm/case-lib.sh
stapvm run "$CASE_DIR/t.stp"
echo "status $?"
stapvm run -e 'probe begin { println(@var("nosuchsym_xyz")); exit() }'
echo "status $?"
