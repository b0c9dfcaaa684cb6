//! The reference interpreter: a second, independent implementation of the
//! stapvm ISA in safe Rust, written from the ISA tables and their comments
//! (`include/stapvm/opcodes.h`, `helpers.h`, `abi.h`) and used as the oracle
//! of the differential tests against the C core (kmod/core/vm.c through
//! vm-testkit's `HostSession`). It runs images the caller has verified
//! (the test kit verifies with the C verifier first); decoding them checks
//! every bound itself, so a malformed image is an error, never a panic.
//!
//! It is meant to be obviously right rather than fast: every register,
//! table and jump access is checked, and what the verifier should have made
//! impossible (a register read before it is written, an index out of range,
//! a jump outside the handler) ends the run with [`Outcome::VerifierHole`]
//! instead of a panic or a made-up value. A C/Rust difference on such a
//! program therefore points at the verifier, not at either interpreter.
//!
//! Semantics it reproduces (each one a comment of opcodes.h/helpers.h):
//! registers and strings of the handler's two files, strings cut at
//! MAXSTRINGLEN - 1 bytes (the NUL counts); MAXACTION fuel per run, charged by LOOP only; DIV/MOD
//! errors on a zero divisor, `INT64_MIN / -1` wraps and `x % -1 == 0`;
//! SCMP compares unsigned bytes, then lengths; the helpers read the same
//! [`HostEnv`] as the C core's user-space environment (memory is
//! page-granular, strings are copied one page-bounded chunk at a time, a
//! fault reports the chunk's address); globals wrap on GADD; PRINTF, ERROR
//! and EXIT records are byte-identical to the C core's, including the
//! time stamps of the deterministic host clock (starts at 1, +1 per read);
//! a record that does not fit the ring is dropped and counted. User
//! functions: FCALL* charge one unit of fuel (shared by all frames), then
//! push a frame (MAXNESTING when that many are active) whose files hold
//! only the parameters; RET/RETI/RETS pop it and write the caller's result
//! register; an error inside a function names the function's handler.
//! Strings: SPRINTF through this crate's own printf ([`crate::fmt`], not
//! the C formatter), SSUB, SFIND, STOL, SREPL, STEXT, STEXTN, STOK, SCHAR
//! and ERROR
//! (whose record carries the message) as opcodes.h describes them.
//!
//! Dispatch matches on the `abi::STP_OP_*` and `abi::STP_HLP_*` constants,
//! so no opcode or helper number is written here.
//!
//! Statistics: per-CPU copies ([`RefSession::set_cpus`]) updated as stap's
//! `__stp_stat_add` (Welford with a 32-bit delta), merged over CPUs for
//! the extractors, EMPTY_AGG / HIST_INDEX, STP_REC_HIST records.
//! Associative arrays: a model keyed by the key tuple with insertion
//! numbers (seq) that give insertion order, wrap eviction of the oldest,
//! ARRAY_OVERFLOW / ARRAY_SIZE, MOPR, foreach iterators sorted by any
//! column with ties in insertion order, entries deleted since MITER passed
//! over. A map lock never fails here (no run ends skipped).
//! Statistics arrays: each entry's per-CPU copies kept by insertion
//! number, MSTADD / MSTX / MSTHIST, MITER's extractor orders (@sum, @min,
//! @max, @avg), @variance of a one-CPU entry unmerged (stap's pmap).
//!
//! Opcodes it does not know end the run with BADOP, so a program using
//! them differs from the C core.
//!
//! Left out: concurrency (GADD is a plain wrapping add), the kernel's
//! nesting guard, MAXERRORS and probe arming (the caller decides which
//! handler runs when).
use crate::env::HostEnv;
use std::collections::BTreeMap;
use std::mem::{offset_of, size_of};
use thiserror::Error;
use vm_spec::abi;
use vm_spec::maps::{MapEntry, Val};
use vm_spec::program::{Insn, Program};

/// Page size of the simulated address space (`STP_ENV_PAGE_SIZE` of the
/// user-space environment, vm-spec/csrc/stp_env.h): memory is mapped in
/// whole pages and string copies never cross one in a single read.
pub const PAGE_SIZE: u64 = 4096;

/// Why a [`RefProgram`] or a run could not be set up.
#[derive(Debug, Error)]
pub enum RefError {
    /// The program could not be laid out as an image.
    #[error(transparent)]
    Image(#[from] vm_spec::image::ImageError),
    /// The image is malformed although it verified (a verifier bug).
    #[error("image does not decode: {0}")]
    BadImage(&'static str),
    /// No handler with this index.
    #[error("no handler {0}")]
    NoHandler(u32),
    /// The handler is a user function: only FCALL* enter it.
    #[error("handler {0} is a function, not a probe handler")]
    Function(u32),
}

/// One handler of a decoded image.
#[derive(Debug, Clone)]
struct RefHandler {
    code: Vec<Insn>,
    nregs: u32,
    nsregs: u32,
    /// `abi::STP_CTX_*`.
    ctx: u32,
    /// Function parameters (integer, string) and result kind.
    nparams: u32,
    nsparams: u32,
    ret: u32,
}

/// One printf format as the kernel sees it (`struct stp_format_desc`).
#[derive(Debug, Clone, Copy)]
struct RefFormat {
    nargs: u32,
    str_mask: u32,
    /// String id of the text (SPRINTF), or `STP_FMT_NO_TEXT`.
    text: u32,
}

/// A verified image, decoded into owned tables.
#[derive(Debug, Clone)]
pub struct RefProgram {
    handlers: Vec<RefHandler>,
    konsts: Vec<i64>,
    strings: Vec<Vec<u8>>,
    formats: Vec<RefFormat>,
    nglobals: u32,
    limits: Vec<u32>,
    stats: Vec<RefStat>,
    maps: Vec<RefMapDesc>,
    regexes: Vec<RefRegex>,
}

/// One regular expression's DFA (`struct stp_regex_desc` and its rows of
/// REGEXDATA), as opcodes.h describes REMATCH's walk.
#[derive(Debug, Clone)]
struct RefRegex {
    nclasses: usize,
    start: usize,
    classes: Vec<u8>,
    /// The rows, `nstates * nclasses` entries.
    trans: Vec<u16>,
}

impl RefRegex {
    /// REMATCH: 1 when the walk over `s` ends in state 1; an index the
    /// verifier should have refused is a hole.
    fn matches(&self, s: &[u8]) -> Result<u64, String> {
        let n = self.nclasses;
        let step = |st: usize, col: usize| -> Result<usize, String> {
            if col >= n {
                return Err(format!("class {col} of {n} columns"));
            }
            self.trans
                .get(st * n + col)
                .map(|&x| usize::from(x))
                .ok_or_else(|| format!("state {st} outside the table"))
        };
        let mut st = self.start;
        for &b in s {
            if st < 2 {
                break;
            }
            st = step(st, usize::from(self.classes[usize::from(b)]))?;
        }
        if st >= 2 {
            st = step(st, n - 1)?;
        }
        Ok(u64::from(st == 1))
    }
}

fn le_u16(b: &[u8], off: usize) -> Result<u16, RefError> {
    b.get(off..off + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or(RefError::BadImage("field past the end"))
}

fn le_u32(b: &[u8], off: usize) -> Result<u32, RefError> {
    b.get(off..off + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or(RefError::BadImage("field past the end"))
}

fn le_u64(b: &[u8], off: usize) -> Result<u64, RefError> {
    let s = b
        .get(off..off + 8)
        .ok_or(RefError::BadImage("field past the end"))?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Ok(u64::from_le_bytes(a))
}

/// The bytes of section `sec` and its entry count for entries of `esize`.
fn section(img: &[u8], sec: u32, esize: usize) -> Result<(&[u8], usize), RefError> {
    let d = offset_of!(abi::stp_image_hdr, sec) + sec as usize * size_of::<abi::stp_section_desc>();
    let off = le_u32(img, d + offset_of!(abi::stp_section_desc, off))? as usize;
    let size = le_u32(img, d + offset_of!(abi::stp_section_desc, size))? as usize;
    let bytes = off
        .checked_add(size)
        .and_then(|end| img.get(off..end))
        .ok_or(RefError::BadImage("section outside the image"))?;
    if !size.is_multiple_of(esize) {
        return Err(RefError::BadImage("section not a whole number of entries"));
    }
    Ok((bytes, size / esize))
}

impl RefProgram {
    /// Decodes the tables of `image`, which the caller has verified (the
    /// reference VM does not verify; what a verifier should have refused
    /// ends a run with [`Outcome::VerifierHole`]).
    pub fn from_image(image: &[u8]) -> Result<Self, RefError> {
        Self::decode(image)
    }

    /// Builds the stand-in image of `prog` (`vm_spec::image::build_stand_in`,
    /// as the test kit's `HostSession::from_program` does), then
    /// [`RefProgram::from_image`].
    pub fn from_program(prog: &Program) -> Result<Self, RefError> {
        Self::from_image(&vm_spec::image::build_stand_in(
            prog,
            vm_spec::image::StandIns::Named,
        )?)
    }

    /// Decodes an image's tables without verifying it (every read is
    /// bounds-checked; a malformed image is an error, never a panic).
    fn decode(img: &[u8]) -> Result<Self, RefError> {
        let nglobals = le_u32(img, offset_of!(abi::stp_image_hdr, nglobals))?;
        let lim = offset_of!(abi::stp_image_hdr, limits);
        let limits = (0..abi::STP_LIM__COUNT as usize)
            .map(|i| le_u32(img, lim + 4 * i))
            .collect::<Result<Vec<u32>, _>>()?;

        let isz = size_of::<abi::stp_insn>();
        let (code, ninsns) = section(img, abi::STP_SEC_CODE, isz)?;
        let insns: Vec<Insn> = (0..ninsns)
            .map(|k| {
                let e = &code[k * isz..(k + 1) * isz];
                Insn {
                    op: e[offset_of!(abi::stp_insn, op)],
                    a: e[offset_of!(abi::stp_insn, a)],
                    b: e[offset_of!(abi::stp_insn, b)],
                    c: e[offset_of!(abi::stp_insn, c)],
                    imm: le_u32(e, offset_of!(abi::stp_insn, imm)).map_or(0, |v| v as i32),
                }
            })
            .collect();

        let hsz = size_of::<abi::stp_handler_desc>();
        let (hbytes, nh) = section(img, abi::STP_SEC_HANDLERS, hsz)?;
        let mut handlers = Vec::with_capacity(nh);
        for k in 0..nh {
            let e = &hbytes[k * hsz..(k + 1) * hsz];
            let off = le_u32(e, offset_of!(abi::stp_handler_desc, insn_off))? as usize;
            let cnt = le_u32(e, offset_of!(abi::stp_handler_desc, insn_count))? as usize;
            let code = off
                .checked_add(cnt)
                .and_then(|end| insns.get(off..end))
                .ok_or(RefError::BadImage("handler outside CODE"))?;
            handlers.push(RefHandler {
                code: code.to_vec(),
                nregs: u32::from(e[offset_of!(abi::stp_handler_desc, nregs)]),
                nsregs: u32::from(e[offset_of!(abi::stp_handler_desc, nsregs)]),
                ctx: u32::from(e[offset_of!(abi::stp_handler_desc, ctx)]),
                nparams: u32::from(e[offset_of!(abi::stp_handler_desc, nparams)]),
                nsparams: u32::from(e[offset_of!(abi::stp_handler_desc, nsparams)]),
                ret: u32::from(e[offset_of!(abi::stp_handler_desc, ret)]),
            });
        }

        let (kbytes, nk) = section(img, abi::STP_SEC_KONSTS, 8)?;
        let konsts = (0..nk)
            .map(|k| le_u64(kbytes, 8 * k).map(|v| v as i64))
            .collect::<Result<Vec<i64>, _>>()?;

        let ssz = size_of::<abi::stp_str_desc>();
        let (sbytes, ns) = section(img, abi::STP_SEC_STRS, ssz)?;
        let (data, _) = section(img, abi::STP_SEC_STRDATA, 1)?;
        let mut strings = Vec::with_capacity(ns);
        for k in 0..ns {
            let e = &sbytes[k * ssz..(k + 1) * ssz];
            let off = le_u32(e, offset_of!(abi::stp_str_desc, off))? as usize;
            let len = le_u32(e, offset_of!(abi::stp_str_desc, len))? as usize;
            let s = off
                .checked_add(len)
                .and_then(|end| data.get(off..end))
                .ok_or(RefError::BadImage("string outside STRDATA"))?;
            strings.push(s.to_vec());
        }

        let fsz = size_of::<abi::stp_format_desc>();
        let (fbytes, nf) = section(img, abi::STP_SEC_FORMATS, fsz)?;
        let mut formats = Vec::with_capacity(nf);
        for k in 0..nf {
            let e = &fbytes[k * fsz..(k + 1) * fsz];
            formats.push(RefFormat {
                nargs: le_u32(e, offset_of!(abi::stp_format_desc, nargs))?,
                str_mask: le_u32(e, offset_of!(abi::stp_format_desc, str_mask))?,
                text: le_u32(e, offset_of!(abi::stp_format_desc, text))?,
            });
        }
        let tsz = size_of::<abi::stp_stat_desc>();
        let (tbytes, nt) = section(img, abi::STP_SEC_STATS, tsz)?;
        let mut stats = Vec::with_capacity(nt);
        for k in 0..nt {
            let e = &tbytes[k * tsz..(k + 1) * tsz];
            stats.push(RefStat {
                hist: u32::from(e[offset_of!(abi::stp_stat_desc, hist)]),
                shift: u32::from(e[offset_of!(abi::stp_stat_desc, shift)]),
                variance: u32::from(e[offset_of!(abi::stp_stat_desc, flags)])
                    & abi::STP_STAT_F_VARIANCE
                    != 0,
                nbuckets: le_u32(e, offset_of!(abi::stp_stat_desc, nbuckets))?,
                start: le_u32(e, offset_of!(abi::stp_stat_desc, start))? as i32,
                stop: le_u32(e, offset_of!(abi::stp_stat_desc, stop))? as i32,
                interval: le_u32(e, offset_of!(abi::stp_stat_desc, interval))? as i32,
            });
        }
        let msz = size_of::<abi::stp_map_desc>();
        let (mbytes, nm) = section(img, abi::STP_SEC_MAPS, msz)?;
        let mut maps = Vec::with_capacity(nm);
        for k in 0..nm {
            let e = &mbytes[k * msz..(k + 1) * msz];
            let flags = u32::from(e[offset_of!(abi::stp_map_desc, flags)]);
            maps.push(RefMapDesc {
                nkeys: u32::from(e[offset_of!(abi::stp_map_desc, nkeys)]),
                str_mask: u32::from(le_u16(e, offset_of!(abi::stp_map_desc, key_str_mask))?),
                value_str: u32::from(e[offset_of!(abi::stp_map_desc, value)]) == abi::STP_MAPV_STR,
                wrap: flags & abi::STP_MAP_F_WRAP != 0,
                sized: flags & abi::STP_MAP_F_SIZED != 0,
                capacity: le_u32(e, offset_of!(abi::stp_map_desc, capacity))?,
                stat: (u32::from(e[offset_of!(abi::stp_map_desc, value)]) == abi::STP_MAPV_STAT)
                    .then(|| le_u32(e, offset_of!(abi::stp_map_desc, stat)))
                    .transpose()?
                    .map(|k| k as usize),
            });
        }
        let rsz = size_of::<abi::stp_regex_desc>();
        let (rbytes, nr) = section(img, abi::STP_SEC_REGEXES, rsz)?;
        let (rdata, _) = section(img, abi::STP_SEC_REGEXDATA, 2)?;
        let mut regexes = Vec::with_capacity(nr);
        for k in 0..nr {
            let e = &rbytes[k * rsz..(k + 1) * rsz];
            let nstates = le_u32(e, offset_of!(abi::stp_regex_desc, nstates))? as usize;
            let nclasses = le_u32(e, offset_of!(abi::stp_regex_desc, nclasses))? as usize;
            let at = le_u32(e, offset_of!(abi::stp_regex_desc, trans))? as usize;
            let co = offset_of!(abi::stp_regex_desc, classes);
            let trans = nstates
                .checked_mul(nclasses)
                .and_then(|cells| Some((at.checked_mul(2)?, cells.checked_mul(2)?)))
                .and_then(|(lo, len)| rdata.get(lo..lo.checked_add(len)?))
                .ok_or(RefError::BadImage("regex table outside REGEXDATA"))?
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            regexes.push(RefRegex {
                nclasses,
                start: le_u32(e, offset_of!(abi::stp_regex_desc, start))? as usize,
                classes: e
                    .get(co..co + 256)
                    .ok_or(RefError::BadImage("regex classes past the end"))?
                    .to_vec(),
                trans,
            });
        }
        let _ = le_u16(img, offset_of!(abi::stp_image_hdr, version))?;
        Ok(RefProgram {
            regexes,
            stats,
            maps,
            handlers,
            konsts,
            strings,
            formats,
            nglobals,
            limits,
        })
    }

    /// Handlers in the program.
    pub fn handler_count(&self) -> u32 {
        self.handlers.len() as u32
    }

    /// Global scalars of the program.
    pub fn nglobals(&self) -> u32 {
        self.nglobals
    }

    fn limit(&self, l: u32) -> u32 {
        self.limits.get(l as usize).copied().unwrap_or(0)
    }
}

// ---------------------------------------------------------------------
// Memory and ring

/// The readable memory of a [`HostEnv`]: every page touched by one of its
/// ranges is mapped (zero where no range gives bytes; later ranges win).
#[derive(Debug, Default)]
struct Memory {
    pages: BTreeMap<u64, Vec<u8>>,
}

impl Memory {
    fn new(ranges: &[(u64, Vec<u8>)]) -> Self {
        let mut pages: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        for (start, bytes) in ranges {
            let mut k = 0usize;
            while k < bytes.len() {
                // Bytes past the top of the address space do not exist.
                let Some(a) = start.checked_add(k as u64) else {
                    break;
                };
                let off = (a % PAGE_SIZE) as usize;
                let take = (PAGE_SIZE as usize - off).min(bytes.len() - k);
                pages
                    .entry(a / PAGE_SIZE)
                    .or_insert_with(|| vec![0; PAGE_SIZE as usize])[off..off + take]
                    .copy_from_slice(&bytes[k..k + take]);
                k += take;
            }
        }
        Memory { pages }
    }

    /// `n` bytes at `addr`, or `None` if one of them is unmapped (a range
    /// that would run past the top of the address space faults).
    fn read(&self, addr: u64, n: u64) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(n as usize);
        if n == 0 {
            return Some(out);
        }
        // The last byte, inclusive: a read may end exactly at 2^64.
        let last = addr.checked_add(n - 1)?;
        let mut a = addr;
        loop {
            let page = self.pages.get(&(a / PAGE_SIZE))?;
            let from = a % PAGE_SIZE;
            let take = (PAGE_SIZE - from).min(last - a + 1);
            out.extend_from_slice(&page[from as usize..(from + take) as usize]);
            match a.checked_add(take) {
                Some(next) if next <= last => a = next,
                _ => return Some(out),
            }
        }
    }
}

/// A ring of `size` data bytes with the producer rules of abi.h: a record
/// is dropped (and counted) when it does not fit between the consumer and
/// `size` bytes ahead of it.
#[derive(Debug)]
struct Ring {
    size: u64,
    prod: u64,
    cons: u64,
    dropped: u64,
    records: Vec<Vec<u8>>,
}

impl Ring {
    fn reserve(&mut self, len: u64) -> bool {
        let used = self.prod - self.cons;
        if len == 0 || !len.is_multiple_of(8) || len > self.size || used + len > self.size {
            self.dropped += 1;
            return false;
        }
        true
    }

    fn commit(&mut self, rec: Vec<u8>) {
        self.prod += rec.len() as u64;
        self.records.push(rec);
    }

    fn drain(&mut self) -> Vec<Vec<u8>> {
        self.cons = self.prod;
        std::mem::take(&mut self.records)
    }
}

// ---------------------------------------------------------------------
// Runs

/// How one run of a handler ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// RET.
    Ret,
    /// A run-time error (`abi::STP_RTE_*`) at instruction `pc` of handler
    /// `handler` (the function's, for an error inside a function), with the
    /// faulting address (0 when there is none; for `STP_RTE_USER` the
    /// message length).
    Error {
        /// `abi::STP_RTE_*`.
        code: u32,
        /// Handler (maybe a function) of the failing instruction.
        handler: u32,
        /// Instruction index inside the handler.
        pc: u32,
        /// Faulting address, if any.
        addr: u64,
    },
    /// Something the verifier promised could not happen did (a register
    /// read before it is written, an index or jump out of range). The C
    /// core would read stale or foreign data here.
    VerifierHole {
        /// Handler (maybe a function) of the instruction.
        handler: u32,
        /// Instruction index inside the handler.
        pc: u32,
        /// What went wrong.
        what: String,
    },
}

/// What one run reports besides its records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunReport {
    /// How the handler ended.
    pub outcome: Outcome,
    /// MAXACTION units left when it ended.
    pub fuel_left: u64,
    /// Whether this run executed EXIT.
    pub exit_requested: bool,
    /// Instructions executed.
    pub steps: u64,
    /// The handler's integer registers when the run ended (its own files,
    /// not a function's): `None` for one this run did not write.
    pub r: Vec<Option<u64>>,
    /// The handler's string registers when the run ended, likewise.
    pub s: Vec<Option<Vec<u8>>>,
}

/// Why execution stopped early, inside [`Machine::step`].
enum Stop {
    Fault(u32, u64),
    /// ERROR: `STP_RTE_USER` with its message.
    User(Vec<u8>),
    Hole(String),
}

/// What a call saved of its caller: the caller's handler, where it goes
/// on, its register files, and the call (opcode, result register).
struct Frame {
    handler: u32,
    ret_pc: usize,
    r: [u64; abi::STP_MAX_REGS as usize],
    r_set: u64,
    s: Vec<Vec<u8>>,
    s_set: u32,
    op: u32,
    dst: u8,
    /// The caller's armed catch (TRY): target pc and message register.
    catch: Option<(usize, u8)>,
}

type Step<T> = Result<T, Stop>;

/// The message a catch receives (opcodes.h, TRY): stap's text of `code`
/// with `%llx` / `%llu` replaced by `addr`, or error(msg)'s text; at most
/// `cap` bytes.
fn catch_message(code: u32, addr: u64, msg: &[u8], cap: u32) -> Vec<u8> {
    let mut v = if code == abi::STP_RTE_USER {
        msg.to_vec()
    } else {
        vm_spec::tables::RUNTIME_ERRORS
            .get(code as usize)
            .map_or("", |e| e.msg)
            .replace("%llx", &format!("{addr:x}"))
            .replace("%llu", &format!("{addr}"))
            .into_bytes()
    };
    v.truncate(cap as usize);
    v
}

/// The registers of one run. They start unwritten: the verifier promises
/// that nothing is read before it is written, and this checks it.
struct Machine<'a> {
    prog: &'a RefProgram,
    h: &'a RefHandler,
    env: &'a HostEnv,
    mem: &'a Memory,
    globals: &'a mut [i64],
    ring: &'a mut Ring,
    clock: &'a mut u64,
    handler: u32,
    /// The longest string: MAXSTRINGLEN - 1 bytes.
    cap: u32,
    r: [u64; abi::STP_MAX_REGS as usize],
    r_set: u64,
    s: Vec<Vec<u8>>,
    s_set: u32,
    exit: bool,
    /// This frame's armed catch (TRY): target pc and message register.
    catch: Option<(usize, u8)>,
    /// The callers of the current function, innermost last.
    frames: Vec<Frame>,
    /// Function frames a run may have active (MAXNESTING when the program
    /// has functions, as the caller of `stp_run` gives that many).
    maxdepth: usize,
    /// Statistics, maps and iterators of the session.
    aggs: &'a mut Aggs,
    /// The statistics copy of this run's CPU (`None`: the CPU id is not
    /// below the simulated CPUs).
    cpu: Option<usize>,
}

impl Machine<'_> {
    fn rd(&self, i: u8) -> Step<u64> {
        let i = u32::from(i);
        if i >= self.h.nregs {
            return Err(Stop::Hole(format!(
                "r{i} outside {} registers",
                self.h.nregs
            )));
        }
        if self.r_set & (1u64 << i) == 0 {
            return Err(Stop::Hole(format!("r{i} read before it is written")));
        }
        Ok(self.r[i as usize])
    }

    fn wr(&mut self, i: u8, v: u64) -> Step<()> {
        let i = u32::from(i);
        if i >= self.h.nregs {
            return Err(Stop::Hole(format!(
                "r{i} outside {} registers",
                self.h.nregs
            )));
        }
        self.r[i as usize] = v;
        self.r_set |= 1u64 << i;
        Ok(())
    }

    fn srd(&self, i: u8) -> Step<&[u8]> {
        let i = u32::from(i);
        if i >= self.h.nsregs {
            return Err(Stop::Hole(format!(
                "s{i} outside {} registers",
                self.h.nsregs
            )));
        }
        if self.s_set & (1u32 << i) == 0 {
            return Err(Stop::Hole(format!("s{i} read before it is written")));
        }
        Ok(&self.s[i as usize])
    }

    /// s[i] := v cut at MAXSTRINGLEN - 1 bytes (the NUL counts).
    fn swr(&mut self, i: u8, mut v: Vec<u8>) -> Step<()> {
        let i = u32::from(i);
        if i >= self.h.nsregs {
            return Err(Stop::Hole(format!(
                "s{i} outside {} registers",
                self.h.nsregs
            )));
        }
        v.truncate(self.cap as usize);
        self.s[i as usize] = v;
        self.s_set |= 1u32 << i;
        Ok(())
    }

    fn global(&mut self, imm: i32) -> Step<&mut i64> {
        let n = self.globals.len();
        usize::try_from(imm)
            .ok()
            .and_then(|k| self.globals.get_mut(k))
            .ok_or_else(|| Stop::Hole(format!("global {imm} of {n}")))
    }

    /// The record clock: read, then advanced by one (csrc/stp_env.h).
    fn tick(&mut self) -> u64 {
        let t = *self.clock;
        *self.clock = t.wrapping_add(1);
        t
    }

    /// Writes one record (header + payload) if the ring has room; the
    /// clock is read only for a record that is written.
    fn emit(&mut self, ty: u32, id: u16, payload: &[u8]) {
        let len = size_of::<abi::stp_rec_hdr>() + payload.len();
        if !self.ring.reserve(len as u64) {
            return;
        }
        let t = self.tick();
        let mut rec = Vec::with_capacity(len);
        rec.extend_from_slice(&(len as u32).to_le_bytes());
        rec.extend_from_slice(&(ty as u16).to_le_bytes());
        rec.extend_from_slice(&id.to_le_bytes());
        rec.extend_from_slice(&t.to_le_bytes());
        rec.extend_from_slice(payload);
        self.ring.commit(rec);
    }

    /// Ends the run with error `code` at `pc` of the current handler (a
    /// function's, inside one): writes the STP_REC_ERROR record, whose
    /// payload is `struct stp_rec_error` and, for ERROR, the message
    /// zero-padded to 8 (its length in `addr`).
    fn fail(&mut self, pc: usize, code: u32, addr: u64, msg: &[u8]) -> Outcome {
        let mut payload = Vec::with_capacity(size_of::<abi::stp_rec_error>() + msg.len() + 7);
        payload.extend_from_slice(&self.handler.to_le_bytes());
        payload.extend_from_slice(&(pc as u32).to_le_bytes());
        payload.extend_from_slice(&addr.to_le_bytes());
        payload.extend_from_slice(msg);
        while !payload.len().is_multiple_of(8) {
            payload.push(0);
        }
        self.emit(abi::STP_REC_ERROR, code as u16, &payload);
        Outcome::Error {
            code,
            handler: self.handler,
            pc: pc as u32,
            addr,
        }
    }

    /// A NUL-terminated string at `addr`, at most MAXSTRINGLEN - 1 bytes, read
    /// one page-bounded chunk at a time (helpers.h: nofault copies); a
    /// fault reports the address of the chunk that failed.
    fn copy_string(&self, addr: u64) -> Result<Vec<u8>, u64> {
        let cap = u64::from(self.cap);
        let mut out = Vec::new();
        while (out.len() as u64) < cap {
            let a = addr.wrapping_add(out.len() as u64);
            let chunk = (PAGE_SIZE - a % PAGE_SIZE).min(cap - out.len() as u64);
            let bytes = self.mem.read(a, chunk).ok_or(a)?;
            if let Some(nul) = bytes.iter().position(|&b| b == 0) {
                out.extend_from_slice(&bytes[..nul]);
                return Ok(out);
            }
            out.extend_from_slice(&bytes);
        }
        Ok(out)
    }

    fn call_int(&mut self, insn: &Insn) -> Step<u64> {
        let e = self.env;
        let Ok(id) = u32::try_from(insn.imm) else {
            return Err(Stop::Hole(format!("helper {}", insn.imm)));
        };
        Ok(match id {
            abi::STP_HLP_PID => e.pid as u64,
            abi::STP_HLP_TID => e.tid as u64,
            abi::STP_HLP_PPID => e.ppid as u64,
            abi::STP_HLP_UID => e.uid as u64,
            abi::STP_HLP_EUID => e.euid as u64,
            abi::STP_HLP_GID => e.gid as u64,
            abi::STP_HLP_CPU => e.cpu as u64,
            abi::STP_HLP_GETTIMEOFDAY_NS => e.wall_ns,
            abi::STP_HLP_LOCAL_CLOCK_NS => self.tick(),
            abi::STP_HLP_JIFFIES => e.jiffies as u64,
            abi::STP_HLP_RETVAL => e.retval as u64,
            abi::STP_HLP_ADDR => e.ip,
            abi::STP_HLP_USER_MODE => u64::from(e.user_mode),
            abi::STP_HLP_USER_STRING_OK => {
                let addr = self.rd(insn.b)?;
                u64::from(self.copy_string(addr).is_ok())
            }
            abi::STP_HLP_MM_ARG => {
                // No mm in the user-space environment (helpers.h).
                self.rd(insn.b)?;
                0
            }
            abi::STP_HLP_ARG => {
                let n = self.rd(insn.b)?;
                usize::try_from(n)
                    .ok()
                    .and_then(|k| e.args.get(k))
                    .map_or(0, |v| *v as u64)
            }
            abi::STP_HLP_KERNEL_LONG
            | abi::STP_HLP_KERNEL_INT
            | abi::STP_HLP_KERNEL_SHORT
            | abi::STP_HLP_KERNEL_CHAR => {
                let bytes: u64 = match id {
                    abi::STP_HLP_KERNEL_INT => 4,
                    abi::STP_HLP_KERNEL_SHORT => 2,
                    abi::STP_HLP_KERNEL_CHAR => 1,
                    _ => 8,
                };
                let addr = self.rd(insn.b)?;
                let b = self
                    .mem
                    .read(addr, bytes)
                    .ok_or(Stop::Fault(abi::STP_RTE_KFAULT, addr))?;
                // Little-endian, sign-extended from `bytes` bytes.
                let mut a = [0u8; 8];
                a[..b.len()].copy_from_slice(&b);
                let shift = 64 - 8 * bytes;
                ((u64::from_le_bytes(a) << shift) as i64 >> shift) as u64
            }
            abi::STP_HLP_TASK_CURRENT => e.task,
            abi::STP_HLP_EGID => e.egid as u64,
            abi::STP_HLP_HZ => e.hz as u64,
            abi::STP_HLP_GET_CYCLES => e.cycles,
            abi::STP_HLP_CPU_ONLINE => {
                // helpers.h: the environment's cpu, or a bit of its mask.
                let c = self.rd(insn.b)? as i64;
                let bit = (0..64).contains(&c) && (e.online_mask >> c) & 1 == 1;
                u64::from(c == e.cpu || bit)
            }
            abi::STP_HLP_RANDOM => {
                // helpers.h: x % n (unsigned), 0 for n == 0.
                let n = self.rd(insn.b)?;
                u64::from(e.random).checked_rem(n).unwrap_or(0)
            }
            abi::STP_HLP_USER_LONG
            | abi::STP_HLP_USER_INT
            | abi::STP_HLP_USER_SHORT
            | abi::STP_HLP_USER_CHAR => {
                let bytes: u64 = match id {
                    abi::STP_HLP_USER_INT => 4,
                    abi::STP_HLP_USER_SHORT => 2,
                    abi::STP_HLP_USER_CHAR => 1,
                    _ => 8,
                };
                let addr = self.rd(insn.b)?;
                // helpers.h: 0 on a fault, else sign-extended little-endian.
                match self.mem.read(addr, bytes) {
                    None => 0,
                    Some(b) => {
                        let mut a = [0u8; 8];
                        a[..b.len()].copy_from_slice(&b);
                        let shift = 64 - 8 * bytes;
                        ((u64::from_le_bytes(a) << shift) as i64 >> shift) as u64
                    }
                }
            }
            abi::STP_HLP_REGISTER => {
                // The user-space environment's registers (csrc/stp_env.h):
                // pt_regs word index -> the value it holds there.
                match self.rd(insn.b)? {
                    8 => e.args[5] as u64,
                    9 => e.args[4] as u64,
                    10 => e.retval as u64,
                    11 => e.args[3] as u64,
                    12 => e.args[2] as u64,
                    13 => e.args[1] as u64,
                    14 => e.args[0] as u64,
                    16 => e.ip,
                    _ => 0,
                }
            }
            abi::STP_HLP_UADDR => {
                if e.user_mode {
                    e.ip
                } else {
                    0
                }
            }
            abi::STP_HLP_IS_RETURN => {
                // The probe handler's context, also inside a function.
                let outer = self.frames.first().map_or(self.handler, |f| f.handler);
                let ctx = self.prog.handlers.get(outer as usize).map(|h| h.ctx);
                u64::from(ctx == Some(abi::STP_CTX_KRETPROBE))
            }
            abi::STP_HLP_PID2TASK => {
                let nr = self.rd(insn.b)? as i64;
                if nr > 0 && nr == e.tid {
                    e.task
                } else {
                    0
                }
            }
            id if id < abi::STP_HLP__COUNT => {
                // A string helper through CALLI: the C core stops with BADOP.
                return Err(Stop::Fault(abi::STP_RTE_BADOP, 0));
            }
            _ => return Err(Stop::Hole(format!("helper {id}"))),
        })
    }

    fn call_str(&mut self, insn: &Insn) -> Step<Vec<u8>> {
        let Ok(id) = u32::try_from(insn.imm) else {
            return Err(Stop::Hole(format!("helper {}", insn.imm)));
        };
        match id {
            abi::STP_HLP_EXECNAME => {
                let mut v = self.env.execname.as_bytes().to_vec();
                v.truncate(self.cap as usize);
                if let Some(nul) = v.iter().position(|&b| b == 0) {
                    v.truncate(nul);
                }
                Ok(v)
            }
            abi::STP_HLP_PEXECNAME => {
                let mut v = self.env.pexecname.as_bytes().to_vec();
                v.truncate(self.cap as usize);
                if let Some(nul) = v.iter().position(|&b| b == 0) {
                    v.truncate(nul);
                }
                Ok(v)
            }
            abi::STP_HLP_SYMNAME | abi::STP_HLP_SYMDATA => {
                // No symbols in user space: the hex form (helpers.h).
                let mut v = format!("{:#x}", self.rd(insn.b)?).into_bytes();
                v.truncate(self.cap as usize);
                Ok(v)
            }
            abi::STP_HLP_BACKTRACE => {
                // Whole frames only, at most STP_MAX_BACKTRACE (helpers.h).
                let mut v = Vec::new();
                for f in self.env.stack.iter().take(abi::STP_MAX_BACKTRACE as usize) {
                    let one = format!("{}{f:#x}", if v.is_empty() { "" } else { " " });
                    if v.len() + one.len() > self.cap as usize {
                        break;
                    }
                    v.extend_from_slice(one.as_bytes());
                }
                Ok(v)
            }
            abi::STP_HLP_KERNEL_STRING | abi::STP_HLP_USER_STRING => {
                let addr = self.rd(insn.b)?;
                let code = if id == abi::STP_HLP_USER_STRING {
                    abi::STP_RTE_USTRFAULT
                } else {
                    abi::STP_RTE_KSTRFAULT
                };
                self.copy_string(addr).map_err(|a| Stop::Fault(code, a))
            }
            abi::STP_HLP_MODNAME => {
                // No symbols in user space: never known (helpers.h).
                self.rd(insn.b)?;
                Ok(Vec::new())
            }
            id if id < abi::STP_HLP__COUNT => Err(Stop::Fault(abi::STP_RTE_BADOP, 0)),
            _ => Err(Stop::Hole(format!("helper {id}"))),
        }
    }

    fn printf(&mut self, insn: &Insn) -> Step<()> {
        let f = usize::try_from(insn.imm)
            .ok()
            .and_then(|k| self.prog.formats.get(k))
            .copied()
            .ok_or_else(|| Stop::Hole(format!("format {}", insn.imm)))?;
        if f.nargs > abi::STP_MAX_FMT_ARGS {
            return Err(Stop::Hole(format!("format with {} arguments", f.nargs)));
        }
        let mut payload = Vec::new();
        let (mut ri, mut si) = (u32::from(insn.b), u32::from(insn.c));
        for k in 0..f.nargs {
            if f.str_mask & (1 << k) != 0 {
                let s = self.srd(u8::try_from(si).unwrap_or(u8::MAX))?;
                payload.extend_from_slice(&(s.len() as u32).to_le_bytes());
                payload.extend_from_slice(s);
                while !payload.len().is_multiple_of(8) {
                    payload.push(0);
                }
                si += 1;
            } else {
                let v = self.rd(u8::try_from(ri).unwrap_or(u8::MAX))?;
                payload.extend_from_slice(&v.to_le_bytes());
                ri += 1;
            }
        }
        let id = u16::try_from(insn.imm).map_err(|_| Stop::Hole("format id".into()))?;
        self.emit(abi::STP_REC_PRINTF, id, &payload);
        Ok(())
    }

    /// Target of a jump at `pc` (`pc + 1 + imm`), checked to stay in the
    /// handler and to go the way its operand kind says.
    fn target(&self, pc: usize, imm: i32, forward: bool) -> Step<usize> {
        let t = pc as i64 + 1 + i64::from(imm);
        if forward != (imm >= 0) || t < 0 || t >= self.h.code.len() as i64 {
            return Err(Stop::Hole(format!("jump to {t}")));
        }
        Ok(t as usize)
    }

    /// Executes the instruction at `pc`; returns the next pc, or `None`
    /// at RET.
    fn step(&mut self, pc: usize, fuel: &mut u64) -> Step<Option<usize>> {
        let Some(&insn) = self.h.code.get(pc) else {
            return Err(Stop::Hole("pc ran off the handler".into()));
        };
        let (a, b, c) = (insn.a, insn.b, insn.c);
        let bin = |m: &Self, f: fn(u64, u64) -> u64| -> Step<u64> { Ok(f(m.rd(b)?, m.rd(c)?)) };
        let cmp = |m: &Self, f: fn(i64, i64) -> bool| -> Step<u64> {
            Ok(u64::from(f(m.rd(b)? as i64, m.rd(c)? as i64)))
        };
        match u32::from(insn.op) {
            abi::STP_OP_NOP => {}
            abi::STP_OP_MOV => {
                let v = self.rd(b)?;
                self.wr(a, v)?;
            }
            abi::STP_OP_LDI => self.wr(a, i64::from(insn.imm) as u64)?,
            abi::STP_OP_LDK => {
                let v = usize::try_from(insn.imm)
                    .ok()
                    .and_then(|k| self.prog.konsts.get(k))
                    .copied()
                    .ok_or_else(|| Stop::Hole(format!("constant {}", insn.imm)))?;
                self.wr(a, v as u64)?;
            }
            abi::STP_OP_ADD => self.wr(a, bin(self, u64::wrapping_add)?)?,
            abi::STP_OP_SUB => self.wr(a, bin(self, u64::wrapping_sub)?)?,
            abi::STP_OP_MUL => self.wr(a, bin(self, u64::wrapping_mul)?)?,
            abi::STP_OP_DIV | abi::STP_OP_MOD => {
                let (x, y) = (self.rd(b)? as i64, self.rd(c)? as i64);
                if y == 0 {
                    return Err(Stop::Fault(abi::STP_RTE_DIVZERO, 0));
                }
                // Truncating division; INT64_MIN / -1 wraps, x % -1 == 0.
                let v = if u32::from(insn.op) == abi::STP_OP_DIV {
                    x.wrapping_div(y)
                } else {
                    x.wrapping_rem(y)
                };
                self.wr(a, v as u64)?;
            }
            abi::STP_OP_AND => self.wr(a, bin(self, |x, y| x & y)?)?,
            abi::STP_OP_OR => self.wr(a, bin(self, |x, y| x | y)?)?,
            abi::STP_OP_XOR => self.wr(a, bin(self, |x, y| x ^ y)?)?,
            abi::STP_OP_SHL => self.wr(a, bin(self, |x, y| x << (y & 63))?)?,
            abi::STP_OP_SHR => self.wr(a, bin(self, |x, y| ((x as i64) >> (y & 63)) as u64)?)?,
            abi::STP_OP_ADDI => {
                let v = self.rd(b)?.wrapping_add(i64::from(insn.imm) as u64);
                self.wr(a, v)?;
            }
            abi::STP_OP_NEG => {
                let v = self.rd(b)?.wrapping_neg();
                self.wr(a, v)?;
            }
            abi::STP_OP_NOT => {
                let v = !self.rd(b)?;
                self.wr(a, v)?;
            }
            abi::STP_OP_LNOT => {
                let v = u64::from(self.rd(b)? == 0);
                self.wr(a, v)?;
            }
            abi::STP_OP_EQ => self.wr(a, cmp(self, |x, y| x == y)?)?,
            abi::STP_OP_NE => self.wr(a, cmp(self, |x, y| x != y)?)?,
            abi::STP_OP_LT => self.wr(a, cmp(self, |x, y| x < y)?)?,
            abi::STP_OP_LE => self.wr(a, cmp(self, |x, y| x <= y)?)?,
            abi::STP_OP_GT => self.wr(a, cmp(self, |x, y| x > y)?)?,
            abi::STP_OP_GE => self.wr(a, cmp(self, |x, y| x >= y)?)?,
            abi::STP_OP_JMP => return Ok(Some(self.target(pc, insn.imm, true)?)),
            abi::STP_OP_JZ | abi::STP_OP_JNZ => {
                let t = self.target(pc, insn.imm, true)?;
                let zero = self.rd(a)? == 0;
                let jz = u32::from(insn.op) == abi::STP_OP_JZ;
                return Ok(Some(if zero == jz { t } else { pc + 1 }));
            }
            abi::STP_OP_LOOP => {
                let t = self.target(pc, insn.imm, false)?;
                if *fuel == 0 {
                    return Err(Stop::Fault(abi::STP_RTE_MAXACTION, 0));
                }
                *fuel -= 1;
                return Ok(Some(t));
            }
            abi::STP_OP_RET => return self.ret(None),
            abi::STP_OP_LDG => {
                let v = *self.global(insn.imm)?;
                self.wr(a, v as u64)?;
            }
            abi::STP_OP_STG => {
                let v = self.rd(a)? as i64;
                *self.global(insn.imm)? = v;
            }
            abi::STP_OP_GADD => {
                let d = self.rd(b)? as i64;
                let g = self.global(insn.imm)?;
                *g = g.wrapping_add(d);
                let v = *g;
                self.wr(a, v as u64)?;
            }
            abi::STP_OP_SMOV => {
                let v = self.srd(b)?.to_vec();
                self.swr(a, v)?;
            }
            abi::STP_OP_SLDK => {
                let v = usize::try_from(insn.imm)
                    .ok()
                    .and_then(|k| self.prog.strings.get(k))
                    .cloned()
                    .ok_or_else(|| Stop::Hole(format!("string {}", insn.imm)))?;
                self.swr(a, v)?;
            }
            abi::STP_OP_SCAT => {
                let mut v = self.srd(b)?.to_vec();
                v.extend_from_slice(self.srd(c)?);
                self.swr(a, v)?;
            }
            abi::STP_OP_SCMP => {
                // Byte strings without NUL: unsigned bytes, then length.
                let ord = self.srd(b)?.cmp(self.srd(c)?);
                self.wr(a, ord as i64 as u64)?;
            }
            abi::STP_OP_SLEN => {
                let v = self.srd(b)?.len() as u64;
                self.wr(a, v)?;
            }
            abi::STP_OP_CALLI => {
                let v = self.call_int(&insn)?;
                self.wr(a, v)?;
            }
            abi::STP_OP_CALLS => match self.call_str(&insn) {
                Ok(v) => self.swr(a, v)?,
                Err(Stop::Fault(code, addr))
                    if code == abi::STP_RTE_USTRFAULT || code == abi::STP_RTE_KSTRFAULT =>
                {
                    // A failed string copy leaves s[a] empty (helpers.h).
                    self.swr(a, Vec::new())?;
                    return Err(Stop::Fault(code, addr));
                }
                Err(e) => return Err(e),
            },
            abi::STP_OP_PRINTF => self.printf(&insn)?,
            abi::STP_OP_EXIT => {
                // exit() does not end the handler.
                self.exit = true;
                self.emit(abi::STP_REC_EXIT, 0, &[]);
            }
            abi::STP_OP_ABORT => {
                // exit(), then the run ends here, at any depth, uncaught
                // (opcodes.h); the frames stay for the register report.
                self.exit = true;
                self.emit(abi::STP_REC_EXIT, 0, &[]);
                return Ok(None);
            }
            abi::STP_OP_FCALL | abi::STP_OP_FCALLI | abi::STP_OP_FCALLS => {
                return self.call(&insn, pc, fuel).map(Some)
            }
            abi::STP_OP_RETI => {
                let v = self.rd(a)?;
                return self.ret(Some(Ret::Long(v)));
            }
            abi::STP_OP_RETS => {
                let v = self.srd(a)?.to_vec();
                return self.ret(Some(Ret::Str(v)));
            }
            abi::STP_OP_SPRINTF => {
                let v = self.sprintf(&insn)?;
                self.swr(a, v)?;
            }
            abi::STP_OP_SSUB => {
                let s = self.srd(b)?;
                let (start, len) = (self.rd(c)? as i64, self.rd(c.wrapping_add(1))? as i64);
                // Empty unless 0 <= start < len(s) and len > 0.
                let v = match usize::try_from(start) {
                    Ok(st) if st < s.len() && len > 0 => {
                        let n = usize::try_from(len).unwrap_or(usize::MAX).min(s.len() - st);
                        s[st..st + n].to_vec()
                    }
                    _ => Vec::new(),
                };
                self.swr(a, v)?;
            }
            abi::STP_OP_SFIND => {
                let (hay, needle) = (self.srd(b)?, self.srd(c)?);
                let v = if needle.is_empty() {
                    0
                } else {
                    hay.windows(needle.len())
                        .position(|w| w == needle)
                        .map_or(-1, |k| k as i64)
                };
                self.wr(a, v as u64)?;
            }
            abi::STP_OP_STOL => {
                let v = strtol(self.srd(b)?, self.rd(c)?);
                self.wr(a, v as u64)?;
            }
            abi::STP_OP_SREPL => {
                let v = replace(
                    self.srd(b)?,
                    self.srd(c)?,
                    self.srd(c.wrapping_add(1))?,
                    self.cap as usize,
                );
                self.swr(a, v)?;
            }
            abi::STP_OP_STEXT => {
                let v = text_strn(self.srd(b)?, self.cap as usize, 0, false);
                self.swr(a, v)?;
            }
            abi::STP_OP_STEXTN => {
                let (len, quoted) = (self.rd(c)? as i64, self.rd(c.wrapping_add(1))? != 0);
                let v = text_strn(self.srd(b)?, self.cap as usize, len, quoted);
                self.swr(a, v)?;
            }
            abi::STP_OP_STOK => {
                let input = self.srd(b)?.to_vec();
                let delim = self.srd(c)?.to_vec();
                let v = tokenize(&mut self.aggs.tok, &input, &delim);
                self.swr(a, v)?;
            }
            abi::STP_OP_SCHAR => {
                let s = self.srd(b)?;
                let i = self.rd(c)? as i64;
                let v = usize::try_from(i)
                    .ok()
                    .and_then(|k| s.get(k))
                    .map_or(0, |&x| u64::from(x));
                self.wr(a, v)?;
            }
            abi::STP_OP_ERROR => return Err(Stop::User(self.srd(b)?.to_vec())),
            abi::STP_OP_TRY => {
                let off =
                    usize::try_from(insn.imm).map_err(|_| Stop::Hole("TRY backwards".into()))?;
                self.swr(a, Vec::new())?;
                self.catch = Some((pc + 1 + off, a));
            }
            abi::STP_OP_TRYEND => self.catch = None,
            abi::STP_OP_REMATCH => {
                let rx = usize::try_from(insn.imm)
                    .ok()
                    .and_then(|k| self.prog.regexes.get(k))
                    .ok_or_else(|| Stop::Hole(format!("regex {} out of range", insn.imm)))?;
                let v = rx.matches(self.srd(b)?).map_err(Stop::Hole)?;
                self.wr(a, v)?;
            }
            abi::STP_OP_STADD
            | abi::STP_OP_STCOUNT
            | abi::STP_OP_STSUM
            | abi::STP_OP_STMIN
            | abi::STP_OP_STMAX
            | abi::STP_OP_STAVG
            | abi::STP_OP_STVAR
            | abi::STP_OP_STHIST
            | abi::STP_OP_STHISTS
            | abi::STP_OP_STBKT => self.stat_op(&insn)?,
            abi::STP_OP_MGET
            | abi::STP_OP_MGETS
            | abi::STP_OP_MSET
            | abi::STP_OP_MSETS
            | abi::STP_OP_MOPR
            | abi::STP_OP_MDEL
            | abi::STP_OP_MHAS
            | abi::STP_OP_MCLEAR => self.map_op(&insn)?,
            abi::STP_OP_MSTADD | abi::STP_OP_MSTX | abi::STP_OP_MSTHIST | abi::STP_OP_MSTHISTS => {
                self.stat_array_op(&insn)?
            }
            abi::STP_OP_MITER | abi::STP_OP_MNEXT => self.iter_op(&insn)?,
            _ => return Err(Stop::Fault(abi::STP_RTE_BADOP, 0)),
        }
        Ok(Some(pc + 1))
    }

    /// A run-time error under an armed catch (opcodes.h, TRY): drops the
    /// frames above the innermost one with an armed catch, disarms it,
    /// charges one unit of fuel, writes the message and returns the pc to
    /// go on at; `None` when nothing catches it (MAXACTION and BADOP never
    /// are); MAXACTION when no fuel is left to catch with.
    fn catch(&mut self, code: u32, addr: u64, msg: &[u8], fuel: &mut u64) -> Step<Option<usize>> {
        if code == abi::STP_RTE_MAXACTION || code == abi::STP_RTE_BADOP {
            return Ok(None);
        }
        if self.catch.is_none() && self.frames.iter().all(|f| f.catch.is_none()) {
            return Ok(None);
        }
        if *fuel == 0 {
            return Err(Stop::Fault(abi::STP_RTE_MAXACTION, 0));
        }
        *fuel -= 1;
        let text = catch_message(code, addr, msg, self.cap);
        while self.catch.is_none() {
            let f = self
                .frames
                .pop()
                .ok_or_else(|| Stop::Hole("catch frame".into()))?;
            self.resume_caller(f)?;
        }
        let Some((t, reg)) = self.catch.take() else {
            return Err(Stop::Hole("catch".into()));
        };
        self.swr(reg, text)?;
        Ok(Some(t))
    }

    /// FCALL* at `pc`: one unit of fuel (MAXACTION when none is left),
    /// then a new frame (MAXNESTING when `maxdepth` are active) whose
    /// files hold only the parameters; returns the callee's first pc.
    fn call(&mut self, insn: &Insn, pc: usize, fuel: &mut u64) -> Step<usize> {
        let prog = self.prog;
        let idx = u32::try_from(insn.imm).map_err(|_| Stop::Hole("call target".into()))?;
        let f = prog
            .handlers
            .get(idx as usize)
            .ok_or_else(|| Stop::Hole(format!("call of handler {idx}")))?;
        let op = u32::from(insn.op);
        let want = match op {
            abi::STP_OP_FCALLI => abi::STP_RET_LONG,
            abi::STP_OP_FCALLS => abi::STP_RET_STR,
            _ => abi::STP_RET_NONE,
        };
        if f.ctx != abi::STP_CTX_FUNCTION || f.ret != want {
            return Err(Stop::Hole(format!(
                "call of handler {idx}, not a matching function"
            )));
        }
        if *fuel == 0 {
            return Err(Stop::Fault(abi::STP_RTE_MAXACTION, 0));
        }
        *fuel -= 1;
        if self.frames.len() >= self.maxdepth {
            return Err(Stop::Fault(abi::STP_RTE_MAXNESTING, 0));
        }
        let mut r = [0u64; abi::STP_MAX_REGS as usize];
        let mut s = vec![Vec::new(); abi::STP_MAX_SREGS as usize];
        for k in 0..f.nparams {
            r[k as usize] = self.rd(reg(u32::from(insn.b) + k))?;
        }
        for k in 0..f.nsparams {
            s[k as usize] = self.srd(reg(u32::from(insn.c) + k))?.to_vec();
        }
        let r_set = if f.nparams >= 64 {
            u64::MAX
        } else {
            (1u64 << f.nparams) - 1
        };
        let s_set = (1u32 << f.nsparams) - 1;
        self.frames.push(Frame {
            handler: self.handler,
            ret_pc: pc + 1,
            r: std::mem::replace(&mut self.r, r),
            r_set: std::mem::replace(&mut self.r_set, r_set),
            s: std::mem::replace(&mut self.s, s),
            s_set: std::mem::replace(&mut self.s_set, s_set),
            op,
            dst: insn.a,
            catch: self.catch.take(),
        });
        self.handler = idx;
        self.h = f;
        Ok(0)
    }

    /// RET (`None`), RETI or RETS: ends the run at depth 0, else pops the
    /// frame, writes the result into the caller's register named by the
    /// call, and goes on after the call.
    fn ret(&mut self, v: Option<Ret>) -> Step<Option<usize>> {
        let Some(f) = self.frames.pop() else {
            return match v {
                None => Ok(None),
                Some(_) => Err(Stop::Hole("RETI/RETS in a probe handler".into())),
            };
        };
        let kind_ok = matches!(
            (&v, f.op),
            (None, abi::STP_OP_FCALL)
                | (Some(Ret::Long(_)), abi::STP_OP_FCALLI)
                | (Some(Ret::Str(_)), abi::STP_OP_FCALLS)
        );
        if !kind_ok {
            return Err(Stop::Hole("return kind does not match the call".into()));
        }
        let (dst, ret_pc) = self.resume_caller(f)?;
        match v {
            Some(Ret::Long(x)) => self.wr(dst, x)?,
            Some(Ret::Str(x)) => self.swr(dst, x)?,
            None => {}
        }
        Ok(Some(ret_pc))
    }

    /// Makes frame `f`'s caller the running handler again (its registers
    /// and its armed catch), for RET and for a catch in a caller; returns
    /// the call's result register and return pc.
    fn resume_caller(&mut self, f: Frame) -> Result<(u8, usize), Stop> {
        self.h = self
            .prog
            .handlers
            .get(f.handler as usize)
            .ok_or_else(|| Stop::Hole("caller".into()))?;
        self.handler = f.handler;
        self.r = f.r;
        self.r_set = f.r_set;
        self.s = f.s;
        self.s_set = f.s_set;
        self.catch = f.catch;
        Ok((f.dst, f.ret_pc))
    }

    /// SPRINTF: the text of format imm with its argument runs, through
    /// [`crate::fmt`], cut at MAXSTRINGLEN - 1 bytes and at the first NUL.
    fn sprintf(&self, insn: &Insn) -> Step<Vec<u8>> {
        let f = usize::try_from(insn.imm)
            .ok()
            .and_then(|k| self.prog.formats.get(k))
            .copied()
            .ok_or_else(|| Stop::Hole(format!("format {}", insn.imm)))?;
        let text = self
            .prog
            .strings
            .get(f.text as usize)
            .ok_or_else(|| Stop::Hole(format!("format {} without text", insn.imm)))?;
        if f.nargs > abi::STP_MAX_FMT_ARGS {
            return Err(Stop::Hole(format!("format with {} arguments", f.nargs)));
        }
        let (mut ri, mut si) = (u32::from(insn.b), u32::from(insn.c));
        let mut args = Vec::new();
        for k in 0..f.nargs {
            if f.str_mask & (1 << k) != 0 {
                args.push(crate::fmt::Arg::Str(self.srd(reg(si))?));
                si += 1;
            } else {
                args.push(crate::fmt::Arg::Int(self.rd(reg(ri))? as i64));
                ri += 1;
            }
        }
        let mut out = crate::fmt::format(text, &args, self.cap as usize);
        // Cut at the first NUL (%c of 0): string registers never hold one.
        if let Some(nul) = out.iter().position(|&b| b == 0) {
            out.truncate(nul);
        }
        Ok(out)
    }

    /// The statistic instructions (opcodes.h: Statistics). A run without a
    /// copy for its CPU (the CPU id not below the simulated CPUs) stops
    /// with BADOP at its first one, as vm.c does without a stats area.
    fn stat_op(&mut self, insn: &Insn) -> Step<()> {
        let op = u32::from(insn.op);
        let k = usize::try_from(insn.imm).map_err(|_| Stop::Hole("statistic id".into()))?;
        let d = *self
            .prog
            .stats
            .get(k)
            .ok_or_else(|| Stop::Hole(format!("statistic {k}")))?;
        let Some(cpu) = self.cpu else {
            return Err(Stop::Fault(abi::STP_RTE_BADOP, 0));
        };
        if op == abi::STP_OP_STADD {
            let v = self.rd(insn.a)? as i64;
            let c = self
                .aggs
                .stats
                .get_mut(cpu)
                .and_then(|s| s.get_mut(k))
                .ok_or_else(|| Stop::Hole("statistic copy".into()))?;
            d.add(c, v);
            return Ok(());
        }
        if (op == abi::STP_OP_STVAR && !d.variance)
            || ((op == abi::STP_OP_STHIST || op == abi::STP_OP_STHISTS || op == abi::STP_OP_STBKT)
                && d.hist == abi::STP_HIST_NONE)
        {
            return Err(Stop::Hole(format!(
                "statistic {k} lacks what op {op} needs"
            )));
        }
        let copies: Vec<&StatCpu> = self.aggs.stats.iter().filter_map(|s| s.get(k)).collect();
        let m = merge(&d, &copies, op == abi::STP_OP_STVAR);
        let bucket = |b: usize| -> i64 {
            copies.iter().fold(0i64, |s, c| {
                s.wrapping_add(c.buckets.get(b).copied().unwrap_or(0))
            })
        };
        let v = match op {
            abi::STP_OP_STCOUNT => m.count,
            abi::STP_OP_STSUM => m.sum,
            _ if m.count <= 0 => return Err(Stop::Fault(abi::STP_RTE_EMPTY_AGG, 0)),
            abi::STP_OP_STMIN => m.min,
            abi::STP_OP_STMAX => m.max,
            abi::STP_OP_STAVG => div64(m.sum, m.count),
            abi::STP_OP_STVAR => m.variance,
            abi::STP_OP_STHIST => {
                let mut payload = Vec::with_capacity(24 + 8 * d.nbuckets as usize);
                payload.push(d.hist as u8);
                payload.extend_from_slice(&[0, 0, 0]);
                payload.extend_from_slice(&d.nbuckets.to_le_bytes());
                payload.extend_from_slice(&d.start.to_le_bytes());
                payload.extend_from_slice(&d.stop.to_le_bytes());
                payload.extend_from_slice(&d.interval.to_le_bytes());
                payload.extend_from_slice(&0u32.to_le_bytes());
                for b in 0..d.nbuckets as usize {
                    payload.extend_from_slice(&bucket(b).to_le_bytes());
                }
                self.emit(abi::STP_REC_HIST, k as u16, &payload);
                return Ok(());
            }
            abi::STP_OP_STHISTS => {
                // Drawn by this crate's hist.rs (what user space prints
                // for STHIST's record), not by the C formatter.
                let kind = vm_spec::program::Hist::from_abi(d.hist, d.start, d.stop, d.interval);
                let h = vm_spec::hist::Histogram {
                    kind,
                    buckets: (0..d.nbuckets as usize).map(bucket).collect(),
                };
                let mut text = h.draw().into_bytes();
                text.truncate(self.cap as usize);
                return self.swr(insn.a, text);
            }
            _ => {
                // STBKT: the index as unsigned (a negative one is huge).
                let i = self.rd(insn.b)?;
                if i >= u64::from(d.nbuckets) {
                    return Err(Stop::Fault(abi::STP_RTE_HIST_INDEX, 0));
                }
                bucket(i as usize)
            }
        };
        self.wr(insn.a, v as u64)
    }

    /// The key tuple of a map instruction: long keys from r[b..], string
    /// keys from s[c..], in key order.
    fn map_key(&self, d: &RefMapDesc, b: u8, c: u8) -> Step<Vec<Val>> {
        let (mut li, mut si) = (u32::from(b), u32::from(c));
        let mut key = Vec::with_capacity(d.nkeys as usize);
        for k in 0..d.nkeys {
            if d.key_is_str(k) {
                key.push(Val::Str(self.srd(reg(si))?.to_vec()));
                si += 1;
            } else {
                key.push(Val::Int(self.rd(reg(li))? as i64));
                li += 1;
            }
        }
        Ok(key)
    }

    fn map_desc(&self, imm: i32) -> Step<(usize, RefMapDesc)> {
        let id = (imm as u32 & 0xffff) as usize;
        let d = *self
            .prog
            .maps
            .get(id)
            .ok_or_else(|| Stop::Hole(format!("map {id}")))?;
        if self.aggs.maps.len() <= id {
            return Err(Stop::Hole(format!("map {id} without storage")));
        }
        Ok((id, d))
    }

    /// MGET ... MCLEAR (opcodes.h: Associative arrays). The lock never
    /// fails here (one thread), so no run ends skipped.
    fn map_op(&mut self, insn: &Insn) -> Step<()> {
        let op = u32::from(insn.op);
        let (id, d) = self.map_desc(insn.imm)?;
        let wants_str = match op {
            abi::STP_OP_MGET | abi::STP_OP_MSET | abi::STP_OP_MOPR => Some(false),
            abi::STP_OP_MGETS | abi::STP_OP_MSETS => Some(true),
            _ => None,
        };
        if wants_str.is_some_and(|w| w != d.value_str) {
            return Err(Stop::Hole(format!("map {id}: value kind")));
        }
        // MOPR by zero fails before the map is touched.
        let aop = (insn.imm as u32 >> 16) & 0xff;
        if op == abi::STP_OP_MOPR
            && (aop == abi::STP_OP_DIV || aop == abi::STP_OP_MOD)
            && self.rd(insn.a)? == 0
        {
            return Err(Stop::Fault(abi::STP_RTE_DIVZERO, 0));
        }
        let key = if op == abi::STP_OP_MCLEAR {
            Vec::new()
        } else {
            self.map_key(&d, insn.b, insn.c)?
        };
        let full = Stop::Fault(
            if d.sized {
                abi::STP_RTE_ARRAY_SIZE
            } else {
                abi::STP_RTE_ARRAY_OVERFLOW
            },
            u64::from(d.capacity),
        );
        match op {
            abi::STP_OP_MGET => {
                let v = match self.aggs.maps[id].get(&key) {
                    Some(Val::Int(x)) => *x as u64,
                    _ => 0,
                };
                self.wr(insn.a, v)?;
            }
            abi::STP_OP_MGETS => {
                let v = match self.aggs.maps[id].get(&key) {
                    Some(Val::Str(x)) => x.clone(),
                    _ => Vec::new(),
                };
                self.swr(insn.a, v)?;
            }
            abi::STP_OP_MSET => {
                let v = self.rd(insn.a)? as i64;
                let slot = self.aggs.maps[id]
                    .insert(&d, key, Val::Int(0))
                    .ok_or(full)?;
                *slot = Val::Int(v);
            }
            abi::STP_OP_MSETS => {
                let v = self.srd(insn.a)?.to_vec();
                let slot = self.aggs.maps[id]
                    .insert(&d, key, Val::Str(Vec::new()))
                    .ok_or(full)?;
                *slot = Val::Str(v);
            }
            abi::STP_OP_MOPR => {
                let y = self.rd(insn.a)?;
                let slot = self.aggs.maps[id]
                    .insert(&d, key, Val::Int(0))
                    .ok_or(full)?;
                let x = match slot {
                    Val::Int(x) => *x as u64,
                    Val::Str(_) => 0,
                };
                let v = map_arith(aop, x, y).ok_or_else(|| Stop::Hole(format!("MOPR op {aop}")))?;
                *slot = Val::Int(v as i64);
                self.wr(insn.a, v)?;
            }
            abi::STP_OP_MDEL => self.aggs.maps[id].remove(&key),
            abi::STP_OP_MHAS => {
                let v = u64::from(self.aggs.maps[id].get(&key).is_some());
                self.wr(insn.a, v)?;
            }
            _ => {
                // MCLEAR: the insertion counter goes on.
                let m = &mut self.aggs.maps[id];
                m.by_key.clear();
                m.by_seq.clear();
            }
        }
        Ok(())
    }

    /// MSTADD, MSTX, MSTHIST and MSTHISTS (opcodes.h: Statistics arrays). A run
    /// without a statistics copy for its CPU stops with BADOP first.
    fn stat_array_op(&mut self, insn: &Insn) -> Step<()> {
        let op = u32::from(insn.op);
        let (id, d) = self.map_desc(insn.imm)?;
        let k = d
            .stat
            .ok_or_else(|| Stop::Hole(format!("map {id} is no statistics array")))?;
        let st = *self
            .prog
            .stats
            .get(k)
            .ok_or_else(|| Stop::Hole(format!("statistic {k}")))?;
        let Some(cpu) = self.cpu else {
            return Err(Stop::Fault(abi::STP_RTE_BADOP, 0));
        };
        let ncpus = self.aggs.stats.len();
        let key = self.map_key(&d, insn.b, insn.c)?;
        if op == abi::STP_OP_MSTADD {
            let v = self.rd(insn.a)? as i64;
            let full = Stop::Fault(
                if d.sized {
                    abi::STP_RTE_ARRAY_SIZE
                } else {
                    abi::STP_RTE_ARRAY_OVERFLOW
                },
                u64::from(d.capacity),
            );
            let m = &mut self.aggs.maps[id];
            let slot = m.insert(&d, key.clone(), Val::Int(0)).ok_or(full)?;
            let n = match slot {
                Val::Int(n) => *n,
                Val::Str(_) => 0,
            };
            *slot = Val::Int(n.wrapping_add(1));
            let seq = m
                .by_key
                .get(&key)
                .copied()
                .ok_or_else(|| Stop::Hole("inserted key".into()))?;
            // A new entry starts from empty copies; forget the samples of
            // entries gone since.
            if n == 0 {
                m.stats.insert(seq, vec![StatCpu::default(); ncpus]);
                let live = &m.by_seq;
                m.stats.retain(|s, _| live.contains_key(s));
            }
            let copies = m
                .stats
                .entry(seq)
                .or_insert_with(|| vec![StatCpu::default(); ncpus]);
            let c = copies
                .get_mut(cpu)
                .ok_or_else(|| Stop::Hole("statistic copy".into()))?;
            st.add(c, v);
            return Ok(());
        }
        let m = &self.aggs.maps[id];
        let copies: Vec<&StatCpu> = m
            .by_key
            .get(&key)
            .and_then(|s| m.stats.get(s))
            .map_or_else(Vec::new, |v| v.iter().collect());
        let x = (insn.imm as u32 >> 16) & 0xff;
        let mut g = merge(&st, &copies, x == abi::STP_OP_STVAR);
        // stap's pmap aggregation: samples on one CPU only give that
        // copy's Welford variance unmerged (opcodes.h: MSTX).
        let mut with = copies.iter().filter(|c| c.count > 0);
        if let (Some(c), None) = (with.next(), with.next()) {
            let v = if c.count > 1 { c.variance_s } else { 0 };
            g.variance = v >> ((2 * st.shift) & 63);
        }
        if op == abi::STP_OP_MSTX && x == abi::STP_OP_STCOUNT {
            return self.wr(insn.a, g.count as u64);
        }
        if op == abi::STP_OP_MSTX && x == abi::STP_OP_STSUM {
            return self.wr(insn.a, g.sum as u64);
        }
        if g.count <= 0 {
            return Err(Stop::Fault(abi::STP_RTE_EMPTY_AGG, 0));
        }
        let v = match x {
            _ if op == abi::STP_OP_MSTHIST => {
                let mut payload = Vec::with_capacity(24 + 8 * st.nbuckets as usize);
                payload.push(st.hist as u8);
                payload.extend_from_slice(&[0, 0, 0]);
                payload.extend_from_slice(&st.nbuckets.to_le_bytes());
                payload.extend_from_slice(&st.start.to_le_bytes());
                payload.extend_from_slice(&st.stop.to_le_bytes());
                payload.extend_from_slice(&st.interval.to_le_bytes());
                payload.extend_from_slice(&0u32.to_le_bytes());
                for b in 0..st.nbuckets as usize {
                    let n = copies.iter().fold(0i64, |s, c| {
                        s.wrapping_add(c.buckets.get(b).copied().unwrap_or(0))
                    });
                    payload.extend_from_slice(&n.to_le_bytes());
                }
                self.emit(abi::STP_REC_HIST, k as u16, &payload);
                return Ok(());
            }
            _ if op == abi::STP_OP_MSTHISTS => {
                // Drawn by hist.rs, as STHISTS.
                let kind =
                    vm_spec::program::Hist::from_abi(st.hist, st.start, st.stop, st.interval);
                let h = vm_spec::hist::Histogram {
                    kind,
                    buckets: (0..st.nbuckets as usize)
                        .map(|b| {
                            copies.iter().fold(0i64, |s, c| {
                                s.wrapping_add(c.buckets.get(b).copied().unwrap_or(0))
                            })
                        })
                        .collect(),
                };
                let mut text = h.draw().into_bytes();
                text.truncate(self.cap as usize);
                return self.swr(insn.a, text);
            }
            abi::STP_OP_STMIN => g.min,
            abi::STP_OP_STMAX => g.max,
            abi::STP_OP_STAVG => div64(g.sum, g.count),
            abi::STP_OP_STVAR => g.variance,
            _ => return Err(Stop::Hole(format!("MSTX extractor {x}"))),
        };
        self.wr(insn.a, v as u64)
    }

    /// MITER and MNEXT (opcodes.h: Associative arrays).
    fn iter_op(&mut self, insn: &Insn) -> Step<()> {
        let (id, d) = self.map_desc(insn.imm)?;
        let it = ((insn.imm as u32 >> 16) & 0xff) as usize;
        if it >= abi::STP_MAX_ITERS as usize {
            return Err(Stop::Hole(format!("iterator {it}")));
        }
        // Each function frame has its own iterators (opcodes.h), so a
        // function's foreach never touches its callers'.
        let it = self.frames.len() * abi::STP_MAX_ITERS as usize + it;
        if it >= self.aggs.iters.len() {
            self.aggs.iters.resize(it + 1, RefIter::default());
        }
        if u32::from(insn.op) == abi::STP_OP_MITER {
            let limit = self.rd(insn.b)? as i64;
            let sort = u32::from(insn.c);
            let x = (sort >> 4) & 7;
            // An extractor order is a statistic instruction: a run without
            // a copy for its CPU stops with BADOP (opcodes.h).
            if x != 0 && self.cpu.is_none() {
                return Err(Stop::Fault(abi::STP_RTE_BADOP, 0));
            }
            let m = &self.aggs.maps[id];
            // An extractor order (SORT bits 4..6, a statistics array's
            // value column): each entry's merged statistic's extractor
            // value becomes the value it sorts by.
            let keyed: Vec<Val> = if x != 0 {
                let k = d
                    .stat
                    .ok_or_else(|| Stop::Hole("extractor order on a plain map".into()))?;
                let st = *self
                    .prog
                    .stats
                    .get(k)
                    .ok_or_else(|| Stop::Hole(format!("statistic {k}")))?;
                m.by_seq
                    .keys()
                    .map(|s| {
                        let c = m.stats.get(s).map_or(&[][..], |v| v.as_slice());
                        let g = merge(&st, &c.iter().collect::<Vec<_>>(), false);
                        Val::Int(match x {
                            abi::STP_SORTX_SUM => g.sum,
                            abi::STP_SORTX_MIN => g.min,
                            abi::STP_SORTX_MAX => g.max,
                            abi::STP_SORTX_AVG => div64(g.sum, g.count),
                            _ => g.count,
                        })
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let mut ents: Vec<(u64, &[Val], &Val)> = m
                .by_seq
                .iter()
                .enumerate()
                .map(|(i, (s, (k, v)))| (*s, k.as_slice(), keyed.get(i).unwrap_or(v)))
                .collect();
            if sort != 0 {
                ents.sort_by(|a, b| ent_cmp(sort & 0x8f, *a, *b));
            }
            let count = usize::try_from(limit).map_or(0, |l| l.min(ents.len()));
            let seqs = ents.iter().map(|e| e.0).collect();
            self.aggs.iters[it] = RefIter {
                map: Some(id as u32),
                seqs,
                pos: 0,
                count,
            };
            return Ok(());
        }
        // MNEXT: an iterator filled for another map (or never) is BADOP.
        if self.aggs.iters[it].map != Some(id as u32) {
            return Err(Stop::Fault(abi::STP_RTE_BADOP, 0));
        }
        let mut found: Option<Vec<Val>> = None;
        {
            let (iters, maps) = (&mut self.aggs.iters, &self.aggs.maps);
            let x = &mut iters[it];
            while x.pos < x.count {
                let s = x.seqs.get(x.pos).copied();
                x.pos += 1;
                // Entries deleted or replaced since MITER are passed over.
                if let Some((k, _)) = s.and_then(|s| maps[id].by_seq.get(&s)) {
                    found = Some(k.clone());
                    break;
                }
            }
        }
        let (mut li, mut si) = (u32::from(insn.b), u32::from(insn.c));
        for k in 0..d.nkeys {
            let v = found.as_ref().and_then(|f| f.get(k as usize));
            if d.key_is_str(k) {
                let s = match v {
                    Some(Val::Str(s)) => s.clone(),
                    _ => Vec::new(),
                };
                self.swr(reg(si), s)?;
                si += 1;
            } else {
                let x = match v {
                    Some(Val::Int(x)) => *x as u64,
                    _ => 0,
                };
                self.wr(reg(li), x)?;
                li += 1;
            }
        }
        self.wr(insn.a, u64::from(found.is_some()))
    }
}

/// A function's result on its way back to the caller.
enum Ret {
    Long(u64),
    Str(Vec<u8>),
}

/// Register number `k` of a run (past 255 it is out of every file).
fn reg(k: u32) -> u8 {
    u8::try_from(k).unwrap_or(u8::MAX)
}

/// MOPR's arithmetic: `x op y` as the opcode of that number computes it
/// (`y != 0` for DIV and MOD, checked before); `None` for another opcode.
fn map_arith(op: u32, x: u64, y: u64) -> Option<u64> {
    Some(match op {
        abi::STP_OP_ADD => x.wrapping_add(y),
        abi::STP_OP_SUB => x.wrapping_sub(y),
        abi::STP_OP_MUL => x.wrapping_mul(y),
        abi::STP_OP_DIV => (x as i64).wrapping_div(y as i64) as u64,
        abi::STP_OP_MOD => (x as i64).wrapping_rem(y as i64) as u64,
        abi::STP_OP_AND => x & y,
        abi::STP_OP_OR => x | y,
        abi::STP_OP_XOR => x ^ y,
        abi::STP_OP_SHL => x << (y & 63),
        abi::STP_OP_SHR => ((x as i64) >> (y & 63)) as u64,
        _ => return None,
    })
}

/// STOL (opcodes.h): the kernel's simple_strtol on a counted string.
fn strtol(s: &[u8], base: u64) -> i64 {
    let (neg, mut t) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    let hex_prefix = |t: &[u8]| t.len() >= 2 && t[0] == b'0' && (t[1] == b'x' || t[1] == b'X');
    let base = match base {
        // "0x" picks 16 only with something after it.
        0 if hex_prefix(t) && t.len() > 2 => 16,
        0 if t.first() == Some(&b'0') => 8,
        0 => 10,
        b => b,
    };
    if base == 16 && hex_prefix(t) {
        t = &t[2..];
    }
    let mut v: u64 = 0;
    for &c in t {
        let d = match c {
            b'0'..=b'9' => u64::from(c - b'0'),
            b'a'..=b'z' => u64::from(c - b'a') + 10,
            b'A'..=b'Z' => u64::from(c - b'A') + 10,
            _ => break,
        };
        if d >= base {
            break;
        }
        v = v.wrapping_mul(base).wrapping_add(d);
    }
    if neg {
        v.wrapping_neg() as i64
    } else {
        v as i64
    }
}

/// SREPL (opcodes.h): every `from` in `s`, left to right without
/// overlap, replaced by `to`; an empty `from` changes nothing; at most
/// `cap` bytes.
fn replace(s: &[u8], from: &[u8], to: &[u8], cap: usize) -> Vec<u8> {
    if from.is_empty() {
        return s.to_vec();
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() && out.len() < cap {
        if s[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out.truncate(cap);
    out
}

/// One character of STEXTN's input: a code point of a valid 2..4-byte
/// UTF-8 sequence and its length, or the first byte and 1.
fn utf8_char(s: &[u8]) -> (u32, usize) {
    let b = s[0];
    let (n, lead) = match b {
        _ if b & 0xe0 == 0xc0 => (2, b & 0x1f),
        _ if b & 0xf0 == 0xe0 => (3, b & 0x0f),
        _ if b & 0xf8 == 0xf0 => (4, b & 0x07),
        _ => return (u32::from(b), 1),
    };
    if s.len() < n || s[1..n].iter().any(|&x| x & 0xc0 != 0x80) {
        return (u32::from(b), 1);
    }
    let c = s[1..n]
        .iter()
        .fold(u32::from(lead), |c, &x| (c << 6) | u32::from(x & 0x3f));
    let least = [0, 0, 0x80, 0x800, 0x10000][n];
    if c < least || (0xd800..=0xdfff).contains(&c) || c > 0x10ffff {
        return (u32::from(b), 1);
    }
    (c, n)
}

/// STEXTN (opcodes.h): stap's `_stp_text_str` of `s` with the output
/// budget `len` (when in `[1, cap]`, else `cap`), in quotes when `quoted`.
fn text_strn(s: &[u8], cap: usize, len: i64, quoted: bool) -> Vec<u8> {
    let mut budget: i64 = if len >= 1 && len <= cap as i64 {
        len
    } else {
        cap as i64
    };
    let mut out = Vec::new();
    if quoted {
        budget = budget.max(5) - 2;
        out.push(b'"');
    }
    // The first escape that the "..." of a quoted cut could split.
    let mut first_esc: Option<(usize, usize)> = None;
    let mut i = 0;
    let mut last = 0u32;
    while i < s.len() {
        let (c, n) = utf8_char(&s[i..]);
        last = c;
        if budget <= 0 {
            break;
        }
        i += n;
        let e: Vec<u8> = if n > 1 {
            if c <= 0xffff {
                format!("\\u{c:04X}").into_bytes()
            } else {
                format!("\\U{c:08X}").into_bytes()
            }
        } else {
            match c {
                0x07 => b"\\a".to_vec(),
                0x08 => b"\\b".to_vec(),
                0x0c => b"\\f".to_vec(),
                0x0a => b"\\n".to_vec(),
                0x0d => b"\\r".to_vec(),
                0x09 => b"\\t".to_vec(),
                0x0b => b"\\v".to_vec(),
                0x22 => b"\\\"".to_vec(),
                0x5c => b"\\\\".to_vec(),
                0x20..=0x7e => vec![c as u8],
                _ => format!("\\{c:03o}").into_bytes(),
            }
        };
        let num = e.len() as i64;
        if num > 1 && first_esc.is_none() && budget - 3 < num {
            first_esc = Some((out.len(), e.len()));
        }
        if budget < num {
            break;
        }
        out.extend_from_slice(&e);
        budget -= num;
    }
    if quoted {
        if last != 0 && i < s.len() {
            let cut = (out.len() as i64 + budget - 3).max(0) as usize;
            let at = match first_esc {
                Some((e, n)) if e < cut && cut < e + n => e,
                _ => cut,
            };
            out.truncate(at);
            out.extend_from_slice(b"\"...");
        } else {
            out.push(b'"');
        }
    }
    out
}

/// STOK (opcodes.h): stap's `tokenize` on the session's tokenizer.
fn tokenize(tok: &mut (Vec<u8>, Option<usize>), input: &[u8], delim: &[u8]) -> Vec<u8> {
    if !input.is_empty() {
        *tok = (input.to_vec(), Some(0));
    }
    while let Some(start) = tok.1 {
        let rest = tok.0.get(start..).unwrap_or_default();
        let n = rest.iter().position(|b| delim.contains(b));
        tok.1 = n.map(|n| start + n + 1);
        let token = &rest[..n.unwrap_or(rest.len())];
        if !token.is_empty() {
            return token.to_vec();
        }
    }
    Vec::new()
}

// ---------------------------------------------------------------------
// Statistics and associative arrays

/// One statistic of the image (`struct stp_stat_desc`).
#[derive(Debug, Clone, Copy)]
struct RefStat {
    /// `abi::STP_HIST_*`.
    hist: u32,
    shift: u32,
    /// `STP_STAT_F_VARIANCE`: Welford's sums are kept.
    variance: bool,
    nbuckets: u32,
    start: i32,
    stop: i32,
    interval: i32,
}

/// One CPU's copy of a statistic (`struct stp_stat_cpu` and its buckets),
/// all zero when empty.
#[derive(Debug, Clone, Default)]
struct StatCpu {
    count: i64,
    sum: i64,
    min: i64,
    max: i64,
    avg_s: i64,
    m2: i64,
    variance_s: i64,
    buckets: Vec<i64>,
}

/// stap's `_stp_div64` without the error: 0 for `y == 0`, `-x` for
/// `y == -1`, else truncating division.
fn div64(x: i64, y: i64) -> i64 {
    match y {
        0 => 0,
        -1 => x.wrapping_neg(),
        _ => x / y,
    }
}

impl RefStat {
    /// The histogram bucket of `v` (opcodes.h: STADD).
    fn bucket(&self, v: i64) -> usize {
        let half = (abi::STP_HIST_LOG_BUCKETS / 2) as usize;
        if self.hist == abi::STP_HIST_LOG {
            // Bit length of |v| (1..=64); bucket 64 holds 0.
            let fls = |x: u64| (64 - x.leading_zeros()) as usize;
            return match v {
                0 => half,
                v if v > 0 => half + fls(v as u64),
                v => half - fls((v as u64).wrapping_neg()),
            };
        }
        // LINEAR: the offset from start wraps; unsigned division.
        let off = (v as u64).wrapping_sub(i64::from(self.start) as u64) as i64;
        if off < 0 {
            return 0;
        }
        let q = off as u64 / u64::from(self.interval as u32);
        let last = u64::from(self.nbuckets.saturating_sub(1));
        if q >= last.saturating_sub(1) {
            last as usize
        } else {
            q as usize + 1
        }
    }

    /// `s <<< v` on one CPU's copy (stap's `__stp_stat_add`, Welford's
    /// update with a 32-bit delta).
    fn add(&self, c: &mut StatCpu, v: i64) {
        let n = c.count;
        let vs = ((v as u64) << self.shift) as i64;
        if n == 0 {
            c.sum = v;
            c.min = v;
            c.max = v;
            c.avg_s = vs;
            c.m2 = 0;
        } else {
            c.sum = c.sum.wrapping_add(v);
            c.max = c.max.max(v);
            c.min = c.min.min(v);
            if self.variance {
                // stap keeps delta in an int: the low 32 bits, signed.
                let delta = i64::from(vs.wrapping_sub(c.avg_s) as u32 as i32);
                let avg = c.avg_s.wrapping_add(div64(delta, n.wrapping_add(1)));
                let m2 = c.m2.wrapping_add(delta.wrapping_mul(vs.wrapping_sub(avg)));
                c.avg_s = avg;
                c.m2 = m2;
                c.variance_s = div64(m2, n);
            }
        }
        c.count = n.wrapping_add(1);
        if self.hist != abi::STP_HIST_NONE {
            let b = self.bucket(v);
            if c.buckets.len() < self.nbuckets as usize {
                c.buckets.resize(self.nbuckets as usize, 0);
            }
            if let Some(x) = c.buckets.get_mut(b) {
                *x = x.wrapping_add(1);
            }
        }
    }
}

/// A statistic merged over CPUs (stap's `_stp_stat_get`).
#[derive(Debug, Clone, Copy, Default)]
struct Merged {
    count: i64,
    sum: i64,
    min: i64,
    max: i64,
    variance: i64,
}

/// Merges the copies `cpus` of statistic `d` (every CPU id, in order);
/// @variance only when `variance`.
fn merge(d: &RefStat, cpus: &[&StatCpu], variance: bool) -> Merged {
    let mut m = Merged::default();
    for c in cpus {
        if c.count <= 0 {
            continue;
        }
        if m.count == 0 {
            m.min = c.min;
            m.max = c.max;
        }
        m.count = m.count.wrapping_add(c.count);
        m.sum = m.sum.wrapping_add(c.sum);
        m.max = m.max.max(c.max);
        m.min = m.min.min(c.min);
    }
    if !variance || m.count <= 0 {
        return m;
    }
    let avg_s = div64(((m.sum as u64) << d.shift) as i64, m.count);
    let (mut s1, mut s2) = (0u64, 0u64);
    for c in cpus {
        if c.count <= 0 {
            continue;
        }
        let dev = (c.avg_s as u64).wrapping_sub(avg_s as u64);
        s1 = s1.wrapping_add((c.count as u64).wrapping_mul(dev).wrapping_mul(dev));
        s2 = s2.wrapping_add((c.count.wrapping_sub(1) as u64).wrapping_mul(c.variance_s as u64));
    }
    m.variance = div64(s1.wrapping_add(s2) as i64, m.count.wrapping_sub(1)) >> ((2 * d.shift) & 63);
    m
}

/// One associative array of the image (`struct stp_map_desc`).
#[derive(Debug, Clone, Copy)]
struct RefMapDesc {
    nkeys: u32,
    /// Bit i: key i is a string.
    str_mask: u32,
    value_str: bool,
    wrap: bool,
    sized: bool,
    capacity: u32,
    /// A statistics array (`STP_MAPV_STAT`): its statistic's index.
    stat: Option<usize>,
}

impl RefMapDesc {
    fn key_is_str(&self, k: u32) -> bool {
        self.str_mask & (1 << k) != 0
    }
}

/// The model of one map: entries by key and in insertion order. `seq`
/// numbers insertions from 1 and is never reset (map.c: `m->seq`), so a
/// key deleted and inserted again is a new entry.
#[derive(Debug, Clone, Default)]
struct RefMap {
    by_key: BTreeMap<Vec<Val>, u64>,
    by_seq: BTreeMap<u64, (Vec<Val>, Val)>,
    seq: u64,
    /// A statistics array's per-entry statistic, by insertion number:
    /// one copy per CPU id (absent: all zero).
    stats: BTreeMap<u64, Vec<StatCpu>>,
}

impl RefMap {
    fn get(&self, k: &[Val]) -> Option<&Val> {
        let s = self.by_key.get(k)?;
        self.by_seq.get(s).map(|(_, v)| v)
    }

    fn remove(&mut self, k: &[Val]) {
        if let Some(s) = self.by_key.remove(k) {
            self.by_seq.remove(&s);
        }
    }

    /// The entry of `k`, inserted with `zero` when absent; a full wrap
    /// map first evicts its oldest entry. `None` when full.
    fn insert(&mut self, d: &RefMapDesc, k: Vec<Val>, zero: Val) -> Option<&mut Val> {
        let s = match self.by_key.get(&k) {
            Some(&s) => s,
            None => {
                if self.by_key.len() >= d.capacity as usize {
                    if !d.wrap {
                        return None;
                    }
                    let (_, (old, _)) = self.by_seq.pop_first()?;
                    self.by_key.remove(&old);
                }
                self.seq += 1;
                self.by_key.insert(k.clone(), self.seq);
                self.by_seq.insert(self.seq, (k, zero));
                self.seq
            }
        };
        self.by_seq.get_mut(&s).map(|(_, v)| v)
    }
}

/// One foreach iterator: the insertion numbers of the entries MITER saw,
/// in iteration order, and how far MNEXT got.
#[derive(Debug, Clone, Default)]
struct RefIter {
    map: Option<u32>,
    seqs: Vec<u64>,
    pos: usize,
    count: usize,
}

/// Statistics, maps and iterators of a session. Iterators are one set per
/// frame level for the session (`STP_MAX_ITERS` per level, the level's
/// first at `depth * STP_MAX_ITERS`), as `HostSession` has them (the
/// kernel has one per CPU; MNEXT only follows a MITER of the same frame,
/// so that cannot differ).
#[derive(Debug, Clone, Default)]
struct Aggs {
    /// `[cpu][statistic]`.
    stats: Vec<Vec<StatCpu>>,
    maps: Vec<RefMap>,
    iters: Vec<RefIter>,
    /// STOK's tokenizer (the session's one CPU, as `HostSession`): its
    /// copy of the input and where the next token starts (`None`: no token
    /// left).
    tok: (Vec<u8>, Option<usize>),
}

/// Compares column `sort & 15` of two entries as map.c's `ent_cmp`:
/// integers signed, strings as SCMP, bit 7 descending, ties by insertion.
fn ent_cmp(sort: u32, a: (u64, &[Val], &Val), b: (u64, &[Val], &Val)) -> std::cmp::Ordering {
    let col = sort & 15;
    let pick = |e: (u64, &[Val], &Val)| -> Option<Val> {
        if col == 15 {
            Some(e.2.clone())
        } else {
            e.1.get(col.checked_sub(1)? as usize).cloned()
        }
    };
    let c = match (pick(a), pick(b)) {
        (Some(Val::Int(x)), Some(Val::Int(y))) => x.cmp(&y),
        (Some(Val::Str(x)), Some(Val::Str(y))) => x.cmp(&y),
        _ => std::cmp::Ordering::Equal,
    };
    let c = if sort & 0x80 != 0 { c.reverse() } else { c };
    c.then(a.0.cmp(&b.0))
}

/// A reference-VM session: a program, its globals, one ring and the
/// record clock, as vm-testkit's `HostSession` has them. The ring is
/// drained after every run (as `HostSession` does), so drops happen when
/// one run writes more than the ring holds.
#[derive(Debug)]
pub struct RefSession {
    prog: RefProgram,
    globals: Vec<i64>,
    ring: Ring,
    clock: u64,
    exit_requested: bool,
    aggs: Aggs,
    /// Simulated CPU ids for statistics ([`RefSession::set_cpus`]).
    ncpus: u32,
}

impl RefSession {
    /// A session of `prog`: zero globals, a ring of `RING_PAGES` pages of
    /// [`PAGE_SIZE`] bytes, the clock at 1 (as `HostSession`).
    pub fn new(prog: RefProgram) -> Self {
        let ring_size = u64::from(prog.limit(abi::STP_LIM_RING_PAGES)) * PAGE_SIZE;
        RefSession {
            globals: vec![0; prog.nglobals as usize],
            ring: Ring {
                size: ring_size,
                prod: 0,
                cons: 0,
                dropped: 0,
                records: Vec::new(),
            },
            clock: 1,
            exit_requested: false,
            aggs: Aggs {
                stats: vec![vec![StatCpu::default(); prog.stats.len()]],
                maps: vec![RefMap::default(); prog.maps.len()],
                iters: vec![RefIter::default(); abi::STP_MAX_ITERS as usize],
                tok: (Vec::new(), None),
            },
            ncpus: 1,
            prog,
        }
    }

    /// Simulates `n` CPU ids (at least 1) for statistics and empties every
    /// statistic, as `HostSession::set_cpus`: a run updates
    /// the copy of its [`HostEnv::cpu`] (no copy: BADOP at its first
    /// statistic instruction), the extractors merge all `n` in CPU order.
    pub fn set_cpus(&mut self, n: u32) {
        self.ncpus = n.max(1);
        self.aggs.stats =
            vec![vec![StatCpu::default(); self.prog.stats.len()]; self.ncpus as usize];
        for m in &mut self.aggs.maps {
            m.stats.clear();
        }
    }

    /// The entries of map `map` in insertion order (`None` if there is no
    /// such map), as `HostSession::map_entries` decodes them
    /// (its order is the storage's: sort by `seq` to compare).
    pub fn map_entries(&self, map: usize) -> Option<Vec<MapEntry>> {
        let m = self.aggs.maps.get(map)?;
        Some(
            m.by_seq
                .iter()
                .map(|(s, (k, v))| MapEntry {
                    seq: *s,
                    keys: k.clone(),
                    value: v.clone(),
                })
                .collect(),
        )
    }

    /// The program.
    pub fn program(&self) -> &RefProgram {
        &self.prog
    }

    /// Runs handler `idx` once in `env`; its records are queued for
    /// [`RefSession::take_records`].
    pub fn run_handler(&mut self, idx: u32, env: &HostEnv) -> Result<RunReport, RefError> {
        let h = self
            .prog
            .handlers
            .get(idx as usize)
            .ok_or(RefError::NoHandler(idx))?;
        if h.ctx == abi::STP_CTX_FUNCTION {
            return Err(RefError::Function(idx));
        }
        let mem = Memory::new(&env.memory);
        // A string holds at most MAXSTRINGLEN - 1 bytes: stap counts the NUL.
        let cap = self.prog.limit(abi::STP_LIM_MAXSTRINGLEN) - 1;
        // vm.c: the stats area's CPU is the env's CPU id as u32.
        let cpu = u32::try_from(env.cpu)
            .ok()
            .filter(|&c| c < self.ncpus)
            .map(|c| c as usize);
        let mut fuel = u64::from(self.prog.limit(abi::STP_LIM_MAXACTION));
        let mut m = Machine {
            prog: &self.prog,
            h,
            env,
            mem: &mem,
            globals: &mut self.globals,
            ring: &mut self.ring,
            clock: &mut self.clock,
            handler: idx,
            cap,
            r: [0; abi::STP_MAX_REGS as usize],
            r_set: 0,
            s: vec![Vec::new(); abi::STP_MAX_SREGS as usize],
            s_set: 0,
            exit: false,
            catch: None,
            frames: Vec::new(),
            maxdepth: if self
                .prog
                .handlers
                .iter()
                .any(|h| h.ctx == abi::STP_CTX_FUNCTION)
            {
                self.prog.limit(abi::STP_LIM_MAXNESTING) as usize
            } else {
                0
            },
            aggs: &mut self.aggs,
            cpu,
        };
        let mut pc = 0usize;
        let mut steps = 0u64;
        let outcome = loop {
            steps += 1;
            match m.step(pc, &mut fuel) {
                Ok(Some(next)) => pc = next,
                Ok(None) => break Outcome::Ret,
                Err(Stop::Hole(what)) => {
                    break Outcome::VerifierHole {
                        handler: m.handler,
                        pc: pc as u32,
                        what,
                    }
                }
                Err(Stop::Fault(code, addr)) => match m.catch(code, addr, &[], &mut fuel) {
                    Ok(Some(t)) => pc = t,
                    Ok(None) => break m.fail(pc, code, addr, &[]),
                    Err(Stop::Fault(c, a)) => break m.fail(pc, c, a, &[]),
                    Err(Stop::User(_)) | Err(Stop::Hole(_)) => {
                        break Outcome::VerifierHole {
                            handler: m.handler,
                            pc: pc as u32,
                            what: "catch".into(),
                        }
                    }
                },
                Err(Stop::User(msg)) => {
                    let len = msg.len() as u64;
                    match m.catch(abi::STP_RTE_USER, len, &msg, &mut fuel) {
                        Ok(Some(t)) => pc = t,
                        Ok(None) => break m.fail(pc, abi::STP_RTE_USER, len, &msg),
                        Err(Stop::Fault(c, a)) => break m.fail(pc, c, a, &[]),
                        Err(Stop::User(_)) | Err(Stop::Hole(_)) => {
                            break Outcome::VerifierHole {
                                handler: m.handler,
                                pc: pc as u32,
                                what: "catch".into(),
                            }
                        }
                    }
                }
            }
        };
        let exit = m.exit;
        self.exit_requested |= exit;
        // The probe handler's files: saved in the outermost frame when the
        // run ended inside a function.
        let (r, r_set, sv, s_set) = match m.frames.first() {
            Some(f) => (&f.r, f.r_set, &f.s, f.s_set),
            None => (&m.r, m.r_set, &m.s, m.s_set),
        };
        let r = (0..h.nregs.min(64))
            .map(|k| (r_set & (1u64 << k) != 0).then(|| r[k as usize]))
            .collect();
        let s = (0..h.nsregs.min(32))
            .map(|k| {
                (s_set & (1u32 << k) != 0).then(|| sv.get(k as usize).cloned().unwrap_or_default())
            })
            .collect();
        Ok(RunReport {
            outcome,
            fuel_left: fuel,
            exit_requested: exit,
            steps,
            r,
            s,
        })
    }

    /// Takes the raw bytes of every record written since the last call, in
    /// ring order (the consumer catches up).
    pub fn take_records(&mut self) -> Vec<Vec<u8>> {
        self.ring.drain()
    }

    /// The global scalars.
    pub fn globals(&self) -> &[i64] {
        &self.globals
    }

    /// Sets global `idx`; false if there is no such global.
    pub fn set_global(&mut self, idx: usize, v: i64) -> bool {
        match self.globals.get_mut(idx) {
            Some(g) => {
                *g = v;
                true
            }
            None => false,
        }
    }

    /// Records dropped because they did not fit the ring.
    pub fn dropped(&self) -> u64 {
        self.ring.dropped
    }

    /// The record clock: the next time stamp it will hand out.
    pub fn clock(&self) -> u64 {
        self.clock
    }

    /// Whether some run executed EXIT.
    pub fn exit_requested(&self) -> bool {
        self.exit_requested
    }
}
