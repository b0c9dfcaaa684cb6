^ +Process[[:space:]]+KB Read[[:space:]]+KB Written$
^ +dd[[:space:]]+400[[:space:]]+400$
