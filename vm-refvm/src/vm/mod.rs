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
//! Files, along the C core's seams: this one holds the dispatch loop, calls
//! and returns, printf and the session; `image.rs` decodes the image (the
//! tables verify.c reads), `memory.rs` the address space and the ring,
//! `helpers.rs` the helpers, `str.rs` the string helpers, `stat.rs` the
//! statistics, `map.rs` the associative arrays and foreach (map.c).
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

/// Page size of the simulated address space (`STP_HOST_PAGE_SIZE` of
/// abi.h, the user-space environment's `STP_ENV_PAGE_SIZE`): memory is
/// mapped in whole pages and string copies never cross one in a single
/// read.
pub const PAGE_SIZE: u64 = abi::STP_HOST_PAGE_SIZE as u64;

mod groups;
mod helpers;
mod image;
mod map;
mod memory;
mod stat;
mod str;

use groups::*;
use image::*;
pub use image::{RefError, RefProgram};
use map::*;
use memory::*;
use stat::*;
use str::*;
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
            .replace("%lld", &format!("{}", addr as i64))
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
    /// The match the last REMATCHS of this run recorded (`None`: failed,
    /// or none yet).
    last_match: Option<RefMatch>,
}

/// Register `i` of `bank` (`'r'` or `'s'`, of `n` registers) as a number
/// below `n`; one outside the bank is a hole.
fn bank_reg(bank: char, i: u8, n: u32) -> Step<u32> {
    let i = u32::from(i);
    if i >= n {
        return Err(Stop::Hole(format!("{bank}{i} outside {n} registers")));
    }
    Ok(i)
}

impl Machine<'_> {
    fn rd(&self, i: u8) -> Step<u64> {
        let i = bank_reg('r', i, self.h.nregs)?;
        if self.r_set & (1u64 << i) == 0 {
            return Err(Stop::Hole(format!("r{i} read before it is written")));
        }
        Ok(self.r[i as usize])
    }

    fn wr(&mut self, i: u8, v: u64) -> Step<()> {
        let i = bank_reg('r', i, self.h.nregs)?;
        self.r[i as usize] = v;
        self.r_set |= 1u64 << i;
        Ok(())
    }

    fn srd(&self, i: u8) -> Step<&[u8]> {
        let i = bank_reg('s', i, self.h.nsregs)?;
        if self.s_set & (1u32 << i) == 0 {
            return Err(Stop::Hole(format!("s{i} read before it is written")));
        }
        Ok(&self.s[i as usize])
    }

    /// s[i] := v cut at MAXSTRINGLEN - 1 bytes (the NUL counts).
    fn swr(&mut self, i: u8, mut v: Vec<u8>) -> Step<()> {
        let i = bank_reg('s', i, self.h.nsregs)?;
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
}

impl Machine<'_> {
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
            abi::STP_OP_SYSTEM => {
                // system(): the command as one record string (abi.h).
                let cmd = self.srd(b)?;
                let mut payload = (cmd.len() as u32).to_le_bytes().to_vec();
                payload.extend_from_slice(cmd);
                payload.resize((payload.len() + 7) & !7, 0);
                self.emit(abi::STP_REC_SYSTEM, 0, &payload);
            }
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
            abi::STP_OP_REMATCHS => {
                let rx = usize::try_from(insn.imm)
                    .ok()
                    .and_then(|k| self.prog.regexes.get(k))
                    .ok_or_else(|| Stop::Hole(format!("regex {} out of range", insn.imm)))?;
                let g = rx
                    .groups
                    .as_ref()
                    .ok_or_else(|| Stop::Hole(format!("REMATCHS of regex {}", insn.imm)))?;
                let subject = self.srd(b)?.to_vec();
                let v = rx.matches(&subject).map_err(Stop::Hole)?;
                self.last_match = None;
                if v == 1 {
                    match g.run(&self.prog.rx_sets, &subject, fuel) {
                        Ok(Some(slots)) => self.last_match = Some(RefMatch { slots, subject }),
                        Ok(None) => {}
                        Err(None) => return Err(Stop::Fault(abi::STP_RTE_MAXACTION, 0)),
                        Err(Some(hole)) => return Err(Stop::Hole(hole)),
                    }
                }
                self.wr(a, v)?;
            }
            abi::STP_OP_MATCHED => {
                let n = self.rd(b)?;
                let m = self
                    .last_match
                    .as_ref()
                    .ok_or(Stop::Fault(abi::STP_RTE_SUBEXP_FAILED, n))?;
                let v = m.group(n as i64).map_err(|code| Stop::Fault(code, n))?;
                self.swr(a, v)?;
            }
            abi::STP_OP_NGROUPS => {
                let m = self
                    .last_match
                    .as_ref()
                    .ok_or(Stop::Fault(abi::STP_RTE_SUBEXP_COUNT, 0))?;
                self.wr(a, (m.slots.len() / 2) as u64)?;
            }
            abi::STP_OP_PRETTY => {
                // Only the node-less case is modelled: a node index past
                // the PRETTY section prints stap's "?" (opcodes.h). The
                // walk over type nodes is the C core's alone
                // (vm-testkit/tests/pretty.rs tests it).
                let node = self.rd(c)?;
                if usize::try_from(node).map_or(true, |n| n >= self.prog.npretty) {
                    self.swr(a, b"?".to_vec())?;
                } else {
                    return Err(Stop::Hole(
                        "PRETTY over type nodes: not modelled by the reference VM".into(),
                    ));
                }
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
            | abi::STP_OP_STBKT
            | abi::STP_OP_STCLR => self.stat_op(&insn)?,
            abi::STP_OP_MGET
            | abi::STP_OP_MGETS
            | abi::STP_OP_MSET
            | abi::STP_OP_MSETS
            | abi::STP_OP_MOPR
            | abi::STP_OP_MDEL
            | abi::STP_OP_MHAS
            | abi::STP_OP_MCLEAR => self.map_op(&insn)?,
            abi::STP_OP_MSTADD
            | abi::STP_OP_MSTX
            | abi::STP_OP_MSTHIST
            | abi::STP_OP_MSTHISTS
            | abi::STP_OP_MSTBKT => self.stat_array_op(&insn)?,
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
        let mem = Memory::new(env);
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
            last_match: None,
        };
        let mut pc = 0usize;
        let mut steps = 0u64;
        let outcome = loop {
            steps += 1;
            // A run-time error: its code, address and error(msg)'s text.
            let (code, addr, msg) = match m.step(pc, &mut fuel) {
                Ok(Some(next)) => {
                    pc = next;
                    continue;
                }
                Ok(None) => break Outcome::Ret,
                Err(Stop::Hole(what)) => {
                    break Outcome::VerifierHole {
                        handler: m.handler,
                        pc: pc as u32,
                        what,
                    }
                }
                Err(Stop::Fault(code, addr)) => (code, addr, Vec::new()),
                Err(Stop::User(msg)) => (abi::STP_RTE_USER, msg.len() as u64, msg),
            };
            match m.catch(code, addr, &msg, &mut fuel) {
                Ok(Some(t)) => pc = t,
                Ok(None) => break m.fail(pc, code, addr, &msg),
                Err(Stop::Fault(c, a)) => break m.fail(pc, c, a, &[]),
                Err(Stop::User(_)) | Err(Stop::Hole(_)) => {
                    break Outcome::VerifierHole {
                        handler: m.handler,
                        pc: pc as u32,
                        what: "catch".into(),
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
