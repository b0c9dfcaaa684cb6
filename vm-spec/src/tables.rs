//! The X-macro tables of the ABI header (opcodes, helpers, limits, probe
//! kinds, verifier and run-time errors, ioctl numbers) as Rust constants, expanded from the
//! header by build.rs, and the packed immediate's accessors on its
//! generated constants. Indexes equal the C enum values.

/// Operand kinds (`enum stp_operand_kind`; opcodes.h explains each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::upper_case_acronyms)]
pub enum Operand {
    /// Unused; must be 0.
    NO,
    /// Integer register, written.
    RW,
    /// Integer register, read.
    RR,
    /// String register, written.
    SW,
    /// String register, read.
    SR,
    /// Base of a run of integer registers read (PRINTF).
    RN,
    /// Base of a run of string registers read (PRINTF).
    SN,
    /// Any 32-bit immediate.
    IMM,
    /// Forward jump offset.
    JF,
    /// Backward jump offset.
    JB,
    /// Constant table index.
    K,
    /// String table index.
    STR,
    /// Global index.
    GLB,
    /// Format index.
    FMT,
    /// Helper id.
    HLP,
    /// Integer register pair `r[x]`, `r[x+1]`, both read.
    RP,
    /// String register pair `s[x]`, `s[x+1]`, both read.
    SP,
    /// Index of a function's handler (FCALL*).
    FN,
    /// Index into the STATS section (statistics).
    STAT,
    /// Index into the MAPS section (associative arrays).
    MAP,
    /// Map id (bits 0..15) and the opcode of an arithmetic (bits 16..23).
    MOP,
    /// Map id (bits 0..15) and a foreach iterator (bits 16..23).
    MIT,
    /// Integer register read, then written.
    RM,
    /// Integer register run written (a map's long keys).
    RNW,
    /// String register run written (a map's string keys).
    SNW,
    /// foreach order (opcodes.h: SORT).
    SORT,
    /// Map id (bits 0..15) and a scalar extractor opcode (bits 16..23) of
    /// a statistics array (MSTX).
    MSX,
    /// Index into the REGEXES section (regular expressions, REMATCH).
    RX,
}

/// One row of `STP_OPCODES`.
#[derive(Debug, Clone, Copy)]
pub struct OpInfo {
    /// Mnemonic.
    pub name: &'static str,
    /// Kind of operand a.
    pub a: Operand,
    /// Kind of operand b.
    pub b: Operand,
    /// Kind of operand c.
    pub c: Operand,
    /// Kind of the immediate.
    pub imm: Operand,
    /// MAXACTION charge.
    pub cost: u32,
    /// Meaning, in register notation.
    pub doc: &'static str,
}

/// Result kind of a helper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::upper_case_acronyms)]
pub enum HelperRes {
    /// Integer (CALLI).
    INT,
    /// String (CALLS).
    STR,
}

/// Argument kind of a helper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::upper_case_acronyms)]
pub enum HelperArg {
    /// No argument.
    NONE,
    /// One integer argument.
    INT,
    /// One string argument (`s[b]`).
    STR,
}

/// One row of `STP_HELPERS`.
#[derive(Debug, Clone, Copy)]
pub struct HelperInfo {
    /// Name (`EXECNAME`).
    pub name: &'static str,
    /// Result kind.
    pub res: HelperRes,
    /// Argument kind.
    pub arg: HelperArg,
    /// Contexts where it is allowed (`STP_CTXM_*`).
    pub ctx_mask: u32,
    /// Meaning.
    pub doc: &'static str,
}

/// One row of `STP_PROBE_KINDS` (abi.h); `PROBE_KINDS[k]` is kind `k`
/// (`abi::STP_PROBE_*`).
#[derive(Debug, Clone, Copy)]
pub struct ProbeKindInfo {
    /// Lower-case name (`kprobe`).
    pub name: &'static str,
    /// The context its handler must have (`abi::STP_CTX_*`).
    pub ctx: u32,
    /// The descriptor fields it uses (`abi::STP_PROBE_USES_*`).
    pub uses: u32,
}

/// One row of `STP_VERIFY_ERRORS`.
#[derive(Debug, Clone, Copy)]
pub struct VerifyErrorInfo {
    /// Name (`BAD_MAGIC`).
    pub name: &'static str,
    /// errno returned by the LOAD ioctl.
    pub errno: i32,
    /// Message.
    pub msg: &'static str,
}

/// One row of `STP_RUNTIME_ERRORS`.
#[derive(Debug, Clone, Copy)]
pub struct RuntimeErrorInfo {
    /// Name (`DIVZERO`).
    pub name: &'static str,
    /// stap's message; may hold one `%llx` for an address.
    pub msg: &'static str,
}

// The packed immediate (STP_IMM_PACK, opcodes.h) in Rust, on the
// generated IMM_LO_BITS: its two fields are u16s.
const _: () = assert!(IMM_LO_BITS == 16 && IMM_HI_LIMIT <= 1 << 16);

/// The immediate of a MOP, MIT or MSX operand: `lo` (the map id) in the
/// low [`IMM_LO_BITS`] bits, `hi` (the arithmetic or extractor opcode, or
/// the iterator; below [`IMM_HI_LIMIT`] to verify) above them, as
/// `STP_IMM_PACK` (opcodes.h).
pub const fn imm_pack(lo: u16, hi: u16) -> i32 {
    (((hi as u32) << IMM_LO_BITS) | lo as u32) as i32
}

/// The low field of a packed immediate (`STP_IMM_LO`): the map id.
pub const fn imm_lo(imm: i32) -> u16 {
    (imm as u32 & ((1 << IMM_LO_BITS) - 1)) as u16
}

/// The high field of a packed immediate (`STP_IMM_HI`): the arithmetic
/// or extractor opcode, or the iterator.
pub const fn imm_hi(imm: i32) -> u16 {
    (imm as u32 >> IMM_LO_BITS) as u16
}

use crate::abi::*;
use crate::limits::Limit;
/// The expanded tables; see build/tables.rs.in.
#[allow(unused_parens, clippy::all)]
mod generated {
    use super::*;
    include!(concat!(env!("OUT_DIR"), "/tables.rs"));
}
pub use generated::*;

const _: () = assert!(OPCODES.len() == STP_OP__COUNT as usize);
const _: () = assert!(HELPERS.len() == STP_HLP__COUNT as usize);
const _: () = assert!(VERIFY_ERRORS.len() == STP_VERR__COUNT as usize);
const _: () = assert!(RUNTIME_ERRORS.len() == STP_RTE__COUNT as usize);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_kinds_are_indexed_by_kind() {
        assert_eq!(PROBE_KINDS.len(), crate::abi::STP_PROBE__COUNT as usize);
        let kp = &PROBE_KINDS[crate::abi::STP_PROBE_TRACEPOINT as usize];
        assert_eq!(
            (kp.name, kp.ctx),
            ("tracepoint", crate::abi::STP_CTX_KPROBE)
        );
        assert_eq!(kp.uses, crate::abi::STP_PROBE_USES_SYMBOL);
        let t = &PROBE_KINDS[crate::abi::STP_PROBE_TIMER as usize];
        assert_eq!(t.uses, crate::abi::STP_PROBE_USES_PERIOD);
    }

    #[test]
    fn packed_immediates_round_trip() {
        let imm = imm_pack(7, crate::abi::STP_OP_DIV as u16);
        assert_eq!(imm, 7 | (crate::abi::STP_OP_DIV as i32) << 16);
        assert_eq!(
            (imm_lo(imm), imm_hi(imm)),
            (7, crate::abi::STP_OP_DIV as u16)
        );
        assert_eq!(imm_hi(imm_pack(0xffff, 0xffff)), 0xffff);
        assert_eq!(imm_pack(0xffff, 0xffff), -1);
    }
}
