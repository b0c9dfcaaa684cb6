# stapvm check --parse-only: pass 1 alone (compiler::parse_only); a parse
# error is reported once, with stap's pass-1 summary once; semantic
# errors pass.
stapvm check --parse-only -e 'probe begin { x = }'
echo "status $?"
stapvm check --parse-only -e 'probe begin { printf("%d\n", undefined_fn()) }'
echo "status $?"
