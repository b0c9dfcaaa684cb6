^flips 30$
^conditional ran on some hits: yes$
^never-true condition ran: 0$
