# SystemTap's process/errsnoop.stp (syscall.* and syscall.*.return, argstr,
# errno_str): a failing open(2), then past the 5 s report.
open2 1 /nonexistent 2>/dev/null || true
sleep 6
