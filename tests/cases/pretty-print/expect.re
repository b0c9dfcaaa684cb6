^comm "cat"$
^comm0 'c'$
^fs \{\.users=[0-9]+, (\.lock=\{\.\.\.\}, )?\.seq=\{\.\.\.\}, \.umask=[0-9]+, \.in_exec=0, \.root=\{\.\.\.\}, \.pwd=\{\.\.\.\}\}$
^fsdeep \{\.users=[0-9]+, ((\.lock|\.seq)=\{.*\}, \.umask=[0-9]+, \.in_exec=0, \.root=\{\.mnt=0xff[0-9a-f]+, \.dentry=0xff[0-9a-f]+\}, \.pwd=\{\.mnt=0xff[0-9a-f]+, \.dentry=0xff[0-9a-f]+\}\}|\.lock=\{<union>=\{\.rlock=\{\.raw_lock=.*)$
^pideq 1$
^parms dfd=-100 filename="/dev/null" how=\{\.flags=[0-9]+, \.mode=[0-9]+, \.resolve=0\}$
^how \{\.flags=[0-9]+, \.mode=[0-9]+, \.resolve=0\}$
^getname return=(\{\.name="/dev/null", \.uptr="/dev/null", \.refcnt=([0-9]+|\{\.\.\.\}), \.aname=0x[0-9a-f]+, \.iname=\[\.\.\.\]\}|\{<class>=\{\.\.\.\}, \.iname=\[\.\.\.\]\})$
^getname name /dev/null$
^path \{\.mnt=0xff[0-9a-f]+, \.dentry=0xff[0-9a-f]+\}$
^fmode [0-9]+$
^dname \{<union>=\{\.\.\.\}, \.name="zero"\}$
^dnamedeep \{<union>=\{<class>=\{\.hash=[0-9]+, \.len=4\}, \.hash_len=[0-9]+\}, \.name="zero"\}$
^file \{.*\.f_(mode=[0-9]+, .*\.f_inode=0xff[0-9a-f]+|inode=0xff[0-9a-f]+, .*\.f_mode=[0-9]+), 
