^count=400 done=[0-9]+$
