^pagefault 1 return 1 minor 1 mmap 1$
^kmalloc 1 bad 0 kmem_cache_alloc 1 bad 0 kfree 1 kmem_cache_free 1$
^softirq 1 bad 0 workqueue 1 1 bad 0$
^irq [0-9]+ bad 0 brk [0-9]+$
