# stapvm check --parse-only: pass 1 alone (compiler::parse_tree); a parse
# error is reported once, with stap's pass-1 summary once; semantic
# errors pass, and the parse tree is printed back as script text (stap
# -p1's `# parse tree dump`).
stapvm check --parse-only -e 'probe begin { x = }'
echo "status $?"
stapvm check --parse-only -e 'probe begin { printf("%d\n", undefined_fn()) }'
echo "status $?"
