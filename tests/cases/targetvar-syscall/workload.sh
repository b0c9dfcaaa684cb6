open2 1 /etc/motd >>"$VARS"
