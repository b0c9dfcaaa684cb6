for i in 1 2 3 4 5; do sh -c 'exit 0'; done
