# Every line is a whole record and lines + dropped records = 40000.
. /stapvm/case-lib.sh
records_accounted '^retval [0-9]+$' 40000
