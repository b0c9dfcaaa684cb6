/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * stp_core.h - the API of the stapvm C core: the verifier (verify.c), the
 * interpreter (vm.c, with vm_str.c and vm_stat.c), associative arrays
 * (map.c), the producer side of a per-CPU ring (ring.c), stap's printf
 * formatting (format.c) and the opcode/helper/error tables (isa.c).
 *
 * The same sources build into stapvm.ko and, through vm-spec/build.rs, into
 * a user-space static library that the Rust tests and the CLI link. The
 * core includes nothing but "stp_env.h" and "stapvm/abi.h"; everything that
 * differs between kernel and user space comes from stp_env.h, which does NOT
 * live in kmod/core/: the kernel build finds kmod/stp_env.h, user space
 * finds vm-spec/csrc/stp_env.h.
 *
 * Left out: loading, sessions, probes, ring allocation and mapping, the
 * consumer side of the rings. Those belong to the kernel glue (the .c files of kmod/)
 * and to user space.
 *
 * ====================================================================
 * The stp_env.h contract (checklist for an environment's author)
 * ====================================================================
 *
 * Every item must exist before "stapvm/abi.h" is included by the core, and
 * all functions may be (and should be) static inline. "env" is the opaque
 * pointer the caller put in struct stp_run_ctx.env (the kernel may pass a
 * struct pt_regs or its own per-hit context; user space passes a struct
 * stp_host_env). Functions marked [any] are called from stp_run() and must
 * be safe in every context stp_run() is called in. The kernel glue calls
 * it with preemption disabled and the session's per-CPU nesting guard
 * held, from process context (begin/end), hardirq (timers) and kprobe,
 * kretprobe or tracepoint context, which is NMI context when the probed
 * code runs in an NMI handler. The guard keeps a session's own hits from
 * nesting on a CPU, but a hit of another session may interrupt stp_run()
 * at any instruction, from NMI too. So [any] functions must be NMI-safe
 * and reentrant: no sleeping, no lock but the map lock's single trylock
 * attempts (an NMI that interrupts the holder on its CPU fails them
 * instead of deadlocking), no direct wakeup (stp_env_ring_wakeup queues
 * one), no allocation, never fault, no state shared across calls that an
 * interrupting call could find half updated.
 *
 *  [ ] Types: u8 u16 u32 u64 s8 s16 s32 s64 bool true false NULL, and the
 *      __u8 .. __s64 types of <linux/types.h> (abi.h includes
 *      <linux/types.h>, <linux/ioctl.h>, <linux/errno.h> itself; the
 *      kernel's and the uapi headers both work). u64 must be the same
 *      type as __u64 (unsigned long long), s64 as __s64, and so on, as
 *      in the kernel: the core passes &abi_struct->u64_field as u64 *.
 *  [ ] Error numbers used by abi.h: EINVAL E2BIG ENOEXEC EPROTO ERANGE
 *      EBADMSG ENOMEM EFAULT (positive values; the core returns -E*).
 *  [ ] memcpy, memmove, memset, memchr, memcmp, strnlen with their
 *      libc/kernel signatures; ARRAY_SIZE(a) (kernel: linux/kernel.h).
 *  [ ] STP_ENV_PAGE_SIZE: the page size (power of two); string helpers
 *      never let one nofault copy cross a page boundary.
 *  [ ] STP_READ_ONCE(x), STP_WRITE_ONCE(x, v): single, untorn access to
 *      an aligned 64-bit lvalue (kernel: READ_ONCE/WRITE_ONCE).
 *  [ ] u64 stp_load_acquire_u64(const u64 *p)
 *      void stp_store_release_u64(u64 *p, u64 v)
 *      (kernel: smp_load_acquire / smp_store_release).
 *  [ ] void stp_env_mb(void): a full memory barrier, ordering earlier
 *      stores before later loads (kernel: smp_mb(); user space:
 *      __atomic_thread_fence(__ATOMIC_SEQ_CST)). ring.c puts it between
 *      the store-release of producer_pos and the load of consumer_pos that
 *      decides the wakeup (its partner: ring.c's comment). [any]
 *  [ ] s64 stp_env_atomic_add_return(s64 *p, s64 v): atomically *p += v,
 *      return the new value (kernel: atomic64_add_return on the slot, or
 *      arch_atomic64 on a cast; globals are s64 slots, 8-byte aligned). [any]
 *  [ ] u64 stp_env_time_ns(void *env): monotonic clock in ns, the record
 *      time stamp used to merge CPUs (kernel: ktime_get_mono_fast_ns or
 *      local_clock; must be callable from any probe context). [any]
 *  [ ] u64 stp_env_wall_ns(void *env): wall clock in ns since the epoch
 *      (kernel: ktime_get_real_fast_ns). [any]
 *  [ ] s64 stp_env_pid(void *env), stp_env_tid, stp_env_ppid,
 *      stp_env_uid, stp_env_euid, stp_env_gid, stp_env_cpu,
 *      stp_env_jiffies: identity of current (uid/gid in the initial user
 *      namespace), the CPU id, jiffies. [any]
 *  [ ] u32 stp_env_comm(void *env, char *buf, u32 max): copy current's
 *      comm (no NUL needed) into buf, at most max bytes; return the length
 *      (<= max, stopping at the first NUL of comm). [any]
 *  [ ] s64 stp_env_retval(void *env): the probed function's return value
 *      (only called from STP_CTX_KRETPROBE handlers). [any]
 *  [ ] s64 stp_env_arg(void *env, u32 n): the n-th (0-based) integer
 *      argument at function entry (only called from STP_CTX_KPROBE
 *      handlers, and from STP_CTX_NETFILTER ones: the hook's arguments).
 *      n is script-controlled and may be anything: return 0 for an
 *      argument the calling convention does not have. [any]
 *  [ ] int stp_env_read_kernel(void *env, void *dst, u64 addr, u32 n)
 *      int stp_env_read_user(void *env, void *dst, u64 addr, u32 n)
 *      copy n bytes (n <= STP_ENV_PAGE_SIZE) from a kernel or user address;
 *      return 0 or -EFAULT and never fault (kernel:
 *      copy_from_kernel_nofault / copy_from_user_nofault; user reads must
 *      also work from hardirq context, which copy_from_user_nofault does).
 *      On -EFAULT the contents of dst are unspecified. [any]
 *  [ ] void stp_env_ring_wakeup(struct stp_ring *r): tell the consumer of
 *      r that data arrived. Called from probe context after a commit that
 *      found the consumer caught up: it must not take a waitqueue lock
 *      directly (kernel: irq_work_queue on r->owner's irq_work). struct
 *      stp_ring is incomplete while stp_env.h is parsed, so this is a
 *      macro or a function defined out of line. [any]
 *  [ ] STP_ENV_JUMP_TABLE: an attribute for the interpreter's
 *      computed-goto table, so objtool understands its indirect jumps
 *      (kernel: __annotate_jump_table, as kernel/bpf/core.c); may be left
 *      undefined (vm.c then defines it empty), user space does.
 *  [ ] u32 stp_env_value(void *env, char *dst, u32 max): copy the
 *      probe's $value (helpers.h: VALUE; only called from PROCFS_READ and
 *      PROCFS_WRITE handlers) into dst, at most max bytes; return the
 *      length. s64 stp_env_value_set(void *env, const char *src, u32 len,
 *      bool append): replace (or append to) a PROCFS_READ probe's buffer
 *      with len bytes at src, cut at the buffer's size; return its new
 *      length (only called from PROCFS_READ handlers). [any]
 *  [ ] s64 stp_env_verdict(void *env), void stp_env_verdict_set(void
 *      *env, s64 v): a NETFILTER probe's verdict (helpers.h: VERDICT,
 *      VERDICT_SET; only called from NETFILTER handlers; v is
 *      STP_NF_DROP or STP_NF_ACCEPT, vm.c checks it). [any]
 *  [ ] u32 stp_env_ubacktrace(void *env, char *buf, u32 max) and u32
 *      stp_env_usym(void *env, u64 addr, u32 helper, char *buf, u32
 *      max): the user stack of current and the user symbol of addr in
 *      the format of `helper` (helpers.h: UBACKTRACE, USYMNAME ..
 *      UMODNAME) into buf, at most max bytes; return the length. The
 *      symbol tables are the program's (struct stp_prog usym_bins,
 *      usyms, usymstr), which the environment reaches through env. [any]
 *  [ ] void *stp_env_zalloc(u64 size), void stp_env_free(void *p):
 *      zeroed memory for the verifier's scratch (process context only;
 *      kernel: kvzalloc(GFP_KERNEL) / kvfree). stp_env_free(NULL) is a
 *      no-op.
 *
 *  [ ] stp_env_map_lock_t: a map's lock, usable from any probe context;
 *      void stp_env_map_lock_init(stp_env_map_lock_t *l) (process
 *      context); bool stp_env_map_trylock(stp_env_map_lock_t *l,
 *      unsigned long *flags): one attempt, never spins (kernel:
 *      raw_spin_trylock_irqsave); void stp_env_map_unlock(
 *      stp_env_map_lock_t *l, unsigned long flags); void
 *      stp_env_cpu_relax(void) between two polls (kernel: udelay of
 *      stap's TRYLOCKDELAY, 10 us; user space: nothing). [any]
 *
 * Nothing else: the core uses no other kernel or libc function.
 */
#ifndef STP_CORE_H
#define STP_CORE_H

#include "stp_env.h"
#include "stapvm/abi.h"

/* ------------------------------------------------------------------ */
/* Tables (isa.c)                                                      */

/* One row of STP_VERIFY_ERRORS. */
struct stp_verr_info {
	const char *name;	/* "BAD_MAGIC" */
	int err;		/* positive errno for the LOAD ioctl */
	const char *msg;	/* generic message */
};

/* One row of STP_RUNTIME_ERRORS. */
struct stp_rte_info {
	const char *name;	/* "DIVZERO" */
	const char *msg;	/* stap's message; may hold one %llx */
};

extern const struct stp_opcode_info stp_opcode_info[STP_OP__COUNT];
extern const struct stp_helper_info stp_helper_info[STP_HLP__COUNT];
extern const struct stp_verr_info stp_verr_info[STP_VERR__COUNT];
extern const struct stp_rte_info stp_rte_info[STP_RTE__COUNT];

/* ------------------------------------------------------------------ */
/* Verifier (verify.c)                                                 */

/*
 * A verified program: typed views into the image (which the caller owns
 * and must keep alive and unchanged while the program is used). Every
 * count has been checked against its cap and every index in the code
 * against the matching count.
 */
struct stp_prog {
	const struct stp_image_hdr *hdr;
	const struct stp_insn *code;
	const struct stp_handler_desc *handlers;
	const struct stp_probe_desc *probes;
	const s64 *konsts;
	const struct stp_str_desc *strs;
	const u8 *strdata;
	const struct stp_format_desc *formats;
	const struct stp_stat_desc *stats;
	u32 ninsns;
	u32 nhandlers;
	u32 nprobes;
	u32 nkonsts;
	u32 nstrs;
	u32 strdata_size;
	u32 nformats;
	u32 nglobals;
	u32 nfuncs;			/* handlers of STP_CTX_FUNCTION */
	u32 nstats;			/* statistics */
	u32 stat_bytes;			/* per-CPU bytes of all statistics */
	const struct stp_map_desc *maps;
	u32 nmaps;			/* associative arrays */
	u32 niters;			/* iterators per CPU (iter_frame x levels) */
	u32 iter_cap;			/* the largest map capacity */
	u32 iter_frame;			/* 1 + the largest MIT iterator */
	u64 map_bytes;			/* stp_map_size() of all maps */
	const struct stp_regex_desc *regexes;
	const u16 *rxdata;		/* REGEXDATA: DFA transitions */
	u32 nregexes;
	u32 rxdata_len;			/* entries of REGEXDATA */
	const struct stp_regex_sub *rxsubs;	/* REGEXSUBS: group programs */
	const u32 *rxprog;		/* REGEXPROG: their instructions */
	const struct stp_regex_set *rxsets;	/* REGEXSETS: their byte sets */
	u32 nrxsubs;			/* 0, or nregexes */
	u32 rxprog_len;			/* instructions in REGEXPROG */
	u32 nrxsets;			/* sets in REGEXSETS */
	u32 rx_groups;			/* 1: some regex has a group program */
	const struct stp_pretty_node *pretty;	/* PRETTY: type nodes */
	u32 npretty;
	const u64 *uargs;		/* UARGS: USDT argument specs */
	u32 nuargs;
	/* USYMBINS, USYMS, USYMSTR: user-space symbol tables (abi.h) */
	const struct stp_usym_bin *usym_bins;
	const struct stp_usym *usyms;
	const u8 *usymstr;
	u32 nusym_bins;
	u32 nusyms;
	u32 usymstr_size;
	u32 limits[STP_LIM__COUNT];	/* copied from the header */
};

/* Why an image was refused. */
struct stp_verify_result {
	u32 code;		/* enum stp_verify_error; STP_VERR_OK on success */
	u32 where;		/* instruction index (into CODE) or entry index */
	char msg[STP_LOG_MAX];	/* NUL-terminated, e.g. "insn 12: ..." */
};

/*
 * stp_verify - check an image completely and fill *prog on success.
 * @image: the image, 8-byte aligned, owned by the caller.
 * @size: its size in bytes.
 * Context: process (allocates scratch with stp_env_zalloc).
 * Return: 0, or -errno from STP_VERIFY_ERRORS with *res filled.
 */
int stp_verify(const void *image, u32 size, struct stp_prog *prog,
	       struct stp_verify_result *res);

/*
 * stp_verify_size - stp_verify's first check, the image size cap, alone:
 * for the LOAD ioctl, which must refuse an image before allocating it.
 * Return: 0, or -errno of STP_VERR_TOO_BIG with *res filled.
 */
int stp_verify_size(u32 size, struct stp_verify_result *res);

/* ------------------------------------------------------------------ */
/* Rings (ring.c)                                                      */

/*
 * The producer's view of one per-CPU ring (abi.h draws the mapping).
 * data is size bytes mapped twice back to back, so a record of at most
 * size bytes starting at data + (pos & (size - 1)) never wraps. size is
 * a power of two. owner is the environment's (e.g. for the wakeup).
 */
struct stp_ring {
	struct stp_ring_cons *cons;	/* user-writable: never trusted */
	struct stp_ring_prod *prod;
	u8 *data;
	u64 size;
	void *owner;
};

/*
 * stp_ring_reserve - room for one record of len bytes (a multiple of 8).
 * Returns NULL (and counts a drop) when the ring is full or the consumer
 * position is out of range. Single producer per ring.
 * Context: any (the caller holds the per-CPU nesting guard).
 */
void *stp_ring_reserve(struct stp_ring *r, u32 len);

/*
 * stp_ring_commit - publish the record that the last stp_ring_reserve
 * returned (rec, len as reserved). Wakes the consumer if it had caught up.
 * Context: any.
 */
void stp_ring_commit(struct stp_ring *r, void *rec, u32 len);

/* ------------------------------------------------------------------ */
/* Interpreter (vm.c)                                                  */

/*
 * One user-function frame: the callee's integer registers and string
 * lengths (its string bytes are in the frame memory after the frames),
 * and where to go back to in the caller.
 */
struct stp_frame {
	u64 r[STP_MAX_REGS];
	u32 slen[STP_MAX_SREGS];
	const struct stp_insn *ret_ip;	/* caller's next instruction */
	u32 caller;			/* caller's handler index */
	u8 dst;				/* caller's result register */
	u8 caller_creg;			/* caller's catch message register */
	u8 pad[2];
	u32 caller_catch;		/* caller's armed catch pc + 1, 0: none */
	u32 pad2;
};

/*
 * Per-CPU registers. The caller allocates sbuf: STP_MAX_SREGS strings of
 * str_cap + 1 bytes each (stp_vm_sbuf_size()), str_cap being the
 * program's MAXSTRINGLEN. For a program with functions (prog->nfuncs) it
 * also allocates frames: nframes frames (MAXNESTING of the program, the
 * depth calls may reach) of stp_vm_frames_size(nframes, str_cap) bytes,
 * 8-byte aligned; with frames == NULL or nframes == 0 every call fails
 * with STP_RTE_MAXNESTING. Contents between runs are meaningless, except
 * the tokenizer's (STOK): tok is NULL (STOK then always gives "") or
 * str_cap bytes, zeroed with tok_pos and tok_len at allocation, and keeps
 * its state across runs as stap's per-CPU context does. rx is NULL (then
 * every REMATCHS is BADOP and MATCHED / NGROUPS see a failed match) or,
 * for a program with group programs (stp_prog.rx_groups),
 * stp_rx_state_size(str_cap) bytes, 8-aligned; stp_run() marks it
 * "failed" at entry.
 */
struct stp_vm {
	u64 r[STP_MAX_REGS];
	u32 slen[STP_MAX_SREGS];
	u32 str_cap;		/* MAXSTRINGLEN of the program */
	char *sbuf;
	void *frames;		/* NULL, or stp_vm_frames_size() bytes */
	u32 nframes;		/* frames there is memory for */
	u32 pad;
	char *tok;		/* NULL, or str_cap bytes: STOK's input copy */
	u32 tok_pos;		/* 0: no token left; else 1 + next token's offset */
	u32 tok_len;		/* bytes of tok in use */
	u32 pad2;
	struct stp_rx_state *rx;	/* NULL, or REMATCHS's group state */
};

/*
 * One CPU's regex group state (opcodes.h: REMATCHS, MATCHED, NGROUPS):
 * the last match of this run (result, its slots, a copy of the subject
 * after the struct, str_cap bytes) and the Pike VM's scratch: two thread
 * lists (sparse sets over the program's pcs, dense in priority order,
 * with each entry's slots), the closure's current slots and its explicit
 * stack (each pc enters a list at most once per position and pushes at
 * most one entry: ninsn + 1 entries suffice). Positions are u16
 * (MAXSTRINGLEN <= 4096); STP_RX_UNSET is a slot never written. About
 * 34 KB plus str_cap.
 */
#define STP_RX_UNSET		0xffffu
#define STP_RX_STACK		(2 * STP_MAX_REGEX_INSNS)

struct stp_rx_frame {
	u16 pc;			/* EXPLORE: the pc; RESTORE: the slot */
	u16 old;		/* RESTORE: the slot's value before SAVE */
	u16 restore;		/* 1: RESTORE, 0: EXPLORE */
	u16 pad;
};

struct stp_rx_state {
	u32 result;		/* 1: this run's last REMATCHS found a match */
	u32 nslots;		/* of that regex */
	u32 len;		/* bytes of the subject copy */
	u32 pad;
	u16 caps[STP_MAX_REGEX_SLOTS];	/* the match's slots */
	u16 cur[STP_MAX_REGEX_SLOTS];	/* closure: the thread's slots */
	u16 count[2];			/* entries (pcs visited) of each list */
	u16 threads[2];			/* ... of which SET or MATCH */
	u16 dense[2][STP_MAX_REGEX_INSNS];	/* pcs, priority order */
	u16 sparse[2][STP_MAX_REGEX_INSNS];	/* pc -> dense index */
	u16 tcaps[2][STP_MAX_REGEX_INSNS][STP_MAX_REGEX_SLOTS];
	struct stp_rx_frame stack[STP_RX_STACK];
	char subj[];			/* str_cap bytes */
};

/* Bytes of stp_vm.rx for a given MAXSTRINGLEN. */
static inline u64 stp_rx_state_size(u32 maxstringlen)
{
	return ((u64)sizeof(struct stp_rx_state) + maxstringlen + 7) & ~7ull;
}

/* Bytes of stp_vm.sbuf for a given MAXSTRINGLEN. */
static inline u64 stp_vm_sbuf_size(u32 maxstringlen)
{
	return (u64)STP_MAX_SREGS * ((u64)maxstringlen + 1);
}

/*
 * Bytes of stp_vm.frames for nframes frames: the struct stp_frame array,
 * then each frame's string bytes (stp_vm_sbuf_size(maxstringlen), rounded
 * up to 8). The verifier refuses a program with functions for which
 * MAXNESTING frames would take more than STP_MAX_FRAME_BYTES.
 */
static inline u64 stp_vm_frames_size(u32 nframes, u32 maxstringlen)
{
	u64 sb = (stp_vm_sbuf_size(maxstringlen) + 7) & ~7ull;

	return (u64)nframes * (sizeof(struct stp_frame) + sb);
}

/*
 * One CPU's copy of one statistic (stap's struct stat_data), followed in
 * memory by its stp_stat_desc.nbuckets __s64 buckets. All zero is the
 * empty statistic.
 */
struct stp_stat_cpu {
	s64 count;
	s64 sum;
	s64 min;
	s64 max;
	s64 avg_s;		/* Welford: running mean << shift */
	s64 m2;			/* Welford: sum of squared deviations */
	s64 variance_s;		/* m2 / (count - 1), -1 below 2 samples */
	s64 pad;
};

/* Bytes of one statistic's per-CPU copy (its buckets included). */
static inline u64 stp_stat_size(const struct stp_stat_desc *d)
{
	return sizeof(struct stp_stat_cpu) + (u64)d->nbuckets * sizeof(s64);
}

/*
 * Where a run finds the statistics: the copy of CPU i starts at
 * base + i * stride (stride >= stp_prog.stat_bytes, 8-aligned), for i in
 * [0, ncpus); the running CPU is cpu (< ncpus). A CPU id without a CPU
 * keeps an all-zero (empty) copy. Zeroed memory at LOAD is the empty
 * state. With base NULL every statistic instruction fails (BADOP).
 */
struct stp_stat_area {
	u8 *base;
	u64 stride;
	u32 ncpus;
	u32 cpu;
};

/* ------------------------------------------------------------------ */
/* Associative arrays (map.c)                                          */

/*
 * A map's lock: the environment's stp_env_map_lock_t (kernel: a
 * raw_spinlock_t taken with irqsave), held for one instruction.
 *
 * Storage: one block of stp_map_size() bytes per map, allocated and
 * zeroed by the caller at LOAD and set up by stp_map_init(): this header,
 * nbuckets u32 hash-chain heads, then capacity fixed-size entries. An
 * entry is struct stp_map_ent, the value (a s64, or a string: u32 length
 * and str_cap bytes), the long keys (s64 each), the string keys (u32
 * length and str_cap bytes each), every part 8-aligned. Free entries are
 * on a free list; used ones are on their hash chain and on the
 * insertion-order list (oldest first: a wrap map's victim, and the
 * unsorted foreach order). Every walk is bounded by the capacity.
 */
struct stp_map_ent {
	u32 hnext;		/* hash chain, or the free list */
	u32 prev;		/* insertion order */
	u32 next;
	u32 used;		/* 1: holds an entry */
	u64 seq;		/* insertion number (1, 2, ...) */
};

#define STP_MAP_NIL	0xffffffffu

struct stp_map {
	stp_env_map_lock_t lock;
	u32 nlong;		/* long keys */
	u32 nstr;		/* string keys */
	u32 nkeys;
	u32 str_mask;		/* bit i: key i is a string */
	u32 value;		/* enum stp_map_value */
	u32 flags;		/* STP_MAP_F_* */
	u32 capacity;
	u32 nbuckets;		/* power of two */
	u32 str_cap;		/* MAXSTRINGLEN */
	u32 str_slot;		/* bytes of a stored string, 8-aligned */
	u32 ent_size;
	u32 val_off;		/* from the entry's start */
	u32 lkey_off;
	u32 skey_off;
	u32 count;		/* used entries */
	u32 free_head;
	u32 head;		/* oldest */
	u32 tail;		/* newest */
	u64 seq;		/* last insertion number */
	u32 *buckets;
	u8 *ents;
};

/* A key tuple, as the VM passes it: longs and strings in key order. */
struct stp_map_key {
	const u64 *lk;			/* nlong values */
	const char *sk[STP_MAX_MAP_KEYS];
	u32 sl[STP_MAX_MAP_KEYS];	/* lengths, <= str_cap */
};

/* Bytes of the storage of map d at MAXSTRINGLEN maxstr. */
u64 stp_map_size(const struct stp_map_desc *d, u32 maxstr);

/* Sets up zeroed storage of stp_map_size() bytes for map d. */
void stp_map_init(struct stp_map *m, const struct stp_map_desc *d,
		  u32 maxstr);

/*
 * stp_map_read - copy entries from slot *cursor on into out (abi.h:
 * STP_IOC_MAP_READ's layout), whole entries only; advances *cursor
 * (STP_MAP_READ_END past the last slot). Returns the number of entries,
 * or -E2BIG when not even one fits. The caller holds the lock, or nothing
 * else can touch the map.
 */
int stp_map_read(const struct stp_map *m, u32 *cursor, u8 *out, u32 size,
		 u32 *used);

/*
 * One entry of an iterator's index: a slot and its seq when taken, and
 * the sort key of an extractor order (a statistics array sorted by @sum,
 * @min, @max or @avg: the merged value, computed once per entry).
 */
struct stp_iter_ent {
	u32 slot;
	u32 gen;		/* low 32 bits of the entry's seq */
	s64 key;
};

/* One foreach iterator of one CPU. */
struct stp_iter {
	u32 map;		/* map it was filled from */
	u32 count;		/* entries in idx */
	u32 pos;		/* next one */
	u32 pad;
	struct stp_iter_ent *idx;	/* iter_cap entries */
};

/* Bytes of one CPU's iterators (struct stp_iter array, then indexes). */
static inline u64 stp_iters_size(u32 niters, u32 iter_cap)
{
	return (u64)niters * (sizeof(struct stp_iter) +
			      (u64)iter_cap * sizeof(struct stp_iter_ent));
}

/* Sets up zeroed memory of stp_iters_size() bytes; returns the array. */
struct stp_iter *stp_iters_init(void *mem, u32 niters, u32 iter_cap);

/* One run of one handler: inputs, then outputs. */
struct stp_run_ctx {
	/* in */
	const struct stp_prog *prog;	/* verified by stp_verify */
	u32 handler;			/* index into prog->handlers */
	u32 probe;			/* the probe that fired (PP), or U32_MAX */
	void *env;			/* passed to every stp_env_* call */
	s64 *globals;			/* prog->nglobals slots, 8-aligned */
	struct stp_ring *ring;		/* this CPU's ring */
	struct stp_stat_area stats;	/* prog->nstats > 0: statistics */
	struct stp_map **maps;		/* prog->nmaps maps (stp_map_init) */
	struct stp_iter *iters;		/* this CPU's prog->niters iterators */
	/* out */
	u32 exit_requested;		/* exit() ran */
	u32 error;			/* enum stp_runtime_error */
	u32 error_pc;			/* pc inside error_handler */
	u32 error_handler;		/* handler (maybe a function) failing */
	u64 error_addr;			/* faulting address, if any */
	u64 fuel_left;			/* MAXACTION units left */
	u32 skipped;			/* a map lock was not taken: skip */
	u32 pad;
	u64 lock_wait;			/* cycles waited for map locks */
};

/*
 * stp_run - run handler rc->handler of a verified program. It must be a
 * probe handler (a probe's), never a function (STP_CTX_FUNCTION): only
 * FCALL* enter those, and a function's RETI/RETS at depth 0 would pop a
 * frame that does not exist.
 * Return: STP_RTE_NONE (0), or the enum stp_runtime_error that ended the
 * handler (an STP_REC_ERROR record was written, if the ring had room).
 * Context: any, once the caller holds the per-CPU nesting guard for vm and
 * rc->ring; never sleeps, never allocates.
 */
int stp_run(struct stp_vm *vm, struct stp_run_ctx *rc);

/* ------------------------------------------------------------------ */
/* Formatting (format.c)                                               */

/* One printf argument: an integer, or a string of len bytes at s. */
struct stp_fmt_arg {
	u32 is_str;
	u32 len;
	s64 i;
	const char *s;
};

/*
 * stp_format - SystemTap printf: %d %i %u %x %X %o %c %s %p %%, one flag of
 * "-0+ #", width and precision (digits or '*'), and l/ll/h/z length
 * modifiers accepted and ignored. A missing argument formats as 0 / "",
 * an unknown conversion is copied as is.
 * Return: the length of the full output (snprintf-style); at most
 * out_size - 1 bytes are stored plus a NUL when out_size > 0.
 * Context: any.
 */
int stp_format(const char *fmt, u32 fmt_len, const struct stp_fmt_arg *args,
	       u32 nargs, char *out, u32 out_size);

/*
 * stp_format_hist - histogram d drawn as stap's _stp_stat_print_histogram
 * (`print(@hist_log(s))`; vm-spec/src/hist.rs draws the same in user
 * space): header, rows from two empty buckets before the first non-empty
 * one to two after the last, bars of '@' scaled to 50 columns, runs of
 * empty rows as one '~' line, a final empty line. bucket(ctx, i) gives
 * bucket i's count (i < d->nbuckets). Stores at most cap bytes (no NUL).
 * Return: the bytes stored.
 * Context: any.
 */
u32 stp_format_hist(const struct stp_stat_desc *d,
		    s64 (*bucket)(const void *ctx, u32 i), const void *ctx,
		    char *out, u32 cap);

#endif /* STP_CORE_H */
