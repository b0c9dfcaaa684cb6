# Every line is a whole record ("retval <pid>", none torn or interleaved)
# and every hit is accounted for: lines + dropped records = 40000.
. /stapvm/case-lib.sh
records_accounted '^retval [0-9]+$' 40000
