^ 0x[0-9a-f]+ : uchain_c\+0x0/0x[0-9a-f]+ \[/stapvm/bin/uchain\]$
^ 0x[0-9a-f]+ : uchain_b\+0x[0-9a-f]+/0x[0-9a-f]+ \[/stapvm/bin/uchain\]$
^ 0x[0-9a-f]+ : uchain_a\+0x[0-9a-f]+/0x[0-9a-f]+ \[/stapvm/bin/uchain\]$
^ 0x[0-9a-f]+ : main\+0x[0-9a-f]+/0x[0-9a-f]+ \[/stapvm/bin/uchain\]$
^name uchain_c mod /stapvm/bin/uchain$
^data uchain_c\+0x0/0x[0-9a-f]+ \[/stapvm/bin/uchain\]$
^callers 0x[0-9a-f]+ 0x[0-9a-f]+ 0x[0-9a-f]+$
^ustack1 uchain_b$
^usyms$
^ 0x[0-9a-f]+ : uchain_c\+0x0/0x[0-9a-f]+ \[/stapvm/bin/uchain\]$
^ 0x[0-9a-f]+ : uchain_b\+0x[0-9a-f]+/0x[0-9a-f]+ \[/stapvm/bin/uchain\]$
^sprint$
^uchain_c\+0x0 \[uchain\]$
^uchain_b\+0x[0-9a-f]+ \[uchain\]$
^uchain_a\+0x[0-9a-f]+ \[uchain\]$
^main\+0x[0-9a-f]+ \[uchain\]$
^brief$
^uchain_c\+0x0$
^uchain_b\+0x[0-9a-f]+$
^uchain_a\+0x[0-9a-f]+$
^main\+0x[0-9a-f]+$
^unknown 0x0 0x1 0x2$
^umodname\(0\): module cannot be found$
^return$
^ 0x[0-9a-f]+ : uchain_b\+0x[0-9a-f]+/0x[0-9a-f]+ \[/stapvm/bin/uchain\]$
^ 0x[0-9a-f]+ : uchain_a\+0x[0-9a-f]+/0x[0-9a-f]+ \[/stapvm/bin/uchain\]$
^ 0x[0-9a-f]+ : main\+0x[0-9a-f]+/0x[0-9a-f]+ \[/stapvm/bin/uchain\]$
