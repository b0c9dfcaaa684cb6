f=/proc/sys/vm/dirty_writeback_centisecs
old=$(cat $f)
echo "OLD=$old" >>"$VARS"
cat $f >/dev/null
echo 700 >$f
cat $f >/dev/null
echo "$old" >$f
