/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * abi.h - everything user space and stapvm.ko must agree on, defined once:
 * the flat program image handed to the LOAD ioctl, the limits and their
 * caps, the ioctls, the mmap layout of the per-CPU rings, the record
 * layouts, and the verifier and run-time error codes.
 *
 * All multi-byte fields are little-endian (the module is x86-64 only for
 * now); every structure has fixed-width fields and explicit padding so its
 * layout is the same for gcc, clang and bindgen.
 */
#ifndef STAPVM_ABI_H
#define STAPVM_ABI_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/errno.h>

#include "opcodes.h"
#include "helpers.h"

/* ------------------------------------------------------------------ */
/* Instructions                                                        */

/* One instruction; see opcodes.h for the encoding. */
struct stp_insn {
	__u8 op;
	__u8 a;
	__u8 b;
	__u8 c;
	__s32 imm;
};

/* ------------------------------------------------------------------ */
/* Limits                                                              */

/*
 * Hard caps of the module: a program outside them is refused whatever it
 * says. They bound the memory and time a session can take.
 */
#define STP_MAX_IMAGE_SIZE	(4u << 20)	/* bytes of one image */
#define STP_MAX_INSNS		(1u << 16)	/* instructions, all handlers */
#define STP_MAX_HANDLERS	4096u
#define STP_MAX_PROBES		4096u
#define STP_MAX_KONSTS		(1u << 16)
#define STP_MAX_STRS		(1u << 16)
#define STP_MAX_FORMATS		(1u << 14)
#define STP_MAX_GLOBALS		4096u
#define STP_MAX_REGS		64u	/* integer registers per handler */
#define STP_MAX_SREGS		16u	/* string registers per handler */
#define STP_MAX_FMT_ARGS	32u	/* arguments of one printf */
#define STP_MAX_SYMBOL_LEN	127u	/* probe target symbol, bytes */
/* RING_PAGES' bounds (STP_LIMITS; no suffix: build.rs expands them to Rust) */
#define STP_MIN_RING_PAGES	4	/* data pages of one per-CPU ring */
#define STP_MAX_RING_PAGES	4096	/* power of two */
#define STP_LOG_MAX		512u	/* bytes of a LOAD error message */
#define STP_MAX_TIMER_NS	86400000000000ull /* one day: timer period */
#define STP_MAX_MAXACTIVE	4096u	/* kretprobe instances */
/*
 * Per-CPU memory for user-function frames (stp_vm_frames_size() in
 * kmod/core/stp_core.h: MAXNESTING frames of STP_MAX_REGS integers and
 * STP_MAX_SREGS strings of MAXSTRINGLEN + 1 bytes). A program with
 * functions whose limits need more is refused (BAD_LIMIT).
 */
#define STP_MAX_FRAME_BYTES	(2u << 20)
/*
 * Statistics (the STATS section): at most STP_MAX_STATS of them, taking
 * at most STP_MAX_STAT_BYTES of per-CPU memory together (stp_prog.
 * stat_bytes, kmod/core/stp_core.h); the module also caps the product
 * with the number of CPU ids (STP_MAX_STAT_MEM) and refuses the LOAD
 * with E2BIG past it.
 */
#define STP_MAX_STATS		1024u
#define STP_MAX_STAT_BYTES	(16u << 20)	/* statistics arrays included */
#define STP_MAX_STAT_MEM	(256u << 20)
/*
 * Associative arrays (the MAPS section): at most STP_MAX_MAPS maps of at
 * most STP_MAX_MAP_KEYS keys and STP_MAX_MAP_ENTRIES entries each. All
 * maps of a session together take at most STP_MAX_MAP_BYTES
 * (stp_map_size() in kmod/core/stp_core.h; the verifier refuses more with
 * TOO_MANY). foreach uses iterators (the MIT immediate), at most
 * STP_MAX_ITERS, each with an index array per CPU of the largest map's
 * capacity: at most STP_MAX_ITER_BYTES per CPU together.
 */
#define STP_MAX_MAPS		1024u
#define STP_MAX_MAP_KEYS	9u
#define STP_MAX_MAP_ENTRIES	(1u << 20)
#define STP_MAX_MAP_BYTES	(512u << 20)
#define STP_MAX_ITERS		8u
#define STP_MAX_ITER_BYTES	(16u << 20)
/*
 * Regular expressions (the REGEXES and REGEXDATA sections, struct
 * stp_regex_desc): at most STP_MAX_REGEXES DFAs of at most
 * STP_MAX_REGEX_STATES states each (the two final states included).
 */
#define STP_MAX_REGEXES		1024u
#define STP_MAX_REGEX_STATES	4096u
/*
 * Group programs (REMATCHS; the REGEXSUBS, REGEXPROG and REGEXSETS
 * sections, struct stp_regex_sub): at most STP_MAX_REGEX_INSNS
 * instructions and STP_MAX_REGEX_SLOTS slots (two per group, group 0
 * included) each.
 */
#define STP_MAX_REGEX_INSNS	256u
#define STP_MAX_REGEX_SLOTS	32u

/*
 * Pretty-printing type nodes (the PRETTY section, struct stp_pretty_node,
 * opcodes.h: PRETTY): at most STP_MAX_PRETTY_NODES nodes, a struct of at
 * most STP_MAX_PRETTY_MEMBERS members. PRETTY expands nested aggregates at
 * most STP_PRETTY_MAX_DEPTH levels below the value (deeper ones print as
 * "{...}" / "[...]") and, as stap's generated sprintf (PR10750), prints at
 * most STP_PRETTY_MAX_ARGS values.
 */
#define STP_MAX_PRETTY_NODES	65536u
#define STP_MAX_PRETTY_MEMBERS	4096u
#define STP_PRETTY_MAX_DEPTH	8u
#define STP_PRETTY_MAX_ARGS	32u

/*
 * Session limits with SystemTap's names: name, default, minimum, maximum.
 * The image carries the values the script asked for (-D NAME=V); the module
 * refuses values outside [minimum, maximum].
 *
 * The overload breaker (stap's runtime_defines.h): per CPU, handler time
 * in cycles (get_cycles(): the TSC on x86, as stap) summed over the hits
 * that end within an interval of STP_OVERLOAD_INTERVAL cycles; more than
 * STP_OVERLOAD_THRESHOLD is the run-time error STP_RTE_OVERLOAD and the
 * error state. The module also refuses
 * a threshold above the interval (the breaker could never trip: turn it
 * off with STP_NO_OVERLOAD = 1 instead, stap's -DSTP_NO_OVERLOAD).
 */
#define STP_LIMITS(X)						\
	X(MAXACTION,     10000,  1, 100000000)			\
	X(MAXSTRINGLEN,  512,    16, 4096)			\
	X(MAXMAPENTRIES, 2048,   1, 1048576)			\
	X(MAXERRORS,     0,      0, 1000000)			\
	X(MAXSKIPPED,    100,    0, 1000000000)			\
	X(MAXNESTING,    10,     1, 64)				\
	X(MAXTRYLOCK,    100,    1, 100000)			\
	X(RING_PAGES,    64, STP_MIN_RING_PAGES, STP_MAX_RING_PAGES) \
	X(STP_OVERLOAD_THRESHOLD, 500000000,  1000000, 4000000000) \
	X(STP_OVERLOAD_INTERVAL,  1000000000, 10000000, 4000000000) \
	X(STP_NO_OVERLOAD, 0,    0, 1)

/* Index of each limit in struct stp_image_hdr.limits[]. */
enum stp_limit {
#define STP_X_LIMIT_ENUM(name, def, min, max) STP_LIM_##name,
	STP_LIMITS(STP_X_LIMIT_ENUM)
#undef STP_X_LIMIT_ENUM
	STP_LIM__COUNT
};

/* ------------------------------------------------------------------ */
/* The program image (LOAD ioctl payload)                              */

#define STP_IMAGE_MAGIC		0x49505453u	/* "STPI" */
#define STP_IMAGE_VERSION	11u	/* 2: functions, format texts; 3: STATS; 4: REGEXES;
					 * 5: stp_probe_desc.randomize;
					 * 6: REGEXSUBS, REGEXPROG, REGEXSETS;
					 * 7: PRETTY;
					 * 8: PERF and WATCH probes, stp_probe_desc.ev_*;
					 *    procfs and input kinds, contexts;
					 *    the NETFILTER kind and context;
					 * 9: stp_probe_desc.pp (the PP helper);
					 *    UPROBE and URETPROBE kinds, contexts;
					 *    UARGS, stp_probe_desc.uargs, UARG
					 * 10: USYMBINS, USYMS, USYMSTR; UBACKTRACE,
					 *    USYMNAME .. UMODNAME; STP_PROBE_F_UEXE,
					 *    the PROCESS kind
					 * 11: stp_image_hdr.checksum
					 */

/*
 * FNV-1a, 32 bits: the checksum of an image (stp_image_hdr.checksum) and of
 * a .stpb file's payload. Each step (xor a byte, multiply by an odd prime)
 * is a bijection of the state, so changing any one byte changes the sum.
 */
#define STP_FNV1A_BASIS		0x811c9dc5u
#define STP_FNV1A_PRIME		0x01000193u

/*
 * Sections of an image, each an array of fixed-size entries. A section's
 * size must be a multiple of its entry size; sections must be 8-byte
 * aligned, inside the image, after the header and must not overlap.
 */
#define STP_SECTIONS(X)						\
	X(CODE,     struct stp_insn)				\
	X(HANDLERS, struct stp_handler_desc)			\
	X(PROBES,   struct stp_probe_desc)			\
	X(KONSTS,   __s64)					\
	X(STRS,     struct stp_str_desc)			\
	X(STRDATA,  __u8)					\
	X(FORMATS,  struct stp_format_desc)				\
	X(STATS,    struct stp_stat_desc)				\
	X(MAPS,     struct stp_map_desc)				\
	X(REGEXES,  struct stp_regex_desc)				\
	X(REGEXDATA, __u16)						\
	X(REGEXSUBS, struct stp_regex_sub)				\
	X(REGEXPROG, __u32)						\
	X(REGEXSETS, struct stp_regex_set)				\
	X(PRETTY,   struct stp_pretty_node)				\
	X(UARGS,    __u64)						\
	X(USYMBINS, struct stp_usym_bin)				\
	X(USYMS,    struct stp_usym)					\
	X(USYMSTR,  __u8)

/* Section index in struct stp_image_hdr.sec[]. */
enum stp_section {
#define STP_X_SECTION_ENUM(name, type) STP_SEC_##name,
	STP_SECTIONS(STP_X_SECTION_ENUM)
#undef STP_X_SECTION_ENUM
	STP_SEC__COUNT
};

/* Where one section lies in the image. */
struct stp_section_desc {
	__u32 off;	/* from the start of the image */
	__u32 size;	/* bytes */
};

/* The image header, at offset 0. */
struct stp_image_hdr {
	__u32 magic;		/* STP_IMAGE_MAGIC */
	__u16 version;		/* STP_IMAGE_VERSION */
	__u16 hdr_size;		/* sizeof(struct stp_image_hdr) */
	__u32 total_size;	/* bytes of the whole image */
	__u32 flags;		/* none defined: must be 0 */
	__u32 nglobals;		/* global integer scalars */
	__u32 checksum;		/* FNV-1a of the total_size bytes, this
				 * field read as 0: checked right after
				 * total_size, before anything else is read
				 */
	struct stp_section_desc sec[STP_SEC__COUNT];
	__u32 limits[STP_LIM__COUNT];
};

/*
 * Handler contexts: what fired the handler. A handler is verified for one
 * context (helpers.h restricts helpers by context).
 *
 * STP_CTX__COUNT counts the probe contexts, the ones a probe can fire.
 * STP_CTX_FUNCTION, numbered right after them, is the context of a user
 * function's body: no probe names it, only the FCALL* instructions enter
 * it, from a handler of any context (or another function). A function is
 * verified once for every caller, so it may use only the helpers valid in
 * every probe context (STP_CTXM_ANY includes STP_CTXM_FUNCTION; RETVAL and
 * ARG are refused there).
 */
enum stp_ctx {
	STP_CTX_BEGIN,		/* begin probe, process context */
	STP_CTX_END,		/* end probe, process context */
	STP_CTX_TIMER,		/* hrtimer, hardirq context */
	STP_CTX_KPROBE,		/* function entry (kprobe) */
	STP_CTX_KRETPROBE,	/* function return (kretprobe) */
	STP_CTX_PROCFS_READ,	/* procfs read, process context: $value set */
	STP_CTX_PROCFS_WRITE,	/* procfs write, input: $value read */
	STP_CTX_NETFILTER,	/* netfilter hook: arguments, $verdict */
	STP_CTX_UPROBE,		/* user function entry or address (uprobe) */
	STP_CTX_URETPROBE,	/* user function return (uretprobe) */
	STP_CTX__COUNT,		/* probe contexts */
	STP_CTX_FUNCTION = STP_CTX__COUNT, /* a user function's body */
	STP_CTX__ALL		/* contexts, STP_CTX_FUNCTION included */
};

#define STP_CTXM_BEGIN		(1 << STP_CTX_BEGIN)
#define STP_CTXM_END		(1 << STP_CTX_END)
#define STP_CTXM_TIMER		(1 << STP_CTX_TIMER)
#define STP_CTXM_KPROBE		(1 << STP_CTX_KPROBE)
#define STP_CTXM_KRETPROBE	(1 << STP_CTX_KRETPROBE)
#define STP_CTXM_PROCFS_READ	(1 << STP_CTX_PROCFS_READ)
#define STP_CTXM_PROCFS_WRITE	(1 << STP_CTX_PROCFS_WRITE)
#define STP_CTXM_VALUE		(STP_CTXM_PROCFS_READ | STP_CTXM_PROCFS_WRITE)
#define STP_CTXM_NETFILTER	(1 << STP_CTX_NETFILTER)
#define STP_CTXM_UPROBE		(1 << STP_CTX_UPROBE)
#define STP_CTXM_URETPROBE	(1 << STP_CTX_URETPROBE)
#define STP_CTXM_FUNCTION	(1 << STP_CTX_FUNCTION)
#define STP_CTXM_ANY		(((1 << STP_CTX__COUNT) - 1) | STP_CTXM_FUNCTION)
/* ARG: function entry (kernel or user), and a netfilter hook's arguments */
#define STP_CTXM_ENTRY		(STP_CTXM_KPROBE | STP_CTXM_NETFILTER | \
				 STP_CTXM_UPROBE)
#define STP_CTXM_RET		(STP_CTXM_KRETPROBE | STP_CTXM_URETPROBE)

/* Result kind of a function (struct stp_handler_desc.ret). */
enum stp_ret_kind {
	STP_RET_NONE,		/* returns with RET */
	STP_RET_LONG,		/* returns with RETI; called by FCALLI */
	STP_RET_STR,		/* returns with RETS; called by FCALLS */
	STP_RET__COUNT
};

/*
 * One handler: a slice of CODE ending in a return instruction (RET, or
 * for a function returning a value RETI / RETS). A function's parameters
 * arrive in r[0..nparams) and s[0..nsparams), in declaration order per
 * register file; nparams, nsparams and ret are 0 for probe handlers.
 */
struct stp_handler_desc {
	__u32 insn_off;		/* first instruction, index into CODE */
	__u32 insn_count;	/* instructions; the last one returns */
	__u8 nregs;		/* integer registers used, <= STP_MAX_REGS */
	__u8 nsregs;		/* string registers used, <= STP_MAX_SREGS */
	__u8 ctx;		/* enum stp_ctx */
	__u8 nparams;		/* FUNCTION: integer parameters, <= nregs */
	__u8 nsparams;		/* FUNCTION: string parameters, <= nsregs */
	__u8 ret;		/* FUNCTION: enum stp_ret_kind */
	__u8 reserved[2];	/* must be 0 */
};

/*
 * Fields of struct stp_probe_desc that a probe kind uses (the uses column
 * of STP_PROBE_KINDS); the verifier refuses the others when they are not
 * 0 (BAD_PROBE). Enumerators, not macros, so that build.rs's expansion
 * of the table names them in Rust too.
 */
enum stp_probe_uses {
	STP_PROBE_USES_SYMBOL = 1,	/* symbol: kernel symbol or tracepoint */
	STP_PROBE_USES_OFFSET = 2,	/* offset into the symbol */
	STP_PROBE_USES_MAXACTIVE = 4,	/* kretprobe instances */
	STP_PROBE_USES_PERIOD = 8,	/* period_ns, STP_PROBE_F_PROFILE/_JIFFIES */
	STP_PROBE_USES_PERF = 16,	/* ev_type, ev_config, ev_pid,
					 * period_ns as the sample period,
					 * STP_PROBE_F_PERF_TASK
					 */
	STP_PROBE_USES_WATCH = 32,	/* ev_type, ev_config, ev_len */
	STP_PROBE_USES_FILE = 64,	/* symbol, offset, maxactive: a procfs file */
	STP_PROBE_USES_NETFILTER = 128,	/* ev_type, ev_config, ev_pid: a hook */
	STP_PROBE_USES_UPROBE = 256,	/* symbol (a path), offset (the
					 * semaphore), ev_config, ev_pid
					 */
	STP_PROBE_USES_PROCESS = 512,	/* ev_config (the event), ev_pid,
					 * ev_type with STP_PROBE_F_UEXE
					 */
};

/*
 * Kinds of probe point, one row each: name (the kind's number is its row,
 * from 0: enum stp_probe_kind), lower-case name, the context its handler
 * must have (enum stp_ctx: verified, and what the module runs it in) and
 * the descriptor fields it uses (enum stp_probe_uses).
 *
 *   BEGIN       runs at START, process context
 *   END         runs at STOP, process context
 *   TIMER       hrtimer every period_ns, or timer.profile (the flag), or
 *               every period_ns jiffies (STP_PROBE_F_JIFFIES)
 *   KPROBE      symbol + offset; maxactive is accepted and unused
 *   KRETPROBE   symbol (+ offset), maxactive instances
 *   ERROR       runs at STOP instead of END in the error state
 *   TRACEPOINT  symbol = the tracepoint's name; raw arguments in ARG 1..6,
 *               so its handlers are verified as kprobes'
 *   PERF        a perf event (ev_type, ev_config) sampled every
 *               period_ns events: one counter per online CPU, or with
 *               STP_PROBE_F_PERF_TASK one bound to the process ev_pid;
 *               the handler runs in the event's overflow context (hardirq,
 *               NMI for hardware counters, or the context that raised a
 *               software event) with the interrupted registers, so it is
 *               verified as a timer's
 *   WATCH       a hardware watchpoint (kernel.data) on ev_len bytes at the
 *               kernel address ev_config, firing on writes (STP_WATCH_W)
 *               or on reads and writes (STP_WATCH_RW): one wide
 *               breakpoint, a debug register on every CPU; the handler
 *               runs in the debug exception after the access, with its
 *               registers, so it is verified as a timer's
 *   PROCFS_READ, PROCFS_WRITE  a read or a write of the file
 *               /proc/stapvm/<session>/<symbol> (below: procfs files)
 *   INPUT_CHAR, INPUT_LINE  each byte, each line, of what the consumer
 *               feeds the session with STP_IOC_INPUT (its standard input)
 *   NETFILTER   a netfilter hook (below: netfilter hooks): protocol family
 *               ev_type, hook ev_config, priority ev_pid; the handler runs
 *               in the hook's context (softirq or process) with the hook's
 *               arguments in ARG 0..4 and its verdict in VERDICT /
 *               VERDICT_SET (helpers.h)
 *   UPROBE, URETPROBE  a uprobe (uretprobe) in the file whose absolute
 *               path is the symbol, at file offset ev_config (below:
 *               user-space probes); the handler runs in the traced task
 *               with its user registers
 *   PROCESS     a process or thread starts or ends (below: process
 *               events): event ev_config, in the task itself, with its
 *               user registers; verified as a timer's
 *   PSYSCALL, PSYSCALL_RETURN  a system call's entry, its return, in the
 *               processes a process event would count (process.syscall,
 *               .syscall.return; below: process events): ARG 1..6 are its
 *               arguments, REGISTER orig_ax its number, RETVAL (return)
 *               its result
 */
#define STP_PROBE_KINDS(X)						\
	X(BEGIN,      "begin",      BEGIN,     0)			\
	X(END,        "end",        END,       0)			\
	X(TIMER,      "timer",      TIMER,     STP_PROBE_USES_PERIOD)	\
	X(KPROBE,     "kprobe",     KPROBE,    STP_PROBE_USES_SYMBOL |	\
	  STP_PROBE_USES_OFFSET | STP_PROBE_USES_MAXACTIVE)		\
	X(KRETPROBE,  "kretprobe",  KRETPROBE, STP_PROBE_USES_SYMBOL |	\
	  STP_PROBE_USES_OFFSET | STP_PROBE_USES_MAXACTIVE)		\
	X(ERROR,      "error",      END,       0)			\
	X(TRACEPOINT, "tracepoint", KPROBE,    STP_PROBE_USES_SYMBOL)	\
	X(PERF,       "perf",       TIMER,     STP_PROBE_USES_PERF)	\
	X(WATCH,      "watch",      TIMER,     STP_PROBE_USES_WATCH)	\
	X(PROCFS_READ,  "procfs_read",  PROCFS_READ,  STP_PROBE_USES_FILE) \
	X(PROCFS_WRITE, "procfs_write", PROCFS_WRITE, STP_PROBE_USES_FILE) \
	X(INPUT_CHAR,   "input_char",   PROCFS_WRITE, 0)		\
	X(INPUT_LINE,   "input_line",   PROCFS_WRITE, 0)		\
	X(NETFILTER,    "netfilter",    NETFILTER, STP_PROBE_USES_NETFILTER) \
	X(UPROBE,       "uprobe",       UPROBE,    STP_PROBE_USES_UPROBE) \
	X(URETPROBE,    "uretprobe",    URETPROBE, STP_PROBE_USES_UPROBE) \
	X(PROCESS,      "process",      TIMER,     STP_PROBE_USES_PROCESS) \
	X(PSYSCALL,     "psyscall",     KPROBE,    STP_PROBE_USES_PROCESS) \
	X(PSYSCALL_RETURN, "psyscall_return", KRETPROBE, STP_PROBE_USES_PROCESS)

/* Probe kind numbers: STP_PROBE_BEGIN == 0, in table order. */
enum stp_probe_kind {
#define STP_X_PROBE_KIND_ENUM(name, str, ctx, uses) STP_PROBE_##name,
	STP_PROBE_KINDS(STP_X_PROBE_KIND_ENUM)
#undef STP_X_PROBE_KIND_ENUM
	STP_PROBE__COUNT
};

/*
 * Probe flags. STP_PROBE_F_PROFILE, only on STP_PROBE_TIMER
 * (timer.profile, perf.sw.cpu_clock): one perf cpu-clock event per online
 * CPU instead of one hrtimer, firing every period_ns of CPU time, or
 * every kernel tick (TICK_NSEC) when period_ns is 0 (allowed only with
 * this flag); hardirq context; the hit gets the interrupted context's
 * registers (ADDR, USER_MODE).
 *
 * STP_PROBE_F_JIFFIES, only on STP_PROBE_TIMER and never with
 * STP_PROBE_F_PROFILE (timer.jiffies(N)): period_ns holds N, a count of
 * jiffies in [1, STP_MAX_TIMER_JIFFIES], not nanoseconds; the module arms
 * an hrtimer of N jiffies of its own kernel's HZ, which the compiler
 * cannot know.
 */
#define STP_PROBE_F_OPTIONAL	0x1u	/* '?': failure to arm is not an error */
#define STP_PROBE_F_PROFILE	0x2u	/* timer.profile: per CPU, every tick */
#define STP_PROBE_F_JIFFIES	0x4u	/* timer.jiffies: period_ns in jiffies */
#define STP_PROBE_F_PERF_TASK	0x8u	/* perf .process: count in ev_pid only */
#define STP_PROBE_F_UEXE	0x10u	/* uprobe, process: count in one
					 * program's processes (ev_type)
					 */
#define STP_PROBE_F__ALL	0x1fu
/*
 * '!' (sufficient): flags of the .stpb only, never of an image (image.rs
 * clears STP_PROBE_F__LOADER; the verifier refuses them as unknown). The
 * loader resolves the probes of one declaration in order; once one with
 * STP_PROBE_F_SUFFICIENT resolved, it drops the following ones with
 * STP_PROBE_F_ALTERNATIVE (the points after a '!' in the same declaration).
 * A sufficient point is also STP_PROBE_F_OPTIONAL.
 */
#define STP_PROBE_F_SUFFICIENT	0x40u
#define STP_PROBE_F_ALTERNATIVE	0x80u
#define STP_PROBE_F__LOADER	0xc0u

/* Frames of BACKTRACE (helpers.h), stap's MAXBACKTRACE. */
#define STP_MAX_BACKTRACE	20u

/* One probe point, bound to one handler. */
struct stp_probe_desc {
	__u8 kind;		/* enum stp_probe_kind */
	__u8 flags;		/* STP_PROBE_F_* */
	__u16 reserved;		/* must be 0 */
	__u32 handler;		/* index into HANDLERS */
	__u32 symbol;		/* string id (STRS): kprobe symbol ([A-Za-z0-9_.$],
				 * or module:symbol), or tracepoint name
				 */
	__u32 offset;		/* byte offset into the symbol; kprobes only */
	__u32 maxactive;	/* kretprobes; 0 = kernel default */
	/* PERF: perf_event_attr.type (STP_PERF_TYPE_*); WATCH: the access
	 * (STP_WATCH_*); NETFILTER: the protocol family (STP_NFPROTO_*);
	 * others 0
	 */
	__u32 ev_type;
	/* timers: in [STP_MIN_TIMER_NS, STP_MAX_TIMER_NS], or 0 with
	 * STP_PROBE_F_PROFILE (every tick), or jiffies in
	 * [1, STP_MAX_TIMER_JIFFIES] with STP_PROBE_F_JIFFIES; other kinds 0
	 */
	__u64 period_ns;
	/* timers without STP_PROBE_F_PROFILE: timer.UNIT(N).randomize(M),
	 * M in period_ns's unit (ns, or jiffies with STP_PROBE_F_JIFFIES), at
	 * most period_ns (below); 0 = a fixed period; other kinds 0
	 */
	__u64 randomize;
	/* PERF: perf_event_attr.config; WATCH: the address; NETFILTER: the
	 * hook number; others 0
	 */
	__u64 ev_config;
	/* PERF with STP_PROBE_F_PERF_TASK: the process (a pid > 0) whose
	 * threads' events count; NETFILTER: the hook's priority (any s32);
	 * others 0
	 */
	__s32 ev_pid;
	__u32 ev_len;		/* WATCH: bytes watched, 1, 2, 4 or 8; others 0 */
	/* string id (STRS): the probe point pp() returns for this probe
	 * (helpers.h PP), as the loader named it once wildcards expanded
	 */
	__u32 pp;
	/* UPROBE at a USDT marker: index of its first argument spec in
	 * UARGS (maxactive holds how many); others 0
	 */
	__u32 uargs;
};

/*
 * WATCH probes (kernel.data(ADDR) / kernel.data("SYMBOL"), .write / .rw,
 * .length(N)): ev_type is the access (the kernel's HW_BREAKPOINT_W and
 * HW_BREAKPOINT_R | HW_BREAKPOINT_W values), ev_config the address (the
 * loader puts a symbol's there), ev_len the bytes. The verifier refuses
 * another access, a length but 1, 2, 4, 8, an address of 0 or not
 * aligned to the length. x86-64 has four debug registers per CPU: a
 * fifth watchpoint (of all sessions, perf and debuggers) fails at START
 * with ENOSPC, which the loader reports as such.
 */
#define STP_WATCH_W		2u	/* writes */
#define STP_WATCH_RW		3u	/* reads and writes */

/*
 * NETFILTER probes (netfilter.hook(H).pf(P).priority(N), and the
 * netfilter.ipv4.* ... aliases): ev_type is the protocol family (the
 * kernel's NFPROTO_* numbers: stap's four), ev_config the hook number,
 * below the family's number of hooks (NF_INET_PRE_ROUTING ..
 * NF_INET_POST_ROUTING for IPv4, IPv6 and the bridge; NF_ARP_IN ..
 * NF_ARP_FORWARD for ARP), ev_pid the priority: any s32 (stap's
 * NF_IP_PRI_FIRST is INT_MIN, NF_IP_PRI_LAST INT_MAX), lower runs first.
 * ev_len, the period, the symbol fields and every flag but
 * STP_PROBE_F_OPTIONAL are 0. The module registers one nf_hook_ops per
 * probe in the initial network namespace (other namespaces are not
 * hooked) at START and unregisters it at STOP. The handler's context is
 * STP_CTX_NETFILTER: ARG 0..4 are the hook number, the sk_buff, the input
 * and output net_device (NULL when the hook has none) and okfn; VERDICT
 * reads the verdict the hook will return (STP_NF_ACCEPT until set), and
 * VERDICT_SET sets it to STP_NF_DROP or STP_NF_ACCEPT only: any other
 * value (NF_STOLEN, NF_QUEUE, NF_REPEAT, NF_STOP, an errno-carrying drop)
 * is the run-time error STP_RTE_VERDICT and leaves STP_NF_ACCEPT.
 */
/*
 * UPROBE and URETPROBE probes (process("PATH").function("F"), .return,
 * .statement(ADDR).absolute, .mark("M")): symbol is the string of the
 * file's absolute path on the target (the loader found and canonicalized
 * it), ev_config the file offset of the probed instruction, offset the
 * file offset of a USDT marker's semaphore (the kernel's reference
 * counter, raised in every process mapping the file while the probe is
 * armed) or 0, ev_pid the only process whose hits run the handler (the
 * -x / -c target) or 0 for every process. With STP_PROBE_F_UEXE (a
 * probe in a library of one program: process("EXE").library("LIB")),
 * ev_type is the string of that program's absolute path, and only hits
 * in processes whose executable is that file run the handler. The
 * verifier refuses a symbol (or an ev_type string) that is not an
 * absolute path (a '/' first, no NUL, at most STP_MAX_UPROBE_PATH bytes)
 * and every other field set. A file that
 * does not exist, is not a regular file or is shorter than the offset
 * fails at START (ENOENT, ENOEXEC, EINVAL from the kernel's uprobes).
 * The handler's context is STP_CTX_UPROBE (ARG reads the user
 * registers of the x86-64 calling convention) or STP_CTX_URETPROBE
 * (RETVAL reads the user ax).
 *
 * A UPROBE at a USDT marker carries its arguments' specs ($arg1 ..
 * $argN): maxactive of them from index uargs of the UARGS section (both
 * 0 for a marker without arguments and for every other probe). Each spec
 * is a __u64: bits 0-1 the kind (STP_UARG_CONST: the value is bits
 * 32-63; STP_UARG_REG: the register, bits 8-15 a struct pt_regs word in
 * REGISTER's order; STP_UARG_MEM: the user memory at that register plus
 * the displacement in bits 32-63), bits 2-5 the size in bytes (1, 2, 4,
 * 8), bit 6 signed, every other bit 0; bits 32-63 are a signed 32-bit
 * number. The helper UARG (helpers.h) reads one.
 */
#define STP_MAX_UPROBE_PATH	4095u

/*
 * PROCESS probes (process.begin, .end, .thread.begin, .thread.end, each
 * also as process("PATH").EVENT and process(PID).EVENT): ev_config is the
 * event, ev_pid the only process (thread group) whose events run the
 * handler or 0 for all, and with STP_PROBE_F_UEXE ev_type the string of
 * the program's absolute path (checked as a uprobe's), whose processes
 * alone count. Kernel threads never count. The handler runs in the task
 * the event is about, in its own context, with its user registers:
 *
 *   STP_PROC_BEGIN         a new process's first run after fork (its
 *                          first thread), and a process after a
 *                          successful exec (its new program)
 *   STP_PROC_END           a process ends: its last thread exits, before
 *                          its memory goes
 *   STP_PROC_THREAD_BEGIN  a new thread (not a process's first) first runs
 *   STP_PROC_THREAD_END    a thread that is not its process's last exits
 *
 * Every other descriptor field is 0, and no flag but OPTIONAL and UEXE.
 *
 * PSYSCALL and PSYSCALL_RETURN probes (process.syscall, .syscall.return,
 * with the same three forms) take ev_pid and ev_type as PROCESS does, with
 * ev_config 0. They hook the raw sys_enter / sys_exit tracepoints; the
 * handler runs in the calling thread with its user registers, the
 * argument registers in the x86-64 calling convention's places (r10, the
 * fourth argument, in cx), so ARG 1..6 read the arguments.
 */
#define STP_PROC_BEGIN		0u
#define STP_PROC_END		1u
#define STP_PROC_THREAD_BEGIN	2u
#define STP_PROC_THREAD_END	3u
#define STP_PROC__COUNT		4u
#define STP_MAX_UARGS		12u	/* arguments of one marker */
#define STP_UARG_CONST		0u
#define STP_UARG_REG		1u
#define STP_UARG_MEM		2u
#define STP_UARG_KIND_MASK	0x3ull
#define STP_UARG_SIZE_SHIFT	2
#define STP_UARG_SIGNED		0x40ull
#define STP_UARG_REG_SHIFT	8
#define STP_UARG_REGS		21u	/* pt_regs words: r15 .. ss */
#define STP_UARG_VALUE_SHIFT	32
#define STP_UARG_RESERVED	0xffff0080ull	/* bits that must be 0 */

/*
 * User-space symbol tables (stap's -d / --ldd data): the sections
 * USYMBINS, USYMS and USYMSTR, read by the helpers UBACKTRACE .. UMODNAME
 * (helpers.h). The loader puts them in an image whose code calls one of
 * those helpers: one struct stp_usym_bin per binary (the probed ones, the
 * -c command's program, -d PATH, their libraries with --ldd), in any
 * order; each names the binary's absolute path (a string of STRS, as a
 * uprobe's symbol) and its symbols, USYMS[first .. first + count), sorted
 * by strictly increasing file offset. A symbol's size is the distance to
 * the next one (stap's heuristic, sym.c), 0 for the last; its name is
 * name_len bytes of USYMSTR at name. The verifier checks all of it: at
 * most STP_MAX_USYM_BINS binaries and STP_MAX_USYMS symbols, names of 1
 * to STP_MAX_USYM_NAME bytes inside USYMSTR, reserved fields 0.
 *
 * The module looks each path up when the session is created (a file that
 * is missing then has no symbols) and keeps its inode until the session
 * is destroyed. An address resolves through the VMA of current's mm that
 * holds it (taken by trylock, in task context only): a file mapping of one
 * of those inodes gives the file offset addr - vm_start + (vm_pgoff <<
 * PAGE_SHIFT), then the last symbol at or below it.
 */
#define STP_MAX_USYM_BINS	64u
#define STP_MAX_USYMS		(1u << 18)
#define STP_MAX_USYM_NAME	1024u

struct stp_usym_bin {
	__u32 path;		/* string id (STRS): absolute path */
	__u32 first;		/* first symbol, index into USYMS */
	__u32 count;		/* symbols */
	__u32 reserved;		/* must be 0 */
};

struct stp_usym {
	__u64 offset;		/* file offset of the symbol's first byte */
	__u32 size;		/* bytes to the next symbol, 0 for the last */
	__u32 name;		/* offset into USYMSTR */
	__u32 name_len;		/* bytes, 1 .. STP_MAX_USYM_NAME */
	__u32 reserved;		/* must be 0 */
};

#define STP_NFPROTO_IPV4	2u
#define STP_NFPROTO_ARP		3u
#define STP_NFPROTO_BRIDGE	7u
#define STP_NFPROTO_IPV6	10u
#define STP_NF_INET_NUMHOOKS	5u	/* IPv4, IPv6, bridge */
#define STP_NF_ARP_NUMHOOKS	3u
#define STP_NF_DROP		0
#define STP_NF_ACCEPT		1

/*
 * PERF probes (perf.sw.NAME, perf.hw.NAME, perf.hw_cache.*,
 * perf.type(T).config(C), .sample(N), .process). The verifier accepts the
 * event types and configs below only (the generic perf types of
 * include/uapi/linux/perf_event.h; tracepoints and breakpoints have probe
 * points of their own), and a sample period (period_ns: events between
 * two hits) in [1, STP_MAX_PERF_PERIOD]; for the two clock events, whose
 * period counts nanoseconds, in [STP_MIN_TIMER_NS, STP_MAX_TIMER_NS] as
 * timers. A software event the kernel does not have, or a hardware one
 * without a PMU to count it (QEMU TCG, many VMs), fails at START with the
 * errno perf_event_create_kernel_counter gave (ENOENT, EOPNOTSUPP or
 * ENODEV); the loader names the event and the reason.
 */
#define STP_PERF_TYPE_HARDWARE	0u	/* config < STP_PERF_HW_MAX */
#define STP_PERF_TYPE_SOFTWARE	1u	/* config < STP_PERF_SW_MAX */
#define STP_PERF_TYPE_HW_CACHE	3u	/* id | op << 8 | result << 16 */
#define STP_PERF_TYPE_RAW	4u	/* a PMU-specific event code */
#define STP_PERF_HW_MAX		10u	/* cpu_cycles .. ref_cpu_cycles */
#define STP_PERF_SW_MAX		9u	/* cpu_clock .. emulation_faults */
#define STP_PERF_SW_CPU_CLOCK	0u	/* period in ns of CPU time */
#define STP_PERF_SW_TASK_CLOCK	1u	/* period in ns of task time */
#define STP_PERF_CACHE_ID_MAX	7u	/* l1d .. node */
#define STP_PERF_CACHE_OP_MAX	3u	/* read, write, prefetch */
#define STP_PERF_CACHE_RESULT_MAX 2u	/* access, miss */
#define STP_MAX_PERF_PERIOD	(1ull << 48)

/*
 * Randomized timers (stap's timer.UNIT(N).randomize(M)): every period,
 * the first one included, is period_ns + r with r drawn uniformly from
 * [-randomize, randomize] when the timer is armed or re-armed, then
 * floored at STP_MIN_TIMER_NS. The verifier refuses randomize above
 * period_ns, stap's own bound (tapset-timers.cxx): so N - M >= 0 and no
 * period is negative (in the module's unsigned arithmetic it would wrap
 * to a huge one), the mean period stays N (r is symmetric), so the mean
 * rate of hits is the one the period's bounds grant, and the longest
 * period, 2 * N, fits in a ktime. The floor keeps every single period
 * at or above the fastest any timer may fire.
 */

/*
 * Timer periods and kretprobe instances: the verifier refuses a period
 * outside [STP_MIN_TIMER_NS, STP_MAX_TIMER_NS] (in jiffies, with
 * STP_PROBE_F_JIFFIES: outside [1, STP_MAX_TIMER_JIFFIES], stap's bound
 * of timer.jiffies(N)) and a maxactive above STP_MAX_MAXACTIVE. The module
 * clamps again when arming, as defence in depth: the period to KTIME_MAX,
 * maxactive to STP_MAX_MAXACTIVE.
 */
#define STP_MIN_TIMER_NS	100000ull
#define STP_MAX_TIMER_JIFFIES	1000000u

/*
 * procfs files (STP_PROBE_USES_FILE: PROCFS_READ, PROCFS_WRITE). symbol
 * is the file's name, offset its permission bits (a subset of
 * STP_PROCFS_MODE_MASK, stap's 0444 / 0222 / 0666 with .umask(M)
 * applied), maxactive its buffer size in bytes (stap's .maxsize(N),
 * default MAXSTRINGLEN), in [1, STP_MAX_PROCFS_SIZE]. The name is 1 to
 * STP_MAX_PROCFS_NAME bytes of [A-Za-z0-9_.+,:=@%-], neither "." nor "..".
 * A file has at most one read and one write probe; when it has both, they
 * carry the same mode and size. At most STP_MAX_PROCFS_FILES files.
 *
 * The module creates the files at START in /proc/stapvm/<pid>/, <pid> the
 * process that issued START (as its pid namespace numbers it); START
 * fails with EEXIST when that directory exists (one session with procfs
 * probes per process). STOP, and closing the session, remove them; a
 * read or write in flight finishes first. One open at a time per file
 * (stap's rule: another open waits, or fails with EAGAIN under
 * O_NONBLOCK). Opening for reading runs the read probe at the first
 * read(); what its $value holds then is the file's content. A write
 * runs the write probe once per min(size, MAXSTRINGLEN - 1) bytes
 * written, $value holding them.
 */
#define STP_MAX_PROCFS_FILES	64u
#define STP_MAX_PROCFS_NAME	64u
#define STP_MAX_PROCFS_SIZE	(1u << 20)
#define STP_PROCFS_MODE_MASK	0666u

/* One constant string: a slice of STRDATA, no NUL inside. */
struct stp_str_desc {
	__u32 off;		/* into STRDATA */
	__u32 len;		/* bytes, <= MAXSTRINGLEN - 1 (the NUL counts) */
};

/*
 * One printf format, as the kernel sees it: the number and kinds of its
 * arguments and, for formats that SPRINTF formats in the kernel, its text
 * (a string of STRS, so at most MAXSTRINGLEN - 1 bytes). PRINTF formats need
 * no text: their records are formatted in user space from the .stpb. Bit
 * i of str_mask is set when argument i is a string. The arguments are
 * taken in order: integers from r[b], r[b+1], ... and strings from s[c],
 * s[c+1], ..., interleaved as str_mask says.
 */
#define STP_FMT_NO_TEXT		0xffffffffu

struct stp_format_desc {
	__u32 nargs;		/* <= STP_MAX_FMT_ARGS */
	__u32 str_mask;		/* bit i: argument i is a string */
	__u32 text;		/* string id of the text, or STP_FMT_NO_TEXT */
	__u32 reserved;		/* must be 0 */
};

/*
 * One statistic (a global `s <<< v` scalar): what its per-CPU copies hold
 * and where they lie. Each CPU has stp_prog.stat_bytes bytes of
 * statistics; statistic i takes struct stp_stat_cpu (stp_core.h) followed
 * by nbuckets __s64 buckets, at byte offset `offset`, which must be the
 * sum of the sizes of the statistics before it (8-aligned by
 * construction). Histogram parameters are stap's:
 *   STP_HIST_NONE    nbuckets, start, stop, interval 0
 *   STP_HIST_LOG     nbuckets STP_HIST_LOG_BUCKETS, start, stop, interval 0
 *   STP_HIST_LINEAR  interval > 0, nbuckets (stop - start) / interval
 *                    + 3 (underflow, buckets, overflow; C division), from
 *                    3 to STP_HIST_MAX_BUCKETS
 * shift is @variance's bit shift (<= STP_STAT_MAX_SHIFT), used only with
 * STP_STAT_F_VARIANCE (else 0).
 *
 * STP_STAT_F_ARRAY: the statistic is the value of a statistics array (the
 * map whose `stat` names it; at most one map does). The scalar statistic
 * instructions refuse it. Its per-CPU memory is the map's capacity times
 * its size (one copy per entry slot), placed after every scalar statistic:
 * `offset` must be the sum of the sizes of all scalar statistics and of
 * the blocks of the statistics arrays before its map, in map order.
 */
enum stp_hist_kind {
	STP_HIST_NONE,
	STP_HIST_LOG,
	STP_HIST_LINEAR,
	STP_HIST__COUNT
};

#define STP_HIST_LOG_BUCKETS	128u	/* bucket 64 holds 0 */
#define STP_HIST_MAX_BUCKETS	128u	/* linear, under/overflow included */
#define STP_STAT_MAX_SHIFT	62u
#define STP_STAT_F_VARIANCE	0x1u	/* keep Welford's sums (@variance) */
#define STP_STAT_F_ARRAY	0x2u	/* template of a statistics array */
#define STP_STAT_F__ALL		0x3u

struct stp_stat_desc {
	__u8 hist;		/* enum stp_hist_kind */
	__u8 shift;		/* @variance bit shift */
	__u8 flags;		/* STP_STAT_F_* */
	__u8 reserved;		/* must be 0 */
	__u32 nbuckets;		/* see above */
	__s32 start;		/* LINEAR: lowest bucket's value */
	__s32 stop;		/* LINEAR: end of the range */
	__s32 interval;		/* LINEAR: bucket width */
	__u32 offset;		/* bytes into each CPU's statistics */
};

/*
 * One associative array (a global `a`, `a[N]` or `a%[N]`). Keys are a
 * tuple of nkeys (1..STP_MAX_MAP_KEYS) longs and strings: bit i of
 * key_str_mask is set when key i is a string. Map instructions pass the
 * long keys, in key order, as an integer register run and the string keys
 * as a string register run. capacity is the most entries it holds
 * (1..STP_MAX_MAP_ENTRIES: `[N]`, or MAXMAPENTRIES); inserting into a full
 * map is the run-time error ARRAY_OVERFLOW (ARRAY_SIZE when the script
 * declared a size: STP_MAP_F_SIZED), unless STP_MAP_F_WRAP (`%`), which
 * replaces the oldest entry. A STP_MAPV_STAT map is a statistics array
 * (`a[k] <<< v`): `stat` names its STP_STAT_F_ARRAY statistic (0 for the
 * other value kinds); the entry's stored value is its @count (what
 * MAP_READ returns and the value order sorts by), its statistic is the
 * entry slot's per-CPU copy (opcodes.h: MSTADD).
 */
enum stp_map_value {
	STP_MAPV_LONG,
	STP_MAPV_STR,
	STP_MAPV_STAT,
	STP_MAPV__COUNT
};

#define STP_MAP_F_WRAP		0x1u	/* `%`: overwrite the oldest entry */
#define STP_MAP_F_SIZED		0x2u	/* `[N]` declared: error says so */
#define STP_MAP_F__ALL		0x3u

struct stp_map_desc {
	__u8 nkeys;		/* 1..STP_MAX_MAP_KEYS */
	__u8 value;		/* enum stp_map_value */
	__u8 flags;		/* STP_MAP_F_* */
	__u8 reserved;		/* must be 0 */
	__u16 key_str_mask;	/* bit i: key i is a string */
	__u16 reserved2;	/* must be 0 */
	__u32 capacity;		/* entries, 1..STP_MAX_MAP_ENTRIES */
	__u32 stat;		/* STAT: index into STATS, else 0 */
};

/*
 * One regular expression (`s =~ "re"`), compiled by the compiler into a
 * DFA (compiler/src/regex.rs) that REMATCH walks, one step per byte of the
 * string, so at most MAXSTRINGLEN steps. Its table is nstates rows of
 * nclasses __u16 entries in REGEXDATA, starting at entry `trans`: row s,
 * column k is the state after reading a byte of class k in state s; the
 * last column (nclasses - 1) is the end of the string. classes[b] is the
 * class of byte b. State 0 rejects and state 1 accepts: the walk stops as
 * soon as it reaches either (their rows are never read); after the last
 * byte, a state >= 2 takes the end-of-string column once. The result is 1
 * when the walk ends in state 1. The verifier requires 2 <= nstates <=
 * STP_MAX_REGEX_STATES, 2 <= nclasses <= 257, every classes[b] <
 * nclasses - 1, start and every entry < nstates, and the table inside
 * REGEXDATA.
 */
struct stp_regex_desc {
	__u32 nstates;		/* rows, the two final states included */
	__u32 nclasses;		/* columns: byte classes + end of string */
	__u32 start;		/* the start state */
	__u32 trans;		/* first entry, index into REGEXDATA */
	__u8 classes[256];	/* byte -> class */
};

/*
 * The group program of a regular expression (REMATCHS, opcodes.h): entry
 * i of REGEXSUBS belongs to regex i of REGEXES (the section is empty, or
 * has one entry per regex). ninsn 0: the regex has no program (REMATCH
 * only). Else its instructions are REGEXPROG[first, first + ninsn), each
 * a __u32: the operation in the low STP_RX_OP_BITS bits (enum stp_rx_op),
 * its argument above them. nslots (even) slots hold capture positions:
 * 2n and 2n + 1 are where group n starts and ends, group 0 being the
 * whole match (the compiler's program is SAVE 0, the pattern, SAVE 1,
 * MATCH).
 *
 *   SET k    the byte at the position is in set k of REGEXSETS (bit b % 8
 *            of byte b / 8; never NUL): go on at pc + 1, one position on
 *   JMP t    go on at t
 *   SPLIT t  go on at pc + 1, then (lower priority) at t
 *   SAVE k   slot k := the position; go on at pc + 1
 *   BOL      only at position 0; go on at pc + 1
 *   EOL      only at the end of the string; go on at pc + 1
 *   MATCH    the pattern matched (argument 0)
 *
 * The verifier requires (BAD_REGEX) 1 <= ninsn <= STP_MAX_REGEX_INSNS,
 * the program inside REGEXPROG, 2 <= nslots <= STP_MAX_REGEX_SLOTS and
 * even, pad 0, every operation known, every JMP / SPLIT target < ninsn,
 * every SAVE slot < nslots, every SET set inside REGEXSETS, a zero
 * argument on BOL, EOL and MATCH, and the last instruction JMP or MATCH
 * (so pc + 1 is always inside).
 */
#define STP_RX_OP_BITS		4
#define STP_RX_OP_MASK		15

enum stp_rx_op {
	STP_RX_SET,
	STP_RX_JMP,
	STP_RX_SPLIT,
	STP_RX_SAVE,
	STP_RX_BOL,
	STP_RX_EOL,
	STP_RX_MATCH,
	STP_RX__COUNT
};

struct stp_regex_sub {
	__u32 first;		/* first instruction, index into REGEXPROG */
	__u32 ninsn;		/* 0: no program */
	__u32 nslots;		/* capture slots, 2 per group */
	__u32 pad;		/* must be 0 */
};

/* One byte set of SET: bit b % 8 of bits[b / 8] is byte b. */
struct stp_regex_set {
	__u8 bits[32];
};

/*
 * Pretty-printing (`$var$`, `$var$$`, `$$parms$`: opcodes.h PRETTY): one
 * node per type the value or one of its members has, built by the loader
 * from the target's BTF (userspace/src/pretty.rs) and read by
 * kmod/core/vm_pretty.c. A STRUCT node's members are the `count` nodes
 * from `first` on, each at `offset` bytes from the struct; an ARRAY
 * node's element is node `first` (offset 0: stap prints the first element
 * only). Every child index is below its parent's (the loader writes
 * children first), so the nodes form no cycle. `name` is a string id (the member's name), or one of the
 * STP_PRETTY_NAME_* labels of an anonymous member. Scalars (SIGNED,
 * UNSIGNED, CHAR) are `size` bytes (1, 2, 4 or 8) read at the member's
 * address; a bitfield (bit_size != 0, SIGNED or UNSIGNED only) is bits
 * [bit_off, bit_off + bit_size) of those bytes read as a little-endian
 * number, bit_off + bit_size <= 8 * size. POINTER, FUNC and STRING members
 * read 8 bytes. Fields a kind does not use are 0.
 */
enum stp_pretty_kind {
	STP_PK_UNKNOWN,		/* "?" (floats, types stap cannot print) */
	STP_PK_SIGNED,		/* %i: signed integers, enums, _Bool */
	STP_PK_UNSIGNED,	/* %u */
	STP_PK_CHAR,		/* '%#c': a 1-byte char */
	STP_PK_POINTER,		/* %p */
	STP_PK_FUNC,		/* <function>:%p */
	STP_PK_STRING,		/* char *: the quoted string it points to */
	STP_PK_CHARS,		/* char[]: the quoted string at its address */
	STP_PK_STRUCT,		/* {.a=..., .b=...}: struct or union */
	STP_PK_ARRAY,		/* [elem0, ...] */
	STP_PK__COUNT
};

/* Labels of anonymous members, in place of a string id. */
#define STP_PRETTY_NAME_NONE	0xffffffffu	/* no label: "=value" */
#define STP_PRETTY_NAME_UNION	0xfffffffeu	/* "<union>=" */
#define STP_PRETTY_NAME_STRUCT	0xfffffffdu	/* "<class>=" (sic: stap's) */

struct stp_pretty_node {
	__u32 name;		/* string id or STP_PRETTY_NAME_* */
	__u32 offset;		/* bytes from the enclosing aggregate */
	__u32 first;		/* STRUCT: first member; ARRAY: element */
	__u16 count;		/* STRUCT: members, 0..STP_MAX_PRETTY_MEMBERS */
	__u8 kind;		/* enum stp_pretty_kind */
	__u8 size;		/* SIGNED, UNSIGNED, CHAR: 1, 2, 4 or 8 */
	__u8 bit_off;		/* bitfield: first bit */
	__u8 bit_size;		/* bitfield: width, 0 when not one */
	__u8 reserved[6];	/* must be 0 */
};

/* ------------------------------------------------------------------ */
/* Verifier errors                                                     */

/*
 * Every reason the verifier refuses an image: name, errno returned by the
 * LOAD ioctl, message. The same codes are used by the compiler-side
 * verifier. The message is completed with the place (instruction index,
 * section, ...) in the LOAD log.
 */
#define STP_VERIFY_ERRORS(X)						\
	X(OK,              0,        "ok")				\
	X(TRUNCATED,       EINVAL,   "image shorter than its header")	\
	X(TOO_BIG,         E2BIG,    "image larger than the module's cap") \
	X(BAD_MAGIC,       ENOEXEC,  "bad magic: not a stapvm image")	\
	X(BAD_VERSION,     EPROTO,   "unsupported image version")	\
	X(BAD_HEADER,      EINVAL,   "bad header size or flags")	\
	X(BAD_SIZE,        EINVAL,   "total size does not match the buffer") \
	X(BAD_CHECKSUM,    EBADMSG,  "corrupt image (checksum)")	\
	X(BAD_SECTION,     EINVAL,   "section outside the image, misaligned or overlapping") \
	X(BAD_LIMIT,       ERANGE,   "limit outside the module's bounds") \
	X(TOO_MANY,        E2BIG,    "too many instructions, handlers, probes, strings, formats or globals") \
	X(BAD_HANDLER,     EINVAL,   "handler outside CODE, empty, or bad register counts or context") \
	X(BAD_PROBE,       EINVAL,   "bad probe kind, flags, handler, symbol or period") \
	X(BAD_STRING,      EINVAL,   "string outside STRDATA, too long, or holding a NUL") \
	X(BAD_FORMAT,      EINVAL,   "format with too many arguments or stray kind bits") \
	X(BAD_OPCODE,      EINVAL,   "unknown opcode")			\
	X(BAD_OPERAND,     EINVAL,   "unused operand not zero")		\
	X(BAD_REGISTER,    EINVAL,   "register index out of range")	\
	X(UNINIT_REGISTER, EINVAL,   "register read before it is written") \
	X(BAD_JUMP,        EINVAL,   "jump target outside the handler or in the wrong direction") \
	X(BAD_INDEX,       EINVAL,   "constant, string, global, format or helper index out of range") \
	X(BAD_CONTEXT,     EINVAL,   "helper not allowed in this probe context") \
	X(NO_RET,          EINVAL,   "handler does not end in a return instruction") \
	X(NO_MEMORY,       ENOMEM,   "out of memory")			\
	X(BAD_HELPER,      EINVAL,   "helper result kind does not match CALLI/CALLS") \
	X(BAD_CALL,        EINVAL,   "call target not a function, or arguments or result kind do not match") \
	X(BAD_RETURN,      EINVAL,   "return instruction does not match the handler's result kind") \
	X(BAD_STAT,        EINVAL,   "bad statistic descriptor, or a statistic without what the instruction needs") \
	X(BAD_MAP,         EINVAL,   "bad map descriptor, or a map instruction whose keys or value do not match the map") \
	X(BAD_REGEX,       EINVAL,   "bad regular expression table") \
	X(BAD_TRY,         EINVAL,   "catch target not after every instruction it covers, or armed differently on two paths") \
	X(BAD_PRETTY,      EINVAL,   "bad pretty-printing type node") \
	X(BAD_USYM,        EINVAL,   "bad user-space symbol table")

/* Verifier error codes: STP_VERR_OK == 0. */
enum stp_verify_error {
#define STP_X_VERR_ENUM(name, err, msg) STP_VERR_##name,
	STP_VERIFY_ERRORS(STP_X_VERR_ENUM)
#undef STP_X_VERR_ENUM
	STP_VERR__COUNT
};

/* ------------------------------------------------------------------ */
/* Run-time errors                                                     */

/*
 * Errors that end one handler at run time: name, stap's message (user
 * space appends " near <probe point> at file:line:col"). Counted against
 * MAXERRORS.
 *
 * OVERLOAD is not the VM's: the module writes it after the hit that
 * tripped the overload breaker (STP_OVERLOAD_THRESHOLD), with addr = the
 * handler cycles summed on that CPU, counts it as an error and puts the
 * session in the error state whatever MAXERRORS says; user space prints it
 * without a location.
 *
 * SUBEXP_FAILED and SUBEXP_RANGE (MATCHED, opcodes.h) carry the group
 * number as addr, printed signed (%lld).
 */
#define STP_RUNTIME_ERRORS(X)						\
	X(NONE,        "no error")					\
	X(DIVZERO,     "division by 0")					\
	X(MAXACTION,   "MAXACTION exceeded")				\
	X(KFAULT,      "kernel read fault at 0x%llx")			\
	X(KSTRFAULT,   "kernel string copy fault at 0x%llx [man error::fault]")		\
	X(USTRFAULT,   "user string copy fault -14 at 0x%llx [man error::fault]")		\
	X(BADOP,       "invalid instruction (verifier bug)")		\
	X(MAXNESTING,  "MAXNESTING exceeded")				\
	X(USER,        "%s")						\
	X(EMPTY_AGG,   "empty aggregate")				\
	X(HIST_INDEX,  "histogram index out of range")			\
	X(ARRAY_OVERFLOW, "Array overflow, check MAXMAPENTRIES")		\
	X(ARRAY_SIZE,  "Array overflow, check size limit (%llu)")	\
	X(OVERLOAD,    "probe overhead (%llu cycles) exceeded threshold (%llu cycles) in last %llu cycles") \
	X(SUBEXP_FAILED, "Attempted to get subexpression %lld from failed match") \
	X(SUBEXP_RANGE, "Attempted to get nonexistent subexpression %lld") \
	X(SUBEXP_COUNT, "Attempted to get subexpression count from failed match") \
	X(VERDICT,     "netfilter verdict %lld is not NF_DROP (0) or NF_ACCEPT (1); the packet is accepted")

/* Run-time error codes: STP_RTE_NONE == 0. */
enum stp_runtime_error {
#define STP_X_RTE_ENUM(name, msg) STP_RTE_##name,
	STP_RUNTIME_ERRORS(STP_X_RTE_ENUM)
#undef STP_X_RTE_ENUM
	STP_RTE__COUNT
};

/* ------------------------------------------------------------------ */
/* Ioctls                                                              */

#define STP_DEVICE_PATH		"/dev/stapvm"
#define STP_IOC_MAGIC		'S'

/*
 * Extensible argument structures (LOAD, START, PROBE_STATS, MAP_READ) start with
 * __u32 args_size, the size the caller knows. The module accepts, like the
 * kernel's copy_struct_from_user():
 *   - args_size == the size it knows;
 *   - args_size larger (a newer caller) when every byte past the size it
 *     knows is zero; otherwise E2BIG (also when args_size >
 *     STP_ARGS_SIZE_MAX, as clone3 and openat2 refuse more than a page);
 *   - args_size equal to an older size listed here (STP_*_ARGS_SIZE_VER*),
 *     the missing tail reading as zero; any other smaller size is EINVAL.
 * The ioctl number encodes sizeof() of the structure the caller was built
 * with; the module matches these three requests on direction, type and
 * number only, and goes by args_size. Output fields are written only when
 * they lie inside args_size. Reserved fields and undefined flags must be 0.
 */
#define STP_ARGS_SIZE_MAX	4096u

/*
 * LOAD, on /dev/stapvm: verify an image and create a session. Returns a
 * new file descriptor (the session) on success. On failure returns -1 with
 * errno from STP_VERIFY_ERRORS and fills err_code, err_where and the log.
 */
#define STP_LOAD_ARGS_SIZE_VER0	40u	/* the first (current) layout */

struct stp_load_args {
	__u32 args_size;	/* sizeof(struct stp_load_args) */
	__u32 flags;		/* none defined: must be 0 */
	__u64 image;		/* user pointer to the image */
	__u32 image_size;	/* bytes */
	__u32 log_size;		/* bytes at log, <= STP_LOG_MAX is used */
	__u64 log;		/* user pointer: NUL-terminated message */
	__u32 err_code;		/* out: enum stp_verify_error */
	__u32 err_where;	/* out: instruction or entry index */
};

/*
 * INFO, on a session: what user space needs to map the rings. nr_cpus
 * counts CPU ids (the kernel's nr_cpu_ids), not CPUs: ids 0..nr_cpus-1.
 * An id that is not possible on this machine (a hole in the possible mask)
 * has no ring, and mmap at its offset fails with ENXIO; so does any offset
 * at or past nr_cpus * ring_stride_pages pages.
 */
struct stp_session_info {
	__u32 nr_cpus;		/* CPU ids; a ring for each possible one */
	__u32 page_size;
	__u32 ring_pages;	/* data pages per ring (power of two) */
	__u32 ring_stride_pages; /* mmap pgoff distance between rings */
};

/*
 * Session states.
 *
 * STP_STATE_ERROR is SystemTap's error state: run-time errors exceeded
 * MAXERRORS, nested (skipped) hits exceeded MAXSKIPPED, the overload
 * breaker tripped, or the deadman disarmed the probes. From the hit
 * that tripped the breaker on, no handler runs; STOP disarms and runs no
 * end handler (stap runs its `error` probes there instead; there are none
 * yet). An error in an end handler that trips the breaker skips the end
 * handlers after it. The state stays ERROR after STOP. STATUS reports
 * ERROR as soon as the breaker tripped (also while still RUNNING).
 */
enum stp_session_state {
	STP_STATE_LOADED,	/* verified, nothing armed */
	STP_STATE_RUNNING,	/* begin ran, probes armed */
	STP_STATE_STOPPED,	/* probes disarmed, end ran */
	STP_STATE_ERROR,	/* a breaker tripped; end skipped */
};

/*
 * STATUS, on a session: counters, summed over CPUs.
 *
 * exit_requested is set by exit() or by a breaker (then state is
 * STP_STATE_ERROR too), to the first reason that asked (enum
 * stp_exit_reason). Once it is set, poll() on the session reports
 * EPOLLIN until STOP, records or not (level-triggered: a loader that polls
 * without issuing STOP spins); after STOP, EPOLLIN means unconsumed
 * records only.
 */
enum stp_exit_reason {
	STP_EXIT_NONE,		/* running */
	STP_EXIT_REQUESTED,	/* exit(), MAXERRORS or MAXSKIPPED */
	STP_EXIT_OVERLOAD,	/* the overload breaker (error state) */
	/*
	 * The deadman (error state): records waited in a ring and no ring's
	 * consumer_pos moved for STP_DEADMAN_NS; the module disarmed every
	 * probe by itself. STOP then runs the error probes.
	 */
	STP_EXIT_DEADMAN,
};

#define STP_DEADMAN_NS		10000000000ull	/* 10 s */

struct stp_status {
	__u32 state;		/* enum stp_session_state */
	__u32 exit_requested;	/* enum stp_exit_reason */
	__u64 hits;		/* handler runs */
	__u64 errors;		/* run-time errors */
	__u64 skipped;		/* nested hits, kprobe/kretprobe misses */
	__u64 dropped;		/* records that did not fit a ring */
	__u64 probes_armed;	/* kprobes, kretprobes and timers armed */
};

/*
 * GLOBALS, on a session: copy out the global scalars. count is in/out:
 * the number of __s64 slots at values, then the number written.
 */
struct stp_globals_args {
	__u64 values;		/* user pointer to __s64[count] */
	__u32 count;
	__u32 reserved;
};

/*
 * START, on a session: run begin handlers, then arm every probe. On
 * failure (-1 with errno) the session is stopped for good (begin may have
 * run; nothing stays armed) and, when a probe failed to arm, failed_probe
 * is its index in the image's PROBES and failed_err the negative errno
 * arming returned (e.g. -ENOENT: no such symbol, -EINVAL: a function that
 * cannot be probed). Otherwise failed_probe is STP_START_NO_PROBE and
 * failed_err 0. A probe with STP_PROBE_F_OPTIONAL that fails to arm is
 * left unarmed and is not a failure.
 */
#define STP_START_ARGS_SIZE_VER0 16u	/* the first (current) layout */
#define STP_START_NO_PROBE	0xffffffffu

struct stp_start_args {
	__u32 args_size;	/* sizeof(struct stp_start_args) */
	__u32 flags;		/* none defined: must be 0 */
	__u32 failed_probe;	/* out: index into PROBES, or STP_START_NO_PROBE */
	__s32 failed_err;	/* out: -errno of the probe that failed, or 0 */
};

/*
 * PROBE_STATS, on a session: per-probe counters, summed over CPUs, one
 * entry per probe of the image (index into PROBES), readable in any state
 * (after STOP too). count is in/out: the number of entries at stats, then
 * the number of probes the session has; min(in, out) entries are written.
 */
struct stp_probe_stat {
	__u64 hits;		/* handler runs for this probe (begin/end too) */
	__u64 skipped;		/* guard-refused nested hits + nmissed */
};

#define STP_PROBE_STATS_ARGS_SIZE_VER0 24u	/* the first (current) layout */

struct stp_probe_stats_args {
	__u32 args_size;	/* sizeof(struct stp_probe_stats_args) */
	__u32 flags;		/* none defined: must be 0 */
	__u64 stats;		/* user pointer to struct stp_probe_stat[count] */
	__u32 count;		/* in: entries at stats; out: probes */
	__u32 reserved;		/* must be 0 */
};

/*
 * MAP_READ, on a session, any state: copy out entries of map `map` (index
 * into MAPS), starting at entry slot `cursor`, as many whole entries as
 * fit in buf_size bytes. On return count is the number of entries written
 * and cursor the slot to continue from, STP_MAP_READ_END when every slot
 * was visited. Each entry is a struct stp_map_rec, then the keys in key
 * order, then the value: a long is a __s64, a string a __u32 length, the
 * bytes and zero padding to 8. An entry that does not fit an empty buffer
 * is E2BIG (buf_size < the largest entry). While probes run, entries
 * inserted or deleted during the walk may be missed or seen.
 */
#define STP_MAP_READ_ARGS_SIZE_VER0 32u	/* the first (current) layout */
#define STP_MAP_READ_END	0xffffffffu

struct stp_map_read_args {
	__u32 args_size;	/* sizeof(struct stp_map_read_args) */
	__u32 map;		/* index into MAPS */
	__u64 buf;		/* user pointer */
	__u32 buf_size;		/* bytes at buf */
	__u32 cursor;		/* in/out: slot to start at / continue from */
	__u32 count;		/* out: entries written */
	__u32 flags;		/* none defined: must be 0 */
};

/*
 * INPUT, on a RUNNING session: len bytes at buf are input (the consumer's
 * standard input). Each byte runs every INPUT_CHAR probe with $value that
 * byte; INPUT_LINE probes run once per line with $value the line and its
 * "\n" (stap's input.line), at most MAXSTRINGLEN - 1 bytes of it (the
 * rest of a longer line, "\n" included, is dropped); a line without its
 * "\n" waits for the next INPUT (never ends at EOF). At most
 * STP_INPUT_CHUNK bytes are taken per call: returns how many, 0 when
 * the session runs no more handlers. Process context; the handlers run
 * with preemption disabled, as begin's.
 */
#define STP_INPUT_CHUNK		4096u

struct stp_input_args {
	__u64 buf;		/* user pointer */
	__u32 len;		/* bytes at buf */
	__u32 flags;		/* none defined: must be 0 */
};

/* One entry of MAP_READ's output; keys and value follow. */
struct stp_map_rec {
	__u32 len;		/* bytes of the entry, this header included */
	__u32 reserved;
	__u64 seq;		/* insertion number: older entries are smaller */
};

#define STP_IOC_LOAD	_IOWR(STP_IOC_MAGIC, 1, struct stp_load_args)
#define STP_IOC_INFO	_IOR(STP_IOC_MAGIC, 2, struct stp_session_info)
#define STP_IOC_START	_IOWR(STP_IOC_MAGIC, 3, struct stp_start_args)
#define STP_IOC_STOP	_IO(STP_IOC_MAGIC, 4)
#define STP_IOC_STATUS	_IOR(STP_IOC_MAGIC, 5, struct stp_status)
#define STP_IOC_GLOBALS	_IOWR(STP_IOC_MAGIC, 6, struct stp_globals_args)
#define STP_IOC_PROBE_STATS _IOWR(STP_IOC_MAGIC, 7, struct stp_probe_stats_args)
#define STP_IOC_MAP_READ _IOWR(STP_IOC_MAGIC, 8, struct stp_map_read_args)
#define STP_IOC_INPUT	_IOW(STP_IOC_MAGIC, 9, struct stp_input_args)

/* ------------------------------------------------------------------ */
/* Rings                                                               */

/*
 * The page size of the user-space models of a session: the C core built
 * for user space (vm-spec/csrc/stp_env.h: STP_ENV_PAGE_SIZE, the unit of
 * its nofault copies), HostSession's ring (RING_PAGES pages) and the
 * reference VM's simulated memory. The module uses the kernel's PAGE_SIZE
 * and reports it in struct stp_session_info.page_size; consumers of real
 * rings use that.
 */
#define STP_HOST_PAGE_SIZE	4096u

/*
 * One single-producer ring per possible CPU, BPF-ringbuf layout. The ring
 * of CPU i starts at mmap page offset i * ring_stride_pages:
 *
 *   page 0          consumer page: struct stp_ring_cons, user RW
 *   page 1          producer page: struct stp_ring_prod, user RO
 *   pages 2..       data, ring_pages pages, mapped twice in a row so that
 *                   a record never wraps; user RO
 *
 * Map page 0 alone with PROT_READ|PROT_WRITE, and pages 1.. (1 + 2 *
 * ring_pages pages) with PROT_READ. Positions only grow; a record starts at
 * data + (pos & (ring_pages * page_size - 1)).
 *
 * The kernel never trusts consumer_pos: a value outside
 * [producer_pos - size, producer_pos] makes the ring count as full.
 *
 * Ordering: the kernel publishes records with a store-release of
 * producer_pos, which the consumer load-acquires; the consumer frees room
 * with a store-release of consumer_pos after reading the records. A
 * consumer waits for records in poll() on the session fd: a commit that
 * finds consumer_pos at its old producer_pos (the consumer caught up)
 * wakes the pollers, and both that check and poll's check for records put
 * a full barrier between their store and their load, so a consumer that
 * stores consumer_pos and then polls never sleeps on a record.
 */
struct stp_ring_cons {
	__u64 consumer_pos;	/* written by user space only */
};

struct stp_ring_prod {
	__u64 producer_pos;	/* store-release by the kernel */
	__u64 dropped;		/* records that did not fit */
};

/* Record types. */
enum stp_rec_type {
	STP_REC_PRINTF = 1,	/* id = format; payload = arguments */
	STP_REC_ERROR = 2,	/* id = enum stp_runtime_error; struct stp_rec_error */
	STP_REC_EXIT = 3,	/* exit() ran; no payload */
	STP_REC_HIST = 4,	/* id = statistic; struct stp_rec_hist */
	STP_REC_SYSTEM = 5,	/* system(cmd); id 0; __u32 length, bytes, pad */
};

/*
 * Every record starts with this header and takes len bytes, a multiple of
 * 8. PRINTF payload: for each argument in order, an integer is a __s64; a
 * string is a __u32 length, the bytes, and zero padding to 8 bytes.
 * SYSTEM payload: the command as one such string (opcodes.h SYSTEM).
 */
struct stp_rec_hdr {
	__u32 len;		/* whole record, header included */
	__u16 type;		/* enum stp_rec_type */
	__u16 id;
	__u64 time_ns;		/* monotonic clock, for merging CPUs */
};

/*
 * Payload of STP_REC_ERROR. handler and pc name the instruction that
 * failed, inside a function's handler when the error happened in a
 * function. For STP_RTE_USER (error(msg)), addr is the length of the
 * message and the message bytes follow the struct, zero-padded to 8
 * bytes; every other error has no bytes after the struct.
 */
struct stp_rec_error {
	__u32 handler;		/* index into HANDLERS */
	__u32 pc;		/* instruction index inside the handler */
	__u64 addr;		/* faulting address, if any; USER: message
				 * bytes; SUBEXP_*: the group number
				 */
};

/*
 * Payload of STP_REC_HIST (print(@hist_log(s)), print(@hist_linear(...))):
 * the statistic's histogram parameters (struct stp_stat_desc) and its
 * buckets merged over CPUs, nbuckets __s64 after the struct. User space
 * draws it as stap's _stp_stat_print_histogram does.
 */
struct stp_rec_hist {
	__u8 hist;		/* enum stp_hist_kind: LOG or LINEAR */
	__u8 reserved[3];
	__u32 nbuckets;
	__s32 start;
	__s32 stop;
	__s32 interval;
	__u32 reserved2;
};

#endif /* STAPVM_ABI_H */
