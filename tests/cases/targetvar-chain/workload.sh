echo hello >f
echo "INO=$(stat -c %i f)" >>"$VARS"
head -n 1 f >/dev/null
