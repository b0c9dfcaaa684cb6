^--- [0-9]+ samples recorded:$
^[^ ].*	 +[0-9]+$
