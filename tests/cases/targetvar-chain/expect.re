^ino=@INO@ count>0=1$
