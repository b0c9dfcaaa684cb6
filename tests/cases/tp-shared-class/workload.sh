# A helper that exits (sched_process_exit / _free of `retval`, its pid
# from RETVAL_PID) and a sleep woken by its timer (sched_wakeup), both
# forked here (sched_wakeup_new).
retval 1 >>"$VARS"
sleep 0.3 &
echo "SLEEP_PID=$!" >>"$VARS"
sleep 1.5
