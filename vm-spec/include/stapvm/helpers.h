/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * helpers.h - the functions a handler may call through CALLI/CALLS: the only
 * definition of every helper's id, result kind, argument kind and the probe
 * contexts it is valid in.
 *
 * Result kinds: INT (CALLI writes r[a]) or STR (CALLS writes s[a]).
 * Argument kinds: NONE (b must be 0 and is not read), INT (r[b] is read)
 * or STR (s[b] is read).
 * Contexts: a mask of STP_CTXM_* bits (abi.h: enum stp_ctx); the verifier
 * refuses a helper in a handler whose context is not in its mask, e.g.
 * RETVAL outside a return probe. ANY includes STP_CTXM_FUNCTION (user
 * functions, abi.h); RET and ENTRY do not, so RETVAL and ARG are refused
 * in a function body.
 *
 * Helpers that read memory (KERNEL_*, USER_*) do so only through
 * copy_from_kernel_nofault / copy_from_user_nofault; a fault ends the
 * handler with a run-time error, never an oops.
 *
 * Details the one-line meanings leave out (vm.c; checked by the reference
 * interpreter, vm-spec/src/refvm.rs):
 *  - LOCAL_CLOCK_NS reads the same clock as the records' time_ns.
 *  - ARG takes r[b] as unsigned: values of 2^32 and more read argument
 *    0xffffffff, and an argument the calling convention does not have
 *    reads 0.
 *  - KERNEL_LONG is one 8-byte read at r[b] (it may span two pages); a
 *    fault gives STP_RTE_KFAULT with address r[b]. KERNEL_INT,
 *    KERNEL_SHORT and KERNEL_CHAR are the same with 4, 2 and 1 bytes, the
 *    value sign-extended to 64 bits (stap's kernel_int/short/char).
 *  - TASK_CURRENT is the address of the current task_struct (stap's
 *    task_current()); struct members are read from it through @cast
 *    offsets the loader takes from BTF. (User space: the test
 *    environment's value.)
 *  - KERNEL_STRING and USER_STRING copy up to the first NUL, at most
 *    MAXSTRINGLEN - 1 bytes; reaching that first is not an error (the
 *    string is cut). They read in chunks that never cross a page: each
 *    chunk runs from the current address to the end of its page or to
 *    MAXSTRINGLEN - 1 bytes, whichever comes first, so bytes after the
 *    NUL on the same page are read and bytes on the next page are not. A chunk that
 *    faults gives STP_RTE_KSTRFAULT / STP_RTE_USTRFAULT with the address
 *    of that chunk (not of the string), and leaves s[a] empty (what a
 *    catch sees, opcodes.h TRY). Addresses wrap at 2^64.
 *  - USER_STRING_OK reads what USER_STRING would (same chunks, same
 *    MAXSTRINGLEN - 1 cap) and gives 0 where USER_STRING would fault, else
 *    1 (the tapset's user_string_quoted prints the address instead of
 *    failing the handler).
 *  - EXECNAME is comm cut at MAXSTRINGLEN - 1 bytes, then at its first NUL;
 *    PEXECNAME likewise, of the real parent (empty without one).
 *  - ADDR and USER_MODE read the registers the hit has: a kprobe's or
 *    kretprobe's, or for a timer.profile probe those of the interrupted
 *    context; begin, end and plain timers have none (0, 0).
 *  - SYMNAME and SYMDATA resolve in the kernel (sprint_symbol, kallsyms;
 *    no lock, bounded): SYMNAME is the name, SYMDATA stap's
 *    name+0xoff/0xsize [module] (module "kernel" for the core kernel);
 *    an address without a symbol gives "0x" and lowercase hex digits of
 *    r[b] for both. Results are cut at MAXSTRINGLEN - 1 bytes. (The user-
 *    space build has no symbols: always the hex form.)
 *  - BACKTRACE: the kernel stack of the hit, innermost first, each frame
 *    as 0x<lowercase hex>, separated by one space, only whole frames
 *    that fit MAXSTRINGLEN - 1 bytes, at most STP_MAX_BACKTRACE frames;
 *    with registers it starts at the probed or interrupted address, else
 *    at the first frame outside the module. (User space: the frames the
 *    test environment gives.)
 *  - MM_ARG reads current->mm->arg_start (r[b] == 0) or ->arg_end (any
 *    other r[b]): the user addresses of the process's argument strings
 *    (cmdline_str() reads them with USER_STRING); 0 for a task without
 *    an mm (kernel threads). The user-space build has no mm: always 0.
 *  - USER_LONG, USER_INT, USER_SHORT and USER_CHAR are one nofault read
 *    of 8, 4, 2 and 1 bytes of user memory at r[b], sign-extended; a
 *    fault gives 0, not an error (stap's user_long & co).
 *  - REGISTER reads word r[b] (unsigned) of the hit's struct pt_regs in
 *    x86-64 order (0 r15 .. 10 ax .. 14 di, 15 orig_ax, 16 ip, 17 cs,
 *    18 flags, 19 sp, 20 ss); 0 past ss or without registers (begin, end,
 *    plain timers; a tracepoint's are its raw arguments in di .. r9, ip
 *    0, so the tapset's register() refuses them as stap does, where ADDR
 *    is 0). (User space: 8 r9, 9 r8, 11 cx, 12 dx,
 *    13 si, 14 di are args[5..0], 10 ax is retval, 16 ip is ADDR's value,
 *    every other word 0.)
 *  - UADDR: the hit's instruction pointer when its registers are user
 *    mode, else the user registers current saved on kernel entry; 0 for
 *    a kernel thread. (User space: ADDR's value when USER_MODE, else 0.)
 *  - IS_RETURN looks at the handler stp_run() was given (the probe's),
 *    so a function it calls sees the same value: 1 for a kretprobe.
 *  - PID2TASK is pid_task(find_vpid(pid), PIDTYPE_PID) under RCU: 0 for
 *    pid <= 0, above INT_MAX or unknown. The address is only read through
 *    nofault KERNEL_* reads. (User space: TASK_CURRENT's value for
 *    pid == tid, else 0.)
 *  - MODNAME is the name of the module holding r[b] (kallsyms: any
 *    address inside a module), "kernel" for an address kallsyms resolves
 *    outside every module, else empty (the tapset raises stap's "Cannot
 *    determine kernel module name"). (User space: always empty.)
 *  - RANDOM is x % r[b] (r[b] unsigned) for x the environment's next
 *    pseudo-random 32-bit number (the kernel: a per-CPU xorshift, no lock;
 *    user space: the test environment's value); the tapset's randint(n)
 *    refuses n outside [0, 2^20] with stap's "range too wide" first.
 *  - CPU_ONLINE: r[b] (signed) in [0, nr_cpu_ids) and online. (User space:
 *    the environment's cpu, and the bits of its online mask.)
 *  - GET_CYCLES is the kernel's get_cycles() (the TSC on x86-64), HZ its
 *    HZ: the running kernel's, as the module is built for it.
 *  - VALUE, VALUE_SET, VALUE_APPEND: a procfs or input probe's $value
 *    (abi.h: procfs files, STP_IOC_INPUT). In a PROCFS_WRITE handler
 *    VALUE is the bytes written (or the input byte or line); in a
 *    PROCFS_READ handler it is the file's buffer as filled so far (empty
 *    at the start of the handler), and VALUE_SET / VALUE_APPEND replace
 *    it with s[b] or append s[b] to it, cut at the file's size; they
 *    return the buffer's new length. VALUE is cut at MAXSTRINGLEN - 1
 *    bytes. (User space: the test environment's value.)
 *  - VERDICT, VERDICT_SET: a netfilter probe's $verdict (abi.h: netfilter
 *    hooks), the hook's return value. VERDICT_SET of STP_NF_DROP or
 *    STP_NF_ACCEPT sets it and returns it; any other r[b] sets
 *    STP_NF_ACCEPT and ends the run with STP_RTE_VERDICT (address r[b]),
 *    which a try/catch may catch: the verdict stays STP_NF_ACCEPT. (User
 *    space: the test environment's verdict.)
 *  - UARG reads argument r[b] (1-based) of the USDT marker whose uprobe
 *    fired, by its spec (abi.h: user-space probes): a constant, a user
 *    register, or user memory at a register plus a displacement (one
 *    nofault read; a fault reads 0, as user_long does); then cut to the
 *    spec's size and sign-extended when signed. r[b] == 0 gives the
 *    number of arguments; r[b] above it (unsigned) gives 0. (User space:
 *    the test environment's registers and memory.)
 *  - UBACKTRACE: the user stack of current, innermost first, formatted
 *    as BACKTRACE (0x<lowercase hex>, one space between, whole frames
 *    within MAXSTRINGLEN - 1 bytes, at most STP_MAX_BACKTRACE). The user
 *    registers are the hit's when they are user mode (uprobes,
 *    timer.profile in user mode), else those current saved on kernel
 *    entry; none for a kernel thread (empty). Frame 0 is their ip; at a
 *    function's first byte (a USYMS symbol's offset 0: the frame is not
 *    built yet) frame 1 is the return address at sp; then the frame-
 *    pointer chain: the return address at [bp + 8] and the next bp at
 *    [bp], while bp is 8-aligned and grows strictly, nofault reads
 *    succeed and the address is not 0. (User space: the frames the test
 *    environment gives, as BACKTRACE.)
 *  - USYMNAME, USYMDATA, USYMFULL, USYMBRIEF, USYMSIMPLE, UMODNAME look
 *    r[b] up in the user symbol tables (abi.h: user-space symbol tables)
 *    through current's VMA holding it, in stap's formats (sym.c
 *    _stp_snprint_addr: %p is 0x<lowercase hex>): USYMNAME the name, else
 *    0x<hex>; USYMDATA name+0x<off>/0x<size> [path], else 0x<hex>
 *    [path+0x<off>/0x<size>] for a known binary (offset from the VMA's
 *    start, size the VMA's), else 0x<hex>; USYMFULL " 0x<hex> : " then
 *    USYMDATA's text when there is a name, else " " then it, and "\n";
 *    USYMBRIEF name+0x<off> else 0x<hex>, and "\n"; USYMSIMPLE
 *    name+0x<off> [basename], else 0x<hex> [basename+0x<off>], else
 *    0x<hex>, and "\n"; UMODNAME the binary's path, else empty. Results
 *    are cut at MAXSTRINGLEN - 1 bytes. Without the mmap lock (contended,
 *    or outside task context) nothing is known. (User space: no symbols,
 *    the forms for an unknown address.)
 *  - PP is the string stp_probe_desc.pp of the probe that fired (struct
 *    stp_run_ctx.probe, so a function it calls sees the same), cut at
 *    MAXSTRINGLEN - 1 bytes; empty when the run names no probe. (User
 *    space: the first probe of the handler run.)
 *
 * Columns: name, result, argument, contexts, meaning.
 */
#ifndef STAPVM_HELPERS_H
#define STAPVM_HELPERS_H

#define STP_HELPERS(X)							\
	X(PID,            INT, NONE, ANY,   "pid(): thread group id of current") \
	X(TID,            INT, NONE, ANY,   "tid(): thread id of current")	\
	X(PPID,           INT, NONE, ANY,   "ppid(): parent's thread group id") \
	X(UID,            INT, NONE, ANY,   "uid(): real user id")		\
	X(EUID,           INT, NONE, ANY,   "euid(): effective user id")	\
	X(GID,            INT, NONE, ANY,   "gid(): real group id")		\
	X(CPU,            INT, NONE, ANY,   "cpu(): current processor")	\
	X(GETTIMEOFDAY_NS, INT, NONE, ANY,  "gettimeofday_ns(): wall clock, ns") \
	X(LOCAL_CLOCK_NS, INT, NONE, ANY,   "local_clock_ns(): monotonic clock, ns") \
	X(JIFFIES,        INT, NONE, ANY,   "jiffies()")			\
	X(EXECNAME,       STR, NONE, ANY,   "execname(): current->comm")	\
	X(RETVAL,         INT, NONE, RET,   "$return / retval() in a return probe") \
	X(ARG,            INT, INT,  ENTRY, "the r[b]-th (0-based) integer argument at function entry") \
	X(KERNEL_LONG,    INT, INT,  ANY,   "kernel_long(addr), nofault")	\
	X(KERNEL_STRING,  STR, INT,  ANY,   "kernel_string(addr), nofault")	\
	X(USER_STRING,    STR, INT,  ANY,   "user_string(addr), nofault") \
	X(ADDR,           INT, NONE, ANY,   "addr(): instruction pointer of the probed or interrupted context, 0 without registers") \
	X(USER_MODE,      INT, NONE, ANY,   "user_mode(): 1 if the probed or interrupted context is user mode") \
	X(SYMNAME,        STR, INT,  ANY,   "symname(addr): kernel symbol name, or 0x<hex> when none") \
	X(SYMDATA,        STR, INT,  ANY,   "symdata(addr): name+0xoff/0xsize [module], or 0x<hex> when none") \
	X(PEXECNAME,      STR, NONE, ANY,   "pexecname(): the parent's comm") \
	X(BACKTRACE,      STR, NONE, ANY,   "backtrace(): kernel stack as 0x<hex> addresses, space-separated") \
	X(USER_STRING_OK, INT, INT,  ANY,   "1 if user_string(addr) would copy without a fault, else 0") \
	X(MM_ARG,         INT, INT,  ANY,   "current->mm->arg_start (r[b] == 0) or arg_end (else), 0 without an mm") \
	X(TASK_CURRENT,   INT, NONE, ANY,   "task_current(): address of current's task_struct") \
	X(KERNEL_INT,     INT, INT,  ANY,   "kernel_int(addr): 4 bytes, sign-extended, nofault") \
	X(KERNEL_SHORT,   INT, INT,  ANY,   "kernel_short(addr): 2 bytes, sign-extended, nofault") \
	X(KERNEL_CHAR,    INT, INT,  ANY,   "kernel_char(addr): 1 byte, sign-extended, nofault") \
	X(EGID,           INT, NONE, ANY,   "egid(): effective group id") \
	X(HZ,             INT, NONE, ANY,   "HZ(): the running kernel's timer tick rate") \
	X(GET_CYCLES,     INT, NONE, ANY,   "get_cycles(): the processor's cycle counter, 0 without one") \
	X(CPU_ONLINE,     INT, INT,  ANY,   "1 if r[b] is an online processor, else 0") \
	X(RANDOM,         INT, INT,  ANY,   "randint(n): a pseudo-random number in [0, r[b]) (unsigned), 0 for r[b] == 0") \
	X(USER_LONG,      INT, INT,  ANY,   "user_long(addr): 8 bytes of user memory, nofault, 0 on a fault") \
	X(USER_INT,       INT, INT,  ANY,   "user_int(addr): 4 bytes, sign-extended, nofault, 0 on a fault") \
	X(USER_SHORT,     INT, INT,  ANY,   "user_short(addr): 2 bytes, sign-extended, nofault, 0 on a fault") \
	X(USER_CHAR,      INT, INT,  ANY,   "user_char(addr): 1 byte, sign-extended, nofault, 0 on a fault") \
	X(REGISTER,       INT, INT,  ANY,   "the r[b]-th 8-byte word of the hit's struct pt_regs (x86-64), 0 without registers or past ss") \
	X(UADDR,          INT, NONE, ANY,   "uaddr(): the user-mode instruction pointer of current, 0 without one") \
	X(IS_RETURN,      INT, NONE, ANY,   "is_return(): 1 in a return probe's handler (and the functions it calls), else 0") \
	X(PID2TASK,       INT, INT,  ANY,   "pid2task(pid): address of the task_struct of thread r[b] (current's pid namespace), 0 if none") \
	X(MODNAME,        STR, INT,  ANY,   "the module holding kernel address r[b], \"kernel\" for the kernel image, \"\" when unknown") \
	X(VALUE,          STR, NONE, VALUE, "$value of a procfs or input probe") \
	X(VALUE_SET,      INT, STR,  PROCFS_READ, "$value = s[b] in a procfs read probe; the new length") \
	X(VALUE_APPEND,   INT, STR,  PROCFS_READ, "$value .= s[b] in a procfs read probe; the new length") \
	X(VERDICT,        INT, NONE, NETFILTER, "$verdict of a netfilter probe: NF_ACCEPT (1) until set") \
	X(VERDICT_SET,    INT, INT,  NETFILTER, "$verdict = r[b] in a netfilter probe: NF_DROP (0) or NF_ACCEPT (1), else an error and NF_ACCEPT; the verdict") \
	X(PP,             STR, NONE, ANY,   "pp(): the probe point of the probe that fired (its pp string)") \
	X(UARG,           INT, INT,  UPROBE, "$argN of a USDT marker for r[b] = N (1-based), $arg_count for r[b] = 0") \
	X(UBACKTRACE,     STR, NONE, ANY,   "ubacktrace(): the user stack of current as 0x<hex> addresses, space-separated") \
	X(USYMNAME,       STR, INT,  ANY,   "usymname(addr): user symbol name, or 0x<hex> when none") \
	X(USYMDATA,       STR, INT,  ANY,   "usymdata(addr): name+0xoff/0xsize [path], 0x<hex> [path+0xoff/0xsize], or 0x<hex>") \
	X(USYMFULL,       STR, INT,  ANY,   "a print_ubacktrace() line of addr: \" 0x<hex> : \" usymdata, newline") \
	X(USYMBRIEF,      STR, INT,  ANY,   "a print_ubacktrace_brief() line of addr: name+0xoff or 0x<hex>, newline") \
	X(USYMSIMPLE,     STR, INT,  ANY,   "a sprint_ubacktrace() line of addr: name+0xoff [basename], newline") \
	X(UMODNAME,       STR, INT,  ANY,   "the path of the user binary mapped at addr in current, \"\" when unknown")

/* Helper ids: STP_HLP_PID == 0, in table order. */
enum stp_helper {
#define STP_X_HELPER_ENUM(name, res, arg, ctx, doc) STP_HLP_##name,
	STP_HELPERS(STP_X_HELPER_ENUM)
#undef STP_X_HELPER_ENUM
	STP_HLP__COUNT
};

/* Result kind of a helper. */
enum stp_helper_res {
	STP_HRES_INT,
	STP_HRES_STR,
};

/* Argument kind of a helper. */
enum stp_helper_arg {
	STP_HARG_NONE,
	STP_HARG_INT,
	STP_HARG_STR,
};

/* Description of one helper, as data for verifiers and disassemblers. */
struct stp_helper_info {
	const char *name;
	const char *doc;
	unsigned char res;		/* enum stp_helper_res */
	unsigned char arg;		/* enum stp_helper_arg */
	unsigned short ctx_mask;	/* STP_CTXM_* bits */
};

/*
 * STP_HELPER_INFO_INIT expands to the initialiser of a
 * `struct stp_helper_info [STP_HLP__COUNT]` table (defined once, in
 * kmod/core/isa.c). STP_CTXM_ANY/ENTRY/RET come from abi.h.
 */
#define STP_X_HELPER_INFO(name, res, arg, ctx, doc)			\
	[STP_HLP_##name] = { #name, doc, STP_HRES_##res, STP_HARG_##arg, \
			     STP_CTXM_##ctx },
#define STP_HELPER_INFO_INIT { STP_HELPERS(STP_X_HELPER_INFO) }

/*
 * The helpers that read kernel memory at an address the program chooses.
 * Under the kernel's lockdown in confidentiality mode the module refuses a
 * program that calls one (kmod/lockdown.c), as the kernel refuses BPF
 * programs that read kernel memory. The opcodes that do: opcodes.h
 * STP_OPS_READ_KERNEL.
 */
#define STP_HELPERS_READ_KERNEL(X)					\
	X(KERNEL_LONG) X(KERNEL_STRING) X(KERNEL_INT) X(KERNEL_SHORT)	\
	X(KERNEL_CHAR)

#endif /* STAPVM_HELPERS_H */
