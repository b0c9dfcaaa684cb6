# open2 calls open(2) itself: once on a file that exists (fd 3, closed),
# once on one that does not (ENOENT).
open2 1 /etc/motd >/dev/null
open2 1 /nonexistent 2>/dev/null || true
