sleep 1
head -c 5 /etc/motd >/dev/null
