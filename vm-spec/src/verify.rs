//! The Rust verifier: the rules of `kmod/core/verify.c`, rule for rule and
//! in the same order, over the same flat image bytes, with the same error
//! codes (`abi::STP_VERR_*` from `STP_VERIFY_ERRORS`), the same `where`
//! and the same message text.
//!
//! The C verifier is the trust boundary (the module runs it on every LOAD).
//! This one exists so that the compiler never writes a program the module
//! would refuse (`compiler::verify` runs it at the end of every compile),
//! and as a second reading of the rules: `vm-spec/tests/verify.rs` checks
//! that both give the same verdict, code, place and message on every
//! hand-built negative image and on streams of generated and mutated ones.
//! verify.c's header comment states the guarantees; docs/bytecode.md maps
//! each to its error codes and negative tests.
//!
//! Differences, none of which an image can reach: the buffer is a slice,
//! so its alignment is no question; scratch memory comes from
//! `Vec::try_reserve`, and `fail_next_allocs` makes it fail for tests
//! (NO_MEMORY), as `core::host_fail_next_allocs` does for the C side.
//! Memory sizes (map blocks, iterators, call frames) use the struct sizes
//! of the user-space build of the core (`core::ffi`), as the C verifier
//! compiled into user space does.
use crate::abi::*;
use crate::core::{ffi, VerifiedInfo, VerifyError};
use crate::tables::{HelperArg, HelperRes, Operand, HELPERS, OPCODES, VERIFY_ERRORS};
use std::cell::Cell;
use std::mem::{offset_of, size_of};

thread_local! {
    static FAIL_ALLOCS: Cell<u32> = const { Cell::new(0) };
}

/// Test hook: makes the next `n` scratch allocations of the calling thread
/// fail, so that `verify_image` refuses with NO_MEMORY.
pub fn fail_next_allocs(n: u32) {
    FAIL_ALLOCS.with(|c| c.set(n));
}

fn alloc_fails() -> bool {
    FAIL_ALLOCS.with(|c| {
        let n = c.get();
        c.set(n.saturating_sub(1));
        n > 0
    })
}

type R<T = ()> = Result<T, Box<VerifyError>>;

/// `fail()` of verify.c: the code, where, and the message (cut where
/// `stp_format` would cut it: `STP_LOG_MAX - 1` bytes).
fn fail(code: u32, at: u64, mut message: String) -> Box<VerifyError> {
    let cap = STP_LOG_MAX as usize - 1;
    if message.len() > cap {
        let mut n = cap;
        while !message.is_char_boundary(n) {
            n -= 1;
        }
        message.truncate(n);
    }
    let name = VERIFY_ERRORS
        .get(code as usize)
        .map_or("UNKNOWN", |e| e.name);
    Box::new(VerifyError {
        code,
        name,
        at: at as u32,
        message,
    })
}

/// `FAIL(res, CODE, where, fmt, ...)` of verify.c.
macro_rules! bail {
    ($code:expr, $at:expr, $($fmt:tt)*) => {
        return Err(fail($code, ($at) as u64, format!($($fmt)*)))
    };
}

/// Verifies an image with the Rust verifier: the same verdict, code,
/// `where` and message as `core::verify_image` (the C verifier).
pub fn verify_image(image: &[u8]) -> Result<VerifiedInfo, VerifyError> {
    verify(image).map_err(|e| *e)
}

// ---------------------------------------------------------------------
// Reading the image (little-endian, bounds already proved by the caller).

fn u8_at(b: &[u8], o: usize) -> u8 {
    b[o]
}
fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from(u32_at(b, o)) | (u64::from(u32_at(b, o + 4)) << 32)
}

const HDR_SIZE: usize = size_of::<stp_image_hdr>();
const OFF_SEC: usize = offset_of!(stp_image_hdr, sec);
const OFF_LIMITS: usize = offset_of!(stp_image_hdr, limits);
const NSEC: usize = STP_SEC__COUNT as usize;
const NLIM: usize = STP_LIM__COUNT as usize;

/// Entry sizes of the sections, in `enum stp_section` order.
const SEC_ENTRY: [u32; NSEC] = [
    size_of::<stp_insn>() as u32,
    size_of::<stp_handler_desc>() as u32,
    size_of::<stp_probe_desc>() as u32,
    size_of::<i64>() as u32,
    size_of::<stp_str_desc>() as u32,
    1,
    size_of::<stp_format_desc>() as u32,
    size_of::<stp_stat_desc>() as u32,
    size_of::<stp_map_desc>() as u32,
    size_of::<stp_regex_desc>() as u32,
    size_of::<u16>() as u32,
];
const SEC_NAME: [&str; NSEC] = [
    "CODE",
    "HANDLERS",
    "PROBES",
    "KONSTS",
    "STRS",
    "STRDATA",
    "FORMATS",
    "STATS",
    "MAPS",
    "REGEXES",
    "REGEXDATA",
];
// A new section in abi.h's STP_SECTIONS must be added above (and its
// checks mirrored from verify.c).
const _: () = assert!(
    STP_SEC__COUNT == 11
        && STP_SEC_STRDATA == 5
        && STP_SEC_MAPS == 8
        && STP_SEC_REGEXES == 9
        && STP_SEC_REGEXDATA == 10
);

// One instruction, handler, statistic and map descriptor: abi.h's own
// structs (bindgen), read by `read_entry!`.
type Insn = stp_insn;
type Handler = stp_handler_desc;
type Stat = stp_stat_desc;
type Map = stp_map_desc;

/// A field type of the ABI structs, read little-endian at a byte offset.
trait Field {
    fn at(b: &[u8], o: usize) -> Self;
}
impl<const N: usize> Field for [u8; N] {
    fn at(b: &[u8], o: usize) -> Self {
        std::array::from_fn(|k| b[o + k])
    }
}
/// The integer fields: their bytes, little-endian.
macro_rules! int_field {
    ($($t:ty),+) => {$(
        impl Field for $t {
            fn at(b: &[u8], o: usize) -> Self {
                <$t>::from_le_bytes(Field::at(b, o))
            }
        }
    )+};
}
int_field!(u8, u16, u32, i32);

/// Entry `i` of section `sec` of `prog` as the ABI struct `T`, each named
/// field read at its `offset_of!`, so no layout is written here and the
/// struct literal fails to compile if abi.h adds a field.
macro_rules! read_entry {
    ($prog:expr, $sec:expr, $i:expr => $T:ident { $($f:ident),+ $(,)? }) => {{
        let o = $prog.entry($sec, $i);
        $T { $($f: Field::at($prog.img, o + offset_of!($T, $f))),+ }
    }};
}

/// `struct stp_prog` as the checks fill it: typed views and counts.
struct Prog<'a> {
    img: &'a [u8],
    sec_off: [usize; NSEC],
    ninsns: u32,
    nhandlers: u32,
    nprobes: u32,
    nkonsts: u32,
    nstrs: u32,
    strdata_size: u32,
    nformats: u32,
    nglobals: u32,
    nstats: u32,
    nmaps: u32,
    nregexes: u32,
    rxdata_len: u32,
    limits: [u32; NLIM],
    nfuncs: u32,
    stat_bytes: u64,
    iter_cap: u32,
    niters: u32,
}

impl Prog<'_> {
    fn entry(&self, s: u32, i: u32) -> usize {
        self.sec_off[s as usize] + i as usize * SEC_ENTRY[s as usize] as usize
    }
    fn insn(&self, i: u32) -> Insn {
        read_entry!(self, STP_SEC_CODE, i => stp_insn { op, a, b, c, imm })
    }
    fn handler(&self, i: u32) -> Handler {
        read_entry!(self, STP_SEC_HANDLERS, i => stp_handler_desc {
            insn_off, insn_count, nregs, nsregs, ctx, nparams, nsparams, ret, reserved
        })
    }
    /// (off, len) of string `i`.
    fn string(&self, i: u32) -> (u32, u32) {
        let o = self.entry(STP_SEC_STRS, i);
        (u32_at(self.img, o), u32_at(self.img, o + 4))
    }
    fn strdata(&self, off: u32, len: u32) -> &[u8] {
        let o = self.sec_off[STP_SEC_STRDATA as usize] + off as usize;
        &self.img[o..o + len as usize]
    }
    /// (nargs, str_mask, text, reserved) of format `i`.
    fn format(&self, i: u32) -> (u32, u32, u32, u32) {
        let o = self.entry(STP_SEC_FORMATS, i);
        let b = self.img;
        (
            u32_at(b, o),
            u32_at(b, o + 4),
            u32_at(b, o + 8),
            u32_at(b, o + 12),
        )
    }
    fn stat(&self, i: u32) -> Stat {
        read_entry!(self, STP_SEC_STATS, i => stp_stat_desc {
            hist, shift, flags, reserved, nbuckets, start, stop, interval, offset
        })
    }
    fn map(&self, i: u32) -> Map {
        read_entry!(self, STP_SEC_MAPS, i => stp_map_desc {
            nkeys, value, flags, reserved, key_str_mask, reserved2, capacity, stat
        })
    }
}

// Field layout that the offsets written by hand assume (abi.h): the
// string and format readers above, check_probes and check_header.
const _: () = {
    assert!(offset_of!(stp_probe_desc, handler) == 4);
    assert!(offset_of!(stp_probe_desc, period_ns) == 24);
    assert!(size_of::<stp_probe_desc>() == 32);
    assert!(size_of::<stp_str_desc>() == 8 && size_of::<stp_format_desc>() == 16);
    assert!(offset_of!(stp_image_hdr, total_size) == 8);
    assert!(offset_of!(stp_image_hdr, nglobals) == 16);
};

fn popcount(x: u32) -> u32 {
    x.count_ones()
}

// ---------------------------------------------------------------------
// Header, limits, sections

fn check_header(b: &[u8], size: u32) -> R {
    let magic = u32_at(b, 0);
    let version = u16_at(b, 4);
    let hdr_size = u16_at(b, 6);
    let total = u32_at(b, 8);
    let flags = u32_at(b, 12);
    let reserved = u32_at(b, 20);
    if magic != STP_IMAGE_MAGIC {
        bail!(
            STP_VERR_BAD_MAGIC,
            0,
            "bad magic 0x{magic:x}: not a stapvm image"
        );
    }
    if u32::from(version) != STP_IMAGE_VERSION {
        bail!(
            STP_VERR_BAD_VERSION,
            0,
            "image version {version}, this module reads version {STP_IMAGE_VERSION}"
        );
    }
    if usize::from(hdr_size) != HDR_SIZE {
        bail!(
            STP_VERR_BAD_HEADER,
            0,
            "header size {hdr_size}, expected {HDR_SIZE}"
        );
    }
    if flags != 0 || reserved != 0 {
        bail!(
            STP_VERR_BAD_HEADER,
            0,
            "header flags 0x{flags:x} / reserved 0x{reserved:x} must be 0"
        );
    }
    if total != size {
        bail!(
            STP_VERR_BAD_SIZE,
            0,
            "header says {total} bytes, buffer has {size}"
        );
    }
    for (i, l) in crate::limits::LIMITS.iter().enumerate().take(NLIM) {
        let v = u32_at(b, OFF_LIMITS + 4 * i);
        if v < l.min || v > l.max {
            bail!(
                STP_VERR_BAD_LIMIT,
                i,
                "limit {} = {v} outside [{}, {}]",
                l.name,
                l.min,
                l.max
            );
        }
    }
    let rp = u32_at(b, OFF_LIMITS + 4 * STP_LIM_RING_PAGES as usize);
    if rp & rp.wrapping_sub(1) != 0 {
        bail!(
            STP_VERR_BAD_LIMIT,
            STP_LIM_RING_PAGES,
            "limit RING_PAGES = {rp} is not a power of two"
        );
    }
    // A threshold above the interval could never trip (abi.h).
    let thr = u32_at(b, OFF_LIMITS + 4 * STP_LIM_STP_OVERLOAD_THRESHOLD as usize);
    let ivl = u32_at(b, OFF_LIMITS + 4 * STP_LIM_STP_OVERLOAD_INTERVAL as usize);
    if thr > ivl {
        bail!(
            STP_VERR_BAD_LIMIT,
            STP_LIM_STP_OVERLOAD_THRESHOLD,
            "limit STP_OVERLOAD_THRESHOLD = {thr} is above STP_OVERLOAD_INTERVAL = {ivl}"
        );
    }
    Ok(())
}

fn sec_desc(b: &[u8], i: usize) -> (u64, u64) {
    (
        u64::from(u32_at(b, OFF_SEC + 8 * i)),
        u64::from(u32_at(b, OFF_SEC + 8 * i + 4)),
    )
}

// Index loops, as in verify.c: i and j are section numbers.
#[allow(clippy::needless_range_loop)]
fn check_sections(b: &[u8], size: u32) -> R {
    for i in 0..NSEC {
        let (off, len) = sec_desc(b, i);
        if off % 8 != 0 {
            bail!(
                STP_VERR_BAD_SECTION,
                i,
                "section {} at {off} is not 8-byte aligned",
                SEC_NAME[i]
            );
        }
        if off < HDR_SIZE as u64 || off + len > u64::from(size) {
            bail!(
                STP_VERR_BAD_SECTION,
                i,
                "section {} [{off}, {}) outside [{HDR_SIZE}, {size})",
                SEC_NAME[i],
                off + len
            );
        }
        if len % u64::from(SEC_ENTRY[i]) != 0 {
            bail!(
                STP_VERR_BAD_SECTION,
                i,
                "section {}: {len} bytes is not a multiple of {}",
                SEC_NAME[i],
                SEC_ENTRY[i]
            );
        }
    }
    for i in 0..NSEC {
        let (a0, al) = sec_desc(b, i);
        let a1 = a0 + al;
        for j in i + 1..NSEC {
            let (b0, bl) = sec_desc(b, j);
            let b1 = b0 + bl;
            if a0 == a1 || b0 == b1 {
                continue;
            }
            if a0 < b1 && b0 < a1 {
                bail!(
                    STP_VERR_BAD_SECTION,
                    j,
                    "section {} overlaps section {}",
                    SEC_NAME[j],
                    SEC_NAME[i]
                );
            }
        }
    }
    Ok(())
}

fn fill_prog(img: &[u8]) -> Prog<'_> {
    let mut sec_off = [0usize; NSEC];
    let mut n = [0u32; NSEC];
    for i in 0..NSEC {
        let (off, len) = sec_desc(img, i);
        sec_off[i] = off as usize;
        n[i] = (len / u64::from(SEC_ENTRY[i])) as u32;
    }
    let mut limits = [0u32; NLIM];
    for (i, l) in limits.iter_mut().enumerate() {
        *l = u32_at(img, OFF_LIMITS + 4 * i);
    }
    Prog {
        img,
        sec_off,
        ninsns: n[STP_SEC_CODE as usize],
        nhandlers: n[STP_SEC_HANDLERS as usize],
        nprobes: n[STP_SEC_PROBES as usize],
        nkonsts: n[STP_SEC_KONSTS as usize],
        nstrs: n[STP_SEC_STRS as usize],
        strdata_size: n[STP_SEC_STRDATA as usize],
        nformats: n[STP_SEC_FORMATS as usize],
        nglobals: u32_at(img, offset_of!(stp_image_hdr, nglobals)),
        nstats: n[STP_SEC_STATS as usize],
        nmaps: n[STP_SEC_MAPS as usize],
        nregexes: n[STP_SEC_REGEXES as usize],
        rxdata_len: n[STP_SEC_REGEXDATA as usize],
        limits,
        nfuncs: 0,
        stat_bytes: 0,
        iter_cap: 0,
        niters: 0,
    }
}

fn check_counts(p: &Prog) -> R {
    let caps = [
        ("ninsns", p.ninsns, STP_MAX_INSNS),
        ("nhandlers", p.nhandlers, STP_MAX_HANDLERS),
        ("nprobes", p.nprobes, STP_MAX_PROBES),
        ("nkonsts", p.nkonsts, STP_MAX_KONSTS),
        ("nstrs", p.nstrs, STP_MAX_STRS),
        ("nformats", p.nformats, STP_MAX_FORMATS),
        ("nglobals", p.nglobals, STP_MAX_GLOBALS),
        ("nstats", p.nstats, STP_MAX_STATS),
        ("nmaps", p.nmaps, STP_MAX_MAPS),
        ("nregexes", p.nregexes, STP_MAX_REGEXES),
    ];
    for (i, (what, n, max)) in caps.into_iter().enumerate() {
        if n > max {
            bail!(STP_VERR_TOO_MANY, i, "{what} = {n}, the cap is {max}");
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------
// Tables: strings, formats, handlers, probes, statistics, maps

fn check_strings(p: &Prog) -> R {
    let maxlen = p.limits[STP_LIM_MAXSTRINGLEN as usize] - 1;
    for i in 0..p.nstrs {
        let (off, len) = p.string(i);
        if u64::from(off) + u64::from(len) > u64::from(p.strdata_size) {
            bail!(
                STP_VERR_BAD_STRING,
                i,
                "string {i} [{off}, +{len}) outside STRDATA ({} bytes)",
                p.strdata_size
            );
        }
        if len > maxlen {
            bail!(
                STP_VERR_BAD_STRING,
                i,
                "string {i}: {len} bytes, MAXSTRINGLEN is {} (NUL included)",
                maxlen + 1
            );
        }
        if p.strdata(off, len).contains(&0) {
            bail!(STP_VERR_BAD_STRING, i, "string {i} holds a NUL byte");
        }
    }
    Ok(())
}

fn check_formats(p: &Prog) -> R {
    for i in 0..p.nformats {
        let (nargs, mask, text, reserved) = p.format(i);
        if reserved != 0 {
            bail!(
                STP_VERR_BAD_FORMAT,
                i,
                "format {i}: reserved field must be 0"
            );
        }
        if text != STP_FMT_NO_TEXT && text >= p.nstrs {
            bail!(
                STP_VERR_BAD_FORMAT,
                i,
                "format {i} names string {text} of {} as its text",
                p.nstrs
            );
        }
        if nargs > STP_MAX_FMT_ARGS {
            bail!(
                STP_VERR_BAD_FORMAT,
                i,
                "format {i} has {nargs} arguments, the cap is {STP_MAX_FMT_ARGS}"
            );
        }
        if nargs < 32 && (mask >> nargs) != 0 {
            bail!(
                STP_VERR_BAD_FORMAT,
                i,
                "format {i}: kind mask 0x{mask:x} has bits past its {nargs} arguments"
            );
        }
    }
    Ok(())
}

/// Regular expressions (struct stp_regex_desc): sizes, byte classes, the
/// start state and every transition in range, the table inside REGEXDATA.
fn check_regexes(p: &Prog) -> R {
    let b = p.img;
    for i in 0..p.nregexes {
        let o = p.entry(STP_SEC_REGEXES, i);
        let nstates = u32_at(b, o + offset_of!(stp_regex_desc, nstates));
        let nclasses = u32_at(b, o + offset_of!(stp_regex_desc, nclasses));
        let start = u32_at(b, o + offset_of!(stp_regex_desc, start));
        let trans = u32_at(b, o + offset_of!(stp_regex_desc, trans));
        let classes = o + offset_of!(stp_regex_desc, classes);
        let cells = u64::from(nstates) * u64::from(nclasses);
        if !(2..=STP_MAX_REGEX_STATES).contains(&nstates) || !(2..=257).contains(&nclasses) {
            bail!(
                STP_VERR_BAD_REGEX,
                i,
                "regex {i}: {nstates} states of {nclasses} classes outside [2, {STP_MAX_REGEX_STATES}] x [2, 257]"
            );
        }
        if start >= nstates {
            bail!(
                STP_VERR_BAD_REGEX,
                i,
                "regex {i}: start state {start} of {nstates}"
            );
        }
        if u64::from(trans) + cells > u64::from(p.rxdata_len) {
            bail!(
                STP_VERR_BAD_REGEX,
                i,
                "regex {i}: table [{trans}, +{cells}) outside REGEXDATA ({} entries)",
                p.rxdata_len
            );
        }
        for k in 0..256 {
            let c = u32::from(b[classes + k]);
            if c >= nclasses - 1 {
                bail!(
                    STP_VERR_BAD_REGEX,
                    i,
                    "regex {i}: byte {k} in class {c} of {}",
                    nclasses - 1
                );
            }
        }
        let t = p.sec_off[STP_SEC_REGEXDATA as usize] + 2 * trans as usize;
        for k in 0..cells as usize {
            let v = u32::from(u16_at(b, t + 2 * k));
            if v >= nstates {
                bail!(
                    STP_VERR_BAD_REGEX,
                    i,
                    "regex {i}: entry {k} goes to state {v} of {nstates}"
                );
            }
        }
    }
    Ok(())
}

fn is_return(op: u8) -> bool {
    let op = u32::from(op);
    op == STP_OP_RET || op == STP_OP_RETI || op == STP_OP_RETS
}

/// The return instruction of a result kind (`enum stp_ret_kind` order).
fn ret_op(ret: u8) -> u32 {
    match u32::from(ret) {
        STP_RET_LONG => STP_OP_RETI,
        STP_RET_STR => STP_OP_RETS,
        _ => STP_OP_RET,
    }
}

fn op_name(op: u32) -> &'static str {
    OPCODES.get(op as usize).map_or("?", |o| o.name)
}

/// `stp_vm_frames_size()` of stp_core.h.
fn frames_size(nframes: u32, maxstringlen: u32) -> u64 {
    let sb = (u64::from(STP_MAX_SREGS) * (u64::from(maxstringlen) + 1) + 7) & !7;
    u64::from(nframes) * (size_of::<ffi::stp_frame>() as u64 + sb)
}

fn check_handlers(p: &mut Prog) -> R {
    let mut prev_end = 0u64;
    for i in 0..p.nhandlers {
        let h = p.handler(i);
        let end = u64::from(h.insn_off) + u64::from(h.insn_count);
        if h.insn_count == 0 || end > u64::from(p.ninsns) {
            bail!(
                STP_VERR_BAD_HANDLER,
                i,
                "handler {i} [{}, {end}) empty or outside CODE ({} instructions)",
                h.insn_off,
                p.ninsns
            );
        }
        if u64::from(h.insn_off) < prev_end {
            bail!(
                STP_VERR_BAD_HANDLER,
                i,
                "handler {i} starts at {}, inside or before handler {}",
                h.insn_off,
                i64::from(i) - 1
            );
        }
        prev_end = end;
        if u32::from(h.nregs) > STP_MAX_REGS || u32::from(h.nsregs) > STP_MAX_SREGS {
            bail!(
                STP_VERR_BAD_HANDLER,
                i,
                "handler {i} uses {} integer and {} string registers, the caps are {STP_MAX_REGS} and {STP_MAX_SREGS}",
                h.nregs,
                h.nsregs
            );
        }
        if u32::from(h.ctx) >= STP_CTX__ALL {
            bail!(
                STP_VERR_BAD_HANDLER,
                i,
                "handler {i} has unknown context {}",
                h.ctx
            );
        }
        for (j, r) in h.reserved.iter().enumerate() {
            if *r != 0 {
                bail!(
                    STP_VERR_BAD_HANDLER,
                    i,
                    "handler {i}: reserved byte {j} is not 0"
                );
            }
        }
        let is_fn = u32::from(h.ctx) == STP_CTX_FUNCTION;
        if !is_fn && (h.nparams != 0 || h.nsparams != 0 || h.ret != 0) {
            bail!(
                STP_VERR_BAD_HANDLER,
                i,
                "handler {i} is not a function: nparams, nsparams and ret must be 0"
            );
        }
        if h.nparams > h.nregs || h.nsparams > h.nsregs || u32::from(h.ret) >= STP_RET__COUNT {
            bail!(
                STP_VERR_BAD_HANDLER,
                i,
                "function {i}: {}/{} parameters for {}/{} registers, result kind {}",
                h.nparams,
                h.nsparams,
                h.nregs,
                h.nsregs,
                h.ret
            );
        }
        if is_fn {
            p.nfuncs += 1;
        }
        let last = p.insn((end - 1) as u32).op;
        if !is_return(last) {
            let name = if u32::from(last) < STP_OP__COUNT {
                op_name(u32::from(last))
            } else {
                "an unknown opcode"
            };
            bail!(
                STP_VERR_NO_RET,
                end - 1,
                "handler {i} ends in {name} at insn {}, not RET, RETI or RETS",
                end - 1
            );
        }
    }
    let nest = p.limits[STP_LIM_MAXNESTING as usize];
    let msl = p.limits[STP_LIM_MAXSTRINGLEN as usize];
    if p.nfuncs != 0 && frames_size(nest, msl) > u64::from(STP_MAX_FRAME_BYTES) {
        bail!(
            STP_VERR_BAD_LIMIT,
            STP_LIM_MAXNESTING,
            "MAXNESTING {nest} frames with MAXSTRINGLEN {msl} take more than {STP_MAX_FRAME_BYTES} bytes per CPU"
        );
    }
    Ok(())
}

fn symbol_char_ok(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'$'
}

/// The handler context each probe kind requires.
fn probe_ctx(kind: u8) -> u32 {
    match u32::from(kind) {
        STP_PROBE_BEGIN => STP_CTX_BEGIN,
        STP_PROBE_END | STP_PROBE_ERROR => STP_CTX_END,
        STP_PROBE_TIMER => STP_CTX_TIMER,
        STP_PROBE_KPROBE | STP_PROBE_TRACEPOINT => STP_CTX_KPROBE,
        _ => STP_CTX_KRETPROBE,
    }
}
const _: () = assert!(STP_PROBE__COUNT == 7);

fn check_probes(p: &Prog) -> R {
    for i in 0..p.nprobes {
        let o = p.entry(STP_SEC_PROBES, i);
        let b = p.img;
        let kind = u8_at(b, o);
        let flags = u8_at(b, o + 1);
        let reserved = u16_at(b, o + 2);
        let handler = u32_at(b, o + 4);
        let symbol = u32_at(b, o + 8);
        let offset = u32_at(b, o + 12);
        let maxactive = u32_at(b, o + 16);
        let reserved2 = u32_at(b, o + 20);
        let period = u64_at(b, o + 24);
        let k = u32::from(kind);
        let kp = k == STP_PROBE_KPROBE || k == STP_PROBE_KRETPROBE || k == STP_PROBE_TRACEPOINT;

        if k >= STP_PROBE__COUNT {
            bail!(STP_VERR_BAD_PROBE, i, "probe {i} has unknown kind {kind}");
        }
        if u32::from(flags) & !STP_PROBE_F__ALL != 0 {
            bail!(
                STP_VERR_BAD_PROBE,
                i,
                "probe {i} has unknown flags 0x{flags:x}"
            );
        }
        if u32::from(flags) & STP_PROBE_F_PROFILE != 0 && k != STP_PROBE_TIMER {
            bail!(
                STP_VERR_BAD_PROBE,
                i,
                "probe {i}: the profile flag is only for timers"
            );
        }
        if reserved != 0 || reserved2 != 0 {
            bail!(
                STP_VERR_BAD_PROBE,
                i,
                "probe {i}: reserved fields must be 0"
            );
        }
        if handler >= p.nhandlers {
            bail!(
                STP_VERR_BAD_PROBE,
                i,
                "probe {i} names handler {handler} of {}",
                p.nhandlers
            );
        }
        let hctx = p.handler(handler).ctx;
        if u32::from(hctx) != probe_ctx(kind) {
            bail!(
                STP_VERR_BAD_PROBE,
                i,
                "probe {i} of kind {kind} needs a handler of context {}, handler {handler} has {hctx}",
                probe_ctx(kind)
            );
        }
        if k == STP_PROBE_TIMER && !(period == 0 && u32::from(flags) & STP_PROBE_F_PROFILE != 0) {
            if period < u64::from(STP_MIN_TIMER_NS) {
                bail!(
                    STP_VERR_BAD_PROBE,
                    i,
                    "probe {i}: timer period {period} ns is below {STP_MIN_TIMER_NS} ns"
                );
            }
            if period > STP_MAX_TIMER_NS {
                bail!(
                    STP_VERR_BAD_PROBE,
                    i,
                    "probe {i}: timer period {period} ns is above {STP_MAX_TIMER_NS} ns"
                );
            }
        } else if period != 0 {
            bail!(
                STP_VERR_BAD_PROBE,
                i,
                "probe {i}: period set on a probe that is not a timer"
            );
        }
        if !kp {
            if symbol != 0 || offset != 0 || maxactive != 0 {
                bail!(
                    STP_VERR_BAD_PROBE,
                    i,
                    "probe {i}: symbol, offset or maxactive set on a probe that is not a kprobe"
                );
            }
            continue;
        }
        if k == STP_PROBE_TRACEPOINT && (offset != 0 || maxactive != 0) {
            bail!(
                STP_VERR_BAD_PROBE,
                i,
                "probe {i}: offset or maxactive set on a tracepoint"
            );
        }
        if maxactive > STP_MAX_MAXACTIVE {
            bail!(
                STP_VERR_BAD_PROBE,
                i,
                "probe {i}: maxactive {maxactive} is above {STP_MAX_MAXACTIVE}"
            );
        }
        if symbol >= p.nstrs {
            bail!(
                STP_VERR_BAD_PROBE,
                i,
                "probe {i} names string {symbol} of {} as its symbol",
                p.nstrs
            );
        }
        let (soff, slen) = p.string(symbol);
        if slen == 0 || slen > STP_MAX_SYMBOL_LEN {
            bail!(
                STP_VERR_BAD_PROBE,
                i,
                "probe {i}: symbol of {slen} bytes, must be 1 to {STP_MAX_SYMBOL_LEN}"
            );
        }
        let s = p.strdata(soff, slen);
        let mut colons = 0u32;
        for (j, &c) in s.iter().enumerate() {
            // module:function: one ':' not first nor last.
            if c == b':' && j != 0 && j + 1 < s.len() {
                colons += 1;
                if colons == 1 {
                    continue;
                }
            }
            if !symbol_char_ok(c) {
                bail!(
                    STP_VERR_BAD_PROBE,
                    i,
                    "probe {i}: symbol has byte 0x{c:x} at {j}, not in [A-Za-z0-9_.$] (one ':' after a module name)"
                );
            }
        }
    }
    Ok(())
}

/// `stp_stat_size()` of stp_core.h.
fn stat_size(d: &Stat) -> u64 {
    crate::image::stat_size(d.nbuckets)
}

fn check_stats(p: &mut Prog) -> R {
    let mut off = 0u64;
    for i in 0..p.nstats {
        let d = p.stat(i);
        let span = i64::from(d.stop) - i64::from(d.start);
        if d.reserved != 0 || u32::from(d.flags) & !STP_STAT_F__ALL != 0 {
            bail!(
                STP_VERR_BAD_STAT,
                i,
                "statistic {i}: unknown flags 0x{:x} or reserved field",
                d.flags
            );
        }
        if u32::from(d.shift) > STP_STAT_MAX_SHIFT
            || (d.shift != 0 && u32::from(d.flags) & STP_STAT_F_VARIANCE == 0)
        {
            bail!(
                STP_VERR_BAD_STAT,
                i,
                "statistic {i}: shift {} (at most {STP_STAT_MAX_SHIFT}, only with the variance flag)",
                d.shift
            );
        }
        let ok = match u32::from(d.hist) {
            STP_HIST_NONE => d.nbuckets == 0 && d.start == 0 && d.stop == 0 && d.interval == 0,
            STP_HIST_LOG => {
                d.nbuckets == STP_HIST_LOG_BUCKETS && d.start == 0 && d.stop == 0 && d.interval == 0
            }
            STP_HIST_LINEAR => {
                d.interval > 0
                    && i64::from(d.nbuckets) == span / i64::from(d.interval) + 3
                    && d.nbuckets >= 3
                    && d.nbuckets <= STP_HIST_MAX_BUCKETS
            }
            _ => false,
        };
        if !ok {
            bail!(
                STP_VERR_BAD_STAT,
                i,
                "statistic {i}: histogram kind {} with {} buckets, start {}, stop {}, interval {}",
                d.hist,
                d.nbuckets,
                d.start,
                d.stop,
                d.interval
            );
        }
        if u32::from(d.flags) & STP_STAT_F_ARRAY != 0 {
            continue;
        }
        if u64::from(d.offset) != off {
            bail!(
                STP_VERR_BAD_STAT,
                i,
                "statistic {i} at offset {}, must be {off}",
                d.offset
            );
        }
        off += stat_size(&d);
        if off > u64::from(STP_MAX_STAT_BYTES) {
            bail!(
                STP_VERR_BAD_STAT,
                i,
                "statistics take more than {STP_MAX_STAT_BYTES} bytes per CPU"
            );
        }
    }
    p.stat_bytes = off;
    Ok(())
}

/// `stp_map_size()` of map.c (the user-space build's `struct stp_map`).
fn map_size(d: &Map, maxstr: u32) -> u64 {
    let round8 = |n: u64| (n + 7) & !7;
    let nstr = u64::from(popcount(u32::from(d.key_str_mask)));
    let nlong = u64::from(d.nkeys).wrapping_sub(nstr);
    let slot = round8(4 + u64::from(maxstr));
    let mut es = round8(24); // struct stp_map_ent: 4 u32 and a u64
    es += if u32::from(d.value) == STP_MAPV_STR {
        slot
    } else {
        8
    };
    es += 8 * nlong + slot * nstr;
    let es = es & 0xffff_ffff; // computed in u32 by map.c
    let mut pow2 = 1u64;
    while pow2 < u64::from(d.capacity) {
        pow2 <<= 1;
    }
    let pow2 = pow2 & 0xffff_ffff;
    round8(size_of::<ffi::stp_map>() as u64)
        + (round8(4 * pow2) & 0xffff_ffff)
        + u64::from(d.capacity) * es
}

fn check_maps(p: &mut Prog) -> R {
    let maxstr = p.limits[STP_LIM_MAXSTRINGLEN as usize];
    let mut soff = p.stat_bytes;
    let mut total = 0u64;
    p.iter_cap = 0;
    for i in 0..p.nmaps {
        let d = p.map(i);
        if d.reserved != 0
            || d.reserved2 != 0
            || (d.stat != 0 && u32::from(d.value) != STP_MAPV_STAT)
            || u32::from(d.flags) & !STP_MAP_F__ALL != 0
        {
            bail!(
                STP_VERR_BAD_MAP,
                i,
                "map {i}: unknown flags 0x{:x} or reserved field",
                d.flags
            );
        }
        if d.nkeys == 0
            || u32::from(d.nkeys) > STP_MAX_MAP_KEYS
            || (u32::from(d.key_str_mask) >> d.nkeys) != 0
        {
            bail!(
                STP_VERR_BAD_MAP,
                i,
                "map {i}: {} keys (1 to {STP_MAX_MAP_KEYS}), string mask 0x{:x}",
                d.nkeys,
                d.key_str_mask
            );
        }
        if u32::from(d.value) >= STP_MAPV__COUNT {
            bail!(
                STP_VERR_BAD_MAP,
                i,
                "map {i}: value kind {} is not supported",
                d.value
            );
        }
        if d.capacity == 0 || d.capacity > STP_MAX_MAP_ENTRIES {
            bail!(
                STP_VERR_BAD_MAP,
                i,
                "map {i}: capacity {} outside [1, {STP_MAX_MAP_ENTRIES}]",
                d.capacity
            );
        }
        if u32::from(d.value) == STP_MAPV_STAT {
            if d.stat >= p.nstats || u32::from(p.stat(d.stat).flags) & STP_STAT_F_ARRAY == 0 {
                bail!(
                    STP_VERR_BAD_MAP,
                    i,
                    "map {i}: statistic {} is not an array statistic",
                    d.stat
                );
            }
            let sd = p.stat(d.stat);
            if u64::from(sd.offset) != soff {
                bail!(
                    STP_VERR_BAD_STAT,
                    d.stat,
                    "statistic {} at offset {}, must be {soff}",
                    d.stat,
                    sd.offset
                );
            }
            soff += u64::from(d.capacity) * stat_size(&sd);
            if soff > u64::from(STP_MAX_STAT_BYTES) {
                bail!(
                    STP_VERR_BAD_STAT,
                    d.stat,
                    "statistics take more than {STP_MAX_STAT_BYTES} bytes per CPU"
                );
            }
        }
        total += map_size(&d, maxstr);
        if total > u64::from(STP_MAX_MAP_BYTES) {
            bail!(
                STP_VERR_TOO_MANY,
                i,
                "maps take more than {STP_MAX_MAP_BYTES} bytes (at map {i})"
            );
        }
        if d.capacity > p.iter_cap {
            p.iter_cap = d.capacity;
        }
    }
    p.stat_bytes = soff;
    Ok(())
}

// ---------------------------------------------------------------------
// Code

/// Read-before-write state of one instruction: what is surely written on
/// every forward path reaching it.
#[derive(Clone, Copy, Default)]
struct St {
    r: u64,
    s: u16,
    it: u8,
    seen: bool,
    /// The armed catch (TRY): target pc + 1 (0: none) and its message
    /// register; `bad_catch` when two paths bring different ones.
    catch1: u32,
    creg: u8,
    bad_catch: bool,
}

fn flow(st: &mut [St], t: usize, out: &St) {
    if !st[t].seen {
        st[t] = St {
            seen: true,
            bad_catch: false,
            ..*out
        };
    } else {
        st[t].r &= out.r;
        st[t].s &= out.s;
        st[t].it &= out.it;
        if st[t].catch1 != out.catch1 || st[t].creg != out.creg {
            st[t].bad_catch = true;
        }
    }
}

/// Where one instruction is: the `AT` prefix of verify.c's messages.
#[derive(Clone, Copy)]
struct At<'h> {
    h: &'h Handler,
    hi: u32,
    off: u32,
    pc: u32,
}

impl At<'_> {
    fn at(&self) -> u64 {
        u64::from(self.off) + u64::from(self.pc)
    }
    fn pre(&self) -> String {
        format!("insn {} (handler {} pc {}): ", self.at(), self.hi, self.pc)
    }
}

/// Fails with `code` at the instruction, message `AT` + text.
macro_rules! bail_at {
    ($w:expr, $code:expr, $($fmt:tt)*) => {
        return Err(fail($code, $w.at(), format!("{}{}", $w.pre(), format!($($fmt)*))))
    };
}

fn check_reg(w: At, pos: &str, k: Operand, v: u8, inp: &St, live: bool) -> R {
    let h = w.h;
    match k {
        Operand::NO if v != 0 => {
            bail_at!(
                w,
                STP_VERR_BAD_OPERAND,
                "unused operand {pos} is {v}, must be 0"
            );
        }
        Operand::RW | Operand::RR | Operand::RM => {
            if v >= h.nregs {
                bail_at!(
                    w,
                    STP_VERR_BAD_REGISTER,
                    "operand {pos}: r{v}, handler has {} integer registers",
                    h.nregs
                );
            }
            if k != Operand::RW && live && inp.r & (1u64 << v) == 0 {
                bail_at!(
                    w,
                    STP_VERR_UNINIT_REGISTER,
                    "r{v} read before it is written"
                );
            }
        }
        Operand::SW | Operand::SR => {
            if v >= h.nsregs {
                bail_at!(
                    w,
                    STP_VERR_BAD_REGISTER,
                    "operand {pos}: s{v}, handler has {} string registers",
                    h.nsregs
                );
            }
            if k == Operand::SR && live && inp.s & (1u16 << v) == 0 {
                bail_at!(
                    w,
                    STP_VERR_UNINIT_REGISTER,
                    "s{v} read before it is written"
                );
            }
        }
        Operand::RP => {
            if u32::from(v) + 1 >= u32::from(h.nregs) {
                bail_at!(
                    w,
                    STP_VERR_BAD_REGISTER,
                    "operand {pos}: r{v} and the next, handler has {} integer registers",
                    h.nregs
                );
            }
            if live && (!inp.r & (3u64 << v)) != 0 {
                bail_at!(
                    w,
                    STP_VERR_UNINIT_REGISTER,
                    "r{v} or r{} read before it is written",
                    u32::from(v) + 1
                );
            }
        }
        Operand::SP => {
            if u32::from(v) + 1 >= u32::from(h.nsregs) {
                bail_at!(
                    w,
                    STP_VERR_BAD_REGISTER,
                    "operand {pos}: s{v} and the next, handler has {} string registers",
                    h.nsregs
                );
            }
            if live && (!u32::from(inp.s) & (3u32 << v)) != 0 {
                bail_at!(
                    w,
                    STP_VERR_UNINIT_REGISTER,
                    "s{v} or s{} read before it is written",
                    u32::from(v) + 1
                );
            }
        }
        // RN/SN are checked with their length by check_runs().
        _ => {}
    }
    Ok(())
}

/// `check_runs()` of verify.c: the RN run at b and the SN run at c.
#[allow(clippy::too_many_arguments)]
fn check_runs(
    w: At,
    insn: &Insn,
    nint: u32,
    nstr: u32,
    what: &str,
    arg: &str,
    inp: &St,
    live: bool,
) -> R {
    let h = w.h;
    let (b, c) = (u32::from(insn.b), u32::from(insn.c));
    if nint == 0 && b != 0 {
        bail_at!(
            w,
            STP_VERR_BAD_OPERAND,
            "{what} {} has no integer arguments, b must be 0",
            insn.imm as u32
        );
    }
    if nstr == 0 && c != 0 {
        bail_at!(
            w,
            STP_VERR_BAD_OPERAND,
            "{what} {} has no string arguments, c must be 0",
            insn.imm as u32
        );
    }
    if b + nint > u32::from(h.nregs) {
        bail_at!(
            w,
            STP_VERR_BAD_REGISTER,
            "{what} {} needs r{b}..r{}, handler has {} integer registers",
            insn.imm as u32,
            (b + nint).wrapping_sub(1),
            h.nregs
        );
    }
    if c + nstr > u32::from(h.nsregs) {
        bail_at!(
            w,
            STP_VERR_BAD_REGISTER,
            "{what} {} needs s{c}..s{}, handler has {} string registers",
            insn.imm as u32,
            (c + nstr).wrapping_sub(1),
            h.nsregs
        );
    }
    if !live {
        return Ok(());
    }
    for r in b..b + nint {
        if inp.r & (1u64 << r) == 0 {
            bail_at!(
                w,
                STP_VERR_UNINIT_REGISTER,
                "r{r} ({arg} argument) read before it is written"
            );
        }
    }
    for s in c..c + nstr {
        if u32::from(inp.s) & (1u32 << s) == 0 {
            bail_at!(
                w,
                STP_VERR_UNINIT_REGISTER,
                "s{s} ({arg} argument) read before it is written"
            );
        }
    }
    Ok(())
}

/// Bits 16..23 of a map immediate (iterator, arithmetic, extractor).
fn imm_x(imm: i32) -> u32 {
    ((imm >> 16) & 0xff) as u32
}

fn check_map_insn(p: &Prog, w: At, insn: &Insn, inp: &St, live: bool) -> R {
    let oi = &OPCODES[insn.op as usize];
    let mi = (insn.imm & 0xffff) as u32;
    let d = p.map(mi);
    let nstr = popcount(u32::from(d.key_str_mask));
    let nlong = u32::from(d.nkeys) - nstr;
    let op = u32::from(insn.op);
    let want = match op {
        STP_OP_MGET | STP_OP_MSET | STP_OP_MOPR => Some(STP_MAPV_LONG),
        STP_OP_MGETS | STP_OP_MSETS => Some(STP_MAPV_STR),
        STP_OP_MSTADD | STP_OP_MSTX | STP_OP_MSTHIST | STP_OP_MSTHISTS => Some(STP_MAPV_STAT),
        _ => None,
    };
    if want.is_some_and(|v| v != u32::from(d.value)) {
        bail_at!(
            w,
            STP_VERR_BAD_MAP,
            "{} on map {mi}, whose values are of kind {}",
            oi.name,
            d.value
        );
    }
    if op == STP_OP_MSTX
        && imm_x(insn.imm) == STP_OP_STVAR
        && u32::from(p.stat(d.stat).flags) & STP_STAT_F_VARIANCE == 0
    {
        bail_at!(
            w,
            STP_VERR_BAD_STAT,
            "MSTX @variance of map {mi}, whose statistic has no variance flag"
        );
    }
    if (op == STP_OP_MSTHIST || op == STP_OP_MSTHISTS)
        && u32::from(p.stat(d.stat).hist) == STP_HIST_NONE
    {
        bail_at!(
            w,
            STP_VERR_BAD_STAT,
            "{} of map {mi}, whose statistic has no histogram",
            oi.name
        );
    }
    if oi.c == Operand::SORT {
        let c = u32::from(insn.c);
        let col = c & 15;
        let x = (c >> 4) & 7;
        // An extractor order only on a statistics array's value.
        if x != 0 && (col != 15 || u32::from(d.value) != STP_MAPV_STAT || x >= STP_SORTX__COUNT) {
            bail_at!(
                w,
                STP_VERR_BAD_MAP,
                "MITER order 0x{c:x} on map {mi}: an extractor order needs a statistics array's value"
            );
        }
        if (col > u32::from(d.nkeys) && col != 15) || (col == 0 && c != 0) {
            bail_at!(
                w,
                STP_VERR_BAD_MAP,
                "MITER order 0x{c:x} on map {mi} of {} keys",
                d.nkeys
            );
        }
        return Ok(());
    }
    if op == STP_OP_MNEXT && live && u32::from(inp.it) & (1u32 << (imm_x(insn.imm) & 7)) == 0 {
        bail_at!(
            w,
            STP_VERR_UNINIT_REGISTER,
            "iterator {} read before MITER fills it",
            imm_x(insn.imm) & 7
        );
    }
    if oi.b == Operand::RN {
        return check_runs(w, insn, nlong, nstr, "map", "key", inp, live);
    }
    if oi.b == Operand::RNW {
        return check_runs(w, insn, nlong, nstr, "map", "key", inp, false);
    }
    Ok(())
}

/// What a map instruction writes besides operand a: runs, iterators.
fn map_flow(p: &Prog, insn: &Insn, out: &mut St) {
    let oi = &OPCODES[insn.op as usize];
    if oi.imm == Operand::MIT && u32::from(insn.op) == STP_OP_MITER {
        out.it |= 1u8 << (imm_x(insn.imm) & 7);
    }
    if oi.b != Operand::RNW {
        return;
    }
    let d = p.map((insn.imm & 0xffff) as u32);
    let nstr = popcount(u32::from(d.key_str_mask));
    let nlong = u32::from(d.nkeys) - nstr;
    for i in 0..nlong {
        out.r |= 1u64 << (u32::from(insn.b) + i);
    }
    for i in 0..nstr {
        out.s |= 1u16 << (u32::from(insn.c) + i);
    }
}

fn check_insn_extra(p: &Prog, w: At, insn: &Insn, inp: &St, live: bool) -> R {
    let op = u32::from(insn.op);
    match op {
        STP_OP_PRINTF | STP_OP_SPRINTF => {
            let (nargs, mask, text, _) = p.format(insn.imm as u32);
            let nstr = popcount(mask);
            let nint = nargs - nstr;
            if op == STP_OP_SPRINTF && text == STP_FMT_NO_TEXT {
                bail_at!(
                    w,
                    STP_VERR_BAD_INDEX,
                    "SPRINTF of format {}, which has no text",
                    insn.imm
                );
            }
            let (a, c) = (u32::from(insn.a), u32::from(insn.c));
            if op == STP_OP_SPRINTF && nstr != 0 && a >= c && a < c + nstr {
                bail_at!(
                    w,
                    STP_VERR_BAD_REGISTER,
                    "SPRINTF writes s{a}, one of its arguments"
                );
            }
            let arg = if op == STP_OP_PRINTF {
                "printf"
            } else {
                "sprintf"
            };
            check_runs(w, insn, nint, nstr, "format", arg, inp, live)
        }
        STP_OP_FCALL | STP_OP_FCALLI | STP_OP_FCALLS => {
            let f = p.handler(insn.imm as u32);
            check_runs(
                w,
                insn,
                u32::from(f.nparams),
                u32::from(f.nsparams),
                "function",
                "function",
                inp,
                live,
            )
        }
        STP_OP_SREPL => {
            let (a, b, c) = (u32::from(insn.a), u32::from(insn.b), u32::from(insn.c));
            if a == b || a == c || a == c + 1 {
                bail_at!(
                    w,
                    STP_VERR_BAD_REGISTER,
                    "SREPL writes s{a}, one of its operands"
                );
            }
            Ok(())
        }
        STP_OP_STEXT | STP_OP_STEXTN => {
            if insn.a == insn.b {
                bail_at!(
                    w,
                    STP_VERR_BAD_REGISTER,
                    "{} writes s{}, its operand",
                    OPCODES[insn.op as usize].name,
                    insn.a
                );
            }
            Ok(())
        }
        STP_OP_STHIST | STP_OP_STHISTS | STP_OP_STBKT => {
            if u32::from(p.stat(insn.imm as u32).hist) == STP_HIST_NONE {
                bail_at!(
                    w,
                    STP_VERR_BAD_STAT,
                    "{} of statistic {}, which has no histogram",
                    op_name(op),
                    insn.imm
                );
            }
            Ok(())
        }
        STP_OP_MGET | STP_OP_MGETS | STP_OP_MSET | STP_OP_MSETS | STP_OP_MOPR | STP_OP_MDEL
        | STP_OP_MHAS | STP_OP_MCLEAR | STP_OP_MITER | STP_OP_MNEXT | STP_OP_MSTADD
        | STP_OP_MSTX | STP_OP_MSTHIST | STP_OP_MSTHISTS => check_map_insn(p, w, insn, inp, live),
        STP_OP_STVAR => {
            if u32::from(p.stat(insn.imm as u32).flags) & STP_STAT_F_VARIANCE == 0 {
                bail_at!(
                    w,
                    STP_VERR_BAD_STAT,
                    "STVAR of statistic {}, which has no variance flag",
                    insn.imm
                );
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The opcodes MOPR may apply to a map value.
fn mop_ok(x: u32) -> bool {
    [
        STP_OP_ADD, STP_OP_SUB, STP_OP_MUL, STP_OP_DIV, STP_OP_MOD, STP_OP_AND, STP_OP_OR,
        STP_OP_XOR, STP_OP_SHL, STP_OP_SHR,
    ]
    .contains(&x)
}

fn check_imm(p: &Prog, w: At, k: Operand, imm: i32) -> R {
    let h = w.h;
    let target = i64::from(w.pc) + 1 + i64::from(imm);
    let (what, n, imm) = match k {
        Operand::NO => {
            if imm != 0 {
                bail_at!(
                    w,
                    STP_VERR_BAD_OPERAND,
                    "unused immediate is {imm}, must be 0"
                );
            }
            return Ok(());
        }
        Operand::IMM => return Ok(()),
        Operand::JF | Operand::JB => {
            let fwd = k == Operand::JF;
            let bad = if fwd {
                imm < 0 || target >= i64::from(h.insn_count)
            } else {
                imm >= 0 || target < 0
            };
            if bad {
                bail_at!(
                    w,
                    STP_VERR_BAD_JUMP,
                    "{} jump to {} outside handler {} [{}, {})",
                    if fwd { "forward" } else { "backward" },
                    i64::from(w.off) + target,
                    w.hi,
                    w.off,
                    u64::from(w.off) + u64::from(h.insn_count)
                );
            }
            return Ok(());
        }
        Operand::K => ("constant", p.nkonsts, imm),
        Operand::STR => ("string", p.nstrs, imm),
        Operand::GLB => ("global", p.nglobals, imm),
        Operand::FMT => ("format", p.nformats, imm),
        Operand::HLP => ("helper", STP_HLP__COUNT, imm),
        Operand::FN => ("function", p.nhandlers, imm),
        Operand::STAT => {
            if imm >= 0
                && (imm as u32) < p.nstats
                && u32::from(p.stat(imm as u32).flags) & STP_STAT_F_ARRAY != 0
            {
                bail_at!(
                    w,
                    STP_VERR_BAD_STAT,
                    "statistic {imm} is a statistics array's"
                );
            }
            ("statistic", p.nstats, imm)
        }
        Operand::MOP | Operand::MIT | Operand::MSX => {
            let x = imm_x(imm);
            let bad = (imm as u32) >> 24 != 0
                || (k == Operand::MIT && x >= STP_MAX_ITERS)
                || (k == Operand::MSX && !(STP_OP_STCOUNT..=STP_OP_STVAR).contains(&x))
                || (k == Operand::MOP && !mop_ok(x));
            if bad {
                let what = match k {
                    Operand::MIT => "iterator",
                    Operand::MSX => "extractor",
                    _ => "operation",
                };
                bail_at!(
                    w,
                    STP_VERR_BAD_MAP,
                    "immediate 0x{:x}: bad {what} in bits 16..31",
                    i64::from(imm) as u64
                );
            }
            ("map", p.nmaps, imm & 0xffff)
        }
        Operand::MAP => ("map", p.nmaps, imm),
        Operand::RX => ("regex", p.nregexes, imm),
        _ => {
            bail_at!(
                w,
                STP_VERR_BAD_OPCODE,
                "immediate of unknown kind {} (ABI table bug)",
                k as u32
            );
        }
    };
    if imm < 0 || imm as u32 >= n {
        bail_at!(
            w,
            STP_VERR_BAD_INDEX,
            "{what} index {imm} out of range [0, {n})"
        );
    }
    Ok(())
}

fn check_handler_code(p: &Prog, hi: u32, st: &mut [St]) -> R {
    let h = p.handler(hi);
    let off = h.insn_off;
    let n = h.insn_count as usize;
    let st = &mut st[..n];
    st.fill(St::default());
    st[0].seen = true;
    st[0].r = if h.nparams >= 64 {
        !0
    } else {
        (1u64 << h.nparams) - 1
    };
    st[0].s = ((1u32 << h.nsparams) - 1) as u16;

    for pc in 0..h.insn_count {
        let insn = p.insn(off + pc);
        let w = At { h: &h, hi, off, pc };
        let live = st[pc as usize].seen;
        let op = u32::from(insn.op);
        let Some(oi) = OPCODES.get(insn.op as usize) else {
            bail_at!(w, STP_VERR_BAD_OPCODE, "unknown opcode {}", insn.op);
        };
        let mut kb = oi.b;

        check_imm(p, w, oi.imm, insn.imm)?;
        if op == STP_OP_CALLI || op == STP_OP_CALLS {
            let hl = &HELPERS[insn.imm as usize];
            let want = if op == STP_OP_CALLI {
                HelperRes::INT
            } else {
                HelperRes::STR
            };
            let kind = |r: HelperRes| {
                if r == HelperRes::INT {
                    "an integer"
                } else {
                    "a string"
                }
            };
            if hl.res != want {
                bail_at!(
                    w,
                    STP_VERR_BAD_HELPER,
                    "helper {} returns {}, {} needs {}",
                    hl.name,
                    kind(hl.res),
                    oi.name,
                    kind(want)
                );
            }
            if hl.ctx_mask & (1u32 << h.ctx) == 0 {
                bail_at!(
                    w,
                    STP_VERR_BAD_CONTEXT,
                    "helper {} not allowed in a handler of context {}",
                    hl.name,
                    h.ctx
                );
            }
            if hl.arg == HelperArg::NONE {
                kb = Operand::NO;
            }
        }
        if oi.imm == Operand::FN {
            let f = p.handler(insn.imm as u32);
            let want = match op {
                STP_OP_FCALLI => STP_RET_LONG,
                STP_OP_FCALLS => STP_RET_STR,
                _ => STP_RET_NONE,
            };
            if u32::from(f.ctx) != STP_CTX_FUNCTION {
                bail_at!(
                    w,
                    STP_VERR_BAD_CALL,
                    "{} of handler {}, which is not a function",
                    oi.name,
                    insn.imm
                );
            }
            if u32::from(f.ret) != want {
                bail_at!(
                    w,
                    STP_VERR_BAD_CALL,
                    "{} of function {}, whose result kind is {}",
                    oi.name,
                    insn.imm,
                    f.ret
                );
            }
        }
        if is_return(insn.op) {
            let want = if u32::from(h.ctx) == STP_CTX_FUNCTION {
                ret_op(h.ret)
            } else {
                STP_OP_RET
            };
            if op != want {
                bail_at!(
                    w,
                    STP_VERR_BAD_RETURN,
                    "{} in a handler that returns with {}",
                    oi.name,
                    op_name(want)
                );
            }
        }
        let inp = st[pc as usize];
        check_reg(w, "a", oi.a, insn.a, &inp, live)?;
        check_reg(w, "b", kb, insn.b, &inp, live)?;
        check_reg(w, "c", oi.c, insn.c, &inp, live)?;
        check_insn_extra(p, w, &insn, &inp, live)?;
        if !live {
            continue;
        }
        if inp.bad_catch {
            bail_at!(w, STP_VERR_BAD_TRY, "reached with different armed catches");
        }
        if inp.catch1 != 0 {
            // Any instruction may fail under its catch (verify.c rule 13).
            let t = inp.catch1 - 1;
            if t <= pc {
                bail_at!(w, STP_VERR_BAD_TRY, "armed catch at pc {t} is not after it");
            }
            let c = St {
                s: inp.s | 1u16 << inp.creg,
                catch1: 0,
                creg: 0,
                bad_catch: false,
                ..inp
            };
            flow(st, t as usize, &c);
        }

        let mut out = inp;
        match oi.a {
            Operand::RW | Operand::RM => out.r |= 1u64 << insn.a,
            Operand::SW => out.s |= 1u16 << insn.a,
            _ => {}
        }
        map_flow(p, &insn, &mut out);
        if op == STP_OP_TRY {
            // check_imm: JF, so the target is after the TRY.
            out.catch1 = pc + 1 + insn.imm as u32 + 1;
            out.creg = insn.a;
        } else if op == STP_OP_TRYEND {
            out.catch1 = 0;
            out.creg = 0;
        }

        let next = pc as usize + 1;
        let target = (i64::from(pc) + 1 + i64::from(insn.imm)) as usize;
        match op {
            STP_OP_JZ | STP_OP_JNZ => {
                flow(st, target, &out);
                flow(st, next, &out);
            }
            STP_OP_JMP => flow(st, target, &out),
            STP_OP_LOOP => {
                let t = &st[target];
                let mr = t.r & !out.r;
                let ms = t.s & !out.s;
                let mi = t.it & !out.it;
                if !t.seen {
                    bail_at!(
                        w,
                        STP_VERR_BAD_JUMP,
                        "loop back to pc {target}, which no forward path reaches"
                    );
                }
                if mr != 0 {
                    bail_at!(
                        w,
                        STP_VERR_UNINIT_REGISTER,
                        "loop back to pc {target} without r{}, which is written on every forward path there",
                        mr.trailing_zeros()
                    );
                }
                if ms != 0 {
                    bail_at!(
                        w,
                        STP_VERR_UNINIT_REGISTER,
                        "loop back to pc {target} without s{}, which is written on every forward path there",
                        ms.trailing_zeros()
                    );
                }
                if mi != 0 {
                    bail_at!(
                        w,
                        STP_VERR_UNINIT_REGISTER,
                        "loop back to pc {target} without iterator {}, which is filled on every forward path there",
                        mi.trailing_zeros()
                    );
                }
                if t.catch1 != out.catch1 || t.creg != out.creg {
                    bail_at!(
                        w,
                        STP_VERR_BAD_TRY,
                        "loop back to pc {target} with another armed catch"
                    );
                }
            }
            STP_OP_RET | STP_OP_RETI | STP_OP_RETS | STP_OP_ERROR => {}
            // next < insn_count: the last instruction returns.
            _ => flow(st, next, &out),
        }
    }
    Ok(())
}

/// `stp_iters_size()` of stp_core.h.
fn iters_size(niters: u32, iter_cap: u32) -> u64 {
    u64::from(niters)
        * (size_of::<ffi::stp_iter>() as u64
            + u64::from(iter_cap) * size_of::<ffi::stp_iter_ent>() as u64)
}

fn verify(image: &[u8]) -> R<VerifiedInfo> {
    let Ok(size) = u32::try_from(image.len()) else {
        bail!(
            STP_VERR_TOO_BIG,
            0,
            "image of {} bytes is larger than 4 GiB",
            image.len()
        );
    };
    if size > STP_MAX_IMAGE_SIZE {
        bail!(
            STP_VERR_TOO_BIG,
            0,
            "image of {size} bytes, the cap is {STP_MAX_IMAGE_SIZE}"
        );
    }
    if (size as usize) < HDR_SIZE {
        bail!(
            STP_VERR_TRUNCATED,
            0,
            "image of {size} bytes, the header alone takes {HDR_SIZE}"
        );
    }
    check_header(image, size)?;
    check_sections(image, size)?;
    let mut p = fill_prog(image);
    check_counts(&p)?;
    check_strings(&p)?;
    check_formats(&p)?;
    check_handlers(&mut p)?;
    check_probes(&p)?;
    check_stats(&mut p)?;
    check_maps(&mut p)?;
    check_regexes(&p)?;

    if p.nhandlers != 0 {
        let mut st: Vec<St> = Vec::new();
        if alloc_fails() || st.try_reserve_exact(p.ninsns as usize).is_err() {
            bail!(
                STP_VERR_NO_MEMORY,
                0,
                "no memory for {} instructions of state",
                p.ninsns
            );
        }
        st.resize(p.ninsns as usize, St::default());
        for i in 0..p.nhandlers {
            check_handler_code(&p, i, &mut st)?;
        }
    }
    // Iterators: 1 + the largest one named per level; one level for the
    // probe handler and, when a function uses one, one per function frame
    // (MAXNESTING). Each CPU's within a cap.
    let mut func_iters = false;
    let mut iter_frame = 0u32;
    for i in 0..p.nhandlers {
        let h = p.handler(i);
        for j in 0..h.insn_count {
            let insn = p.insn(h.insn_off + j);
            let it = imm_x(insn.imm);
            if !OPCODES
                .get(insn.op as usize)
                .is_some_and(|o| o.imm == Operand::MIT)
            {
                continue;
            }
            iter_frame = iter_frame.max(it + 1);
            if u32::from(h.ctx) == STP_CTX_FUNCTION {
                func_iters = true;
            }
        }
    }
    p.niters = iter_frame;
    if func_iters {
        p.niters = p
            .niters
            .wrapping_mul(1 + p.limits[STP_LIM_MAXNESTING as usize]);
    }
    if iters_size(p.niters, p.iter_cap) > u64::from(STP_MAX_ITER_BYTES) {
        bail!(
            STP_VERR_TOO_MANY,
            0,
            "{} iterators over maps of {} entries take more than {STP_MAX_ITER_BYTES} bytes per CPU",
            p.niters,
            p.iter_cap
        );
    }
    Ok(crate::core::verified_info!(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_oversized_buffers_are_refused() {
        let e = verify_image(&[0u8; 16]).unwrap_err();
        assert_eq!(e.code, STP_VERR_TRUNCATED);
        assert_eq!(
            e.message,
            format!("image of 16 bytes, the header alone takes {HDR_SIZE}")
        );
        let big = vec![0u8; STP_MAX_IMAGE_SIZE as usize + 8];
        assert_eq!(verify_image(&big).unwrap_err().name, "TOO_BIG");
    }
}
