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
#define STP_MIN_RING_PAGES	4u	/* data pages of one per-CPU ring */
#define STP_MAX_RING_PAGES	4096u	/* power of two */
#define STP_LOG_MAX		512u	/* bytes of a LOAD error message */

/*
 * Session limits with SystemTap's names: name, default, minimum, maximum.
 * The image carries the values the script asked for (-D NAME=V); the module
 * refuses values outside [minimum, maximum].
 */
#define STP_LIMITS(X)						\
	X(MAXACTION,     10000,  1, 100000000)			\
	X(MAXSTRINGLEN,  512,    16, 4096)			\
	X(MAXMAPENTRIES, 2048,   1, 1048576)			\
	X(MAXERRORS,     0,      0, 1000000)			\
	X(MAXSKIPPED,    100,    0, 1000000000)			\
	X(MAXNESTING,    10,     1, 64)				\
	X(MAXTRYLOCK,    100,    1, 100000)			\
	X(RING_PAGES,    64,     4, 4096)

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
#define STP_IMAGE_VERSION	1u

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
	X(FORMATS,  struct stp_format_desc)

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
	__u32 reserved;		/* must be 0 */
	struct stp_section_desc sec[STP_SEC__COUNT];
	__u32 limits[STP_LIM__COUNT];
};

/*
 * Probe contexts: what fired the handler. A handler is verified for one
 * context (helpers.h restricts helpers by context).
 */
enum stp_ctx {
	STP_CTX_BEGIN,		/* begin probe, process context */
	STP_CTX_END,		/* end probe, process context */
	STP_CTX_TIMER,		/* hrtimer, hardirq context */
	STP_CTX_KPROBE,		/* function entry (kprobe) */
	STP_CTX_KRETPROBE,	/* function return (kretprobe) */
	STP_CTX__COUNT
};

#define STP_CTXM_BEGIN		(1 << STP_CTX_BEGIN)
#define STP_CTXM_END		(1 << STP_CTX_END)
#define STP_CTXM_TIMER		(1 << STP_CTX_TIMER)
#define STP_CTXM_KPROBE		(1 << STP_CTX_KPROBE)
#define STP_CTXM_KRETPROBE	(1 << STP_CTX_KRETPROBE)
#define STP_CTXM_ANY		((1 << STP_CTX__COUNT) - 1)
#define STP_CTXM_ENTRY		STP_CTXM_KPROBE
#define STP_CTXM_RET		STP_CTXM_KRETPROBE

/* One handler: a slice of CODE ending in RET. */
struct stp_handler_desc {
	__u32 insn_off;		/* first instruction, index into CODE */
	__u32 insn_count;	/* instructions; the last one is RET */
	__u8 nregs;		/* integer registers used, <= STP_MAX_REGS */
	__u8 nsregs;		/* string registers used, <= STP_MAX_SREGS */
	__u8 ctx;		/* enum stp_ctx */
	__u8 reserved[5];	/* must be 0 */
};

/* Kinds of probe point; each implies the context of its handler. */
enum stp_probe_kind {
	STP_PROBE_BEGIN,	/* STP_CTX_BEGIN; runs at START */
	STP_PROBE_END,		/* STP_CTX_END; runs at STOP */
	STP_PROBE_TIMER,	/* STP_CTX_TIMER; period_ns */
	STP_PROBE_KPROBE,	/* STP_CTX_KPROBE; symbol + offset */
	STP_PROBE_KRETPROBE,	/* STP_CTX_KRETPROBE; symbol */
	STP_PROBE__COUNT
};

/* Probe flags. */
#define STP_PROBE_F_OPTIONAL	0x1u	/* '?': failure to arm is not an error */
#define STP_PROBE_F__ALL	0x1u

/* One probe point, bound to one handler. */
struct stp_probe_desc {
	__u8 kind;		/* enum stp_probe_kind */
	__u8 flags;		/* STP_PROBE_F_* */
	__u16 reserved;		/* must be 0 */
	__u32 handler;		/* index into HANDLERS */
	__u32 symbol;		/* string id (STRS) of the symbol; kprobes only */
	__u32 offset;		/* byte offset into the symbol; kprobes only */
	__u32 maxactive;	/* kretprobes; 0 = kernel default */
	__u32 reserved2;	/* must be 0 */
	__u64 period_ns;	/* timers only; >= 100000 (100 us) */
};

#define STP_MIN_TIMER_NS	100000ull

/* One constant string: a slice of STRDATA, no NUL inside. */
struct stp_str_desc {
	__u32 off;		/* into STRDATA */
	__u32 len;		/* bytes, <= MAXSTRINGLEN */
};

/*
 * One printf format, as the kernel sees it: only the number and kinds of
 * its arguments. The text lives in the .stpb and is formatted in user
 * space. Bit i of str_mask is set when argument i is a string. The record
 * carries the arguments in order: integers from r[b], r[b+1], ... and
 * strings from s[c], s[c+1], ..., interleaved as str_mask says.
 */
struct stp_format_desc {
	__u32 nargs;		/* <= STP_MAX_FMT_ARGS */
	__u32 str_mask;		/* bit i: argument i is a string */
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
	X(BAD_HEADER,      EINVAL,   "bad header size, flags or reserved field") \
	X(BAD_SIZE,        EINVAL,   "total size does not match the buffer") \
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
	X(NO_RET,          EINVAL,   "handler does not end in RET")	\
	X(NO_MEMORY,       ENOMEM,   "out of memory")

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
 */
#define STP_RUNTIME_ERRORS(X)						\
	X(NONE,        "no error")					\
	X(DIVZERO,     "division by 0")					\
	X(MAXACTION,   "MAXACTION exceeded")				\
	X(KFAULT,      "kernel read fault at 0x%llx")			\
	X(KSTRFAULT,   "kernel string copy fault at 0x%llx")		\
	X(USTRFAULT,   "user string copy fault at 0x%llx")		\
	X(BADOP,       "invalid instruction (verifier bug)")

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
 * LOAD, on /dev/stapvm: verify an image and create a session. Returns a
 * new file descriptor (the session) on success. On failure returns -1 with
 * errno from STP_VERIFY_ERRORS and fills err_code, err_where and the log.
 */
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

/* INFO, on a session: what user space needs to map the rings. */
struct stp_session_info {
	__u32 nr_cpus;		/* rings: one per possible CPU id */
	__u32 page_size;
	__u32 ring_pages;	/* data pages per ring (power of two) */
	__u32 ring_stride_pages; /* mmap pgoff distance between rings */
};

/* Session states. */
enum stp_session_state {
	STP_STATE_LOADED,	/* verified, nothing armed */
	STP_STATE_RUNNING,	/* begin ran, probes armed */
	STP_STATE_STOPPED,	/* probes disarmed, end ran */
};

/* STATUS, on a session: counters, summed over CPUs. */
struct stp_status {
	__u32 state;		/* enum stp_session_state */
	__u32 exit_requested;	/* exit() ran or a breaker tripped */
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

#define STP_IOC_LOAD	_IOWR(STP_IOC_MAGIC, 1, struct stp_load_args)
#define STP_IOC_INFO	_IOR(STP_IOC_MAGIC, 2, struct stp_session_info)
#define STP_IOC_START	_IO(STP_IOC_MAGIC, 3)
#define STP_IOC_STOP	_IO(STP_IOC_MAGIC, 4)
#define STP_IOC_STATUS	_IOR(STP_IOC_MAGIC, 5, struct stp_status)
#define STP_IOC_GLOBALS	_IOWR(STP_IOC_MAGIC, 6, struct stp_globals_args)

/* ------------------------------------------------------------------ */
/* Rings                                                               */

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
};

/*
 * Every record starts with this header and takes len bytes, a multiple of
 * 8. PRINTF payload: for each argument in order, an integer is a __s64; a
 * string is a __u32 length, the bytes, and zero padding to 8 bytes.
 */
struct stp_rec_hdr {
	__u32 len;		/* whole record, header included */
	__u16 type;		/* enum stp_rec_type */
	__u16 id;
	__u64 time_ns;		/* monotonic clock, for merging CPUs */
};

/* Payload of STP_REC_ERROR. */
struct stp_rec_error {
	__u32 handler;		/* index into HANDLERS */
	__u32 pc;		/* instruction index inside the handler */
	__u64 addr;		/* faulting address, if any */
};

#endif /* STAPVM_ABI_H */
