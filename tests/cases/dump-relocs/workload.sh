# stapvm dump shows the target variables' relocations; with --kernel the
# constants the loader fills in from this kernel's BTF.
stapvm compile -o tv.stpb -e 'probe kernel.function("vfs_read") { println($file->f_inode->i_ino, $count) }'
echo "compile $?"
stapvm dump tv.stpb | grep -E '^target variables|tv#|k#3 '
stapvm dump --kernel tv.stpb | grep -E '^    k#'
echo "dump $?"
