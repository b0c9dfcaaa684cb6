sleep 1
: >/tmp/aux-dec-file
