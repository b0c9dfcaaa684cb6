^Starting probe, type control-c to stop.$
