//! Decoding of the records the VM writes into a ring (`struct stp_rec_hdr`
//! and its payloads, abi.h). The ring is written by the kernel, but its
//! bytes are treated as untrusted: every length and index is checked, and
//! no input makes these functions panic.
use crate::abi;
use crate::program::{ArgKind, Format};
use std::mem::{offset_of, size_of};
use thiserror::Error;

/// One printf argument, as the formatter takes it (`struct stp_fmt_arg`
/// of kmod/core/stp_core.h; [`OwnedArg::as_fmt_arg`] of a record's
/// argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FmtArg<'a> {
    /// An integer (`%d`, `%x`, `%c`, ...).
    Int(i64),
    /// A string (`%s`); bytes, not necessarily UTF-8.
    Str(&'a [u8]),
}

/// Bytes of `struct stp_rec_hdr`.
pub const HDR_LEN: usize = size_of::<abi::stp_rec_hdr>();
/// Bytes of `struct stp_rec_error`.
pub const ERROR_PAYLOAD_LEN: usize = size_of::<abi::stp_rec_error>();
/// Bytes of `struct stp_rec_hist` (the buckets follow it).
pub const HIST_PAYLOAD_LEN: usize = size_of::<abi::stp_rec_hist>();

/// Where the fields of the header and payloads lie (abi.h's structs).
const HDR_LEN_AT: usize = offset_of!(abi::stp_rec_hdr, len);
const HDR_TYPE_AT: usize = offset_of!(abi::stp_rec_hdr, type_);
const HDR_ID_AT: usize = offset_of!(abi::stp_rec_hdr, id);
const HDR_TIME_AT: usize = offset_of!(abi::stp_rec_hdr, time_ns);
const ERR_HANDLER_AT: usize = offset_of!(abi::stp_rec_error, handler);
const ERR_PC_AT: usize = offset_of!(abi::stp_rec_error, pc);
const ERR_ADDR_AT: usize = offset_of!(abi::stp_rec_error, addr);
const HIST_KIND_AT: usize = offset_of!(abi::stp_rec_hist, hist);
const HIST_NBUCKETS_AT: usize = offset_of!(abi::stp_rec_hist, nbuckets);
const HIST_START_AT: usize = offset_of!(abi::stp_rec_hist, start);
const HIST_STOP_AT: usize = offset_of!(abi::stp_rec_hist, stop);
const HIST_INTERVAL_AT: usize = offset_of!(abi::stp_rec_hist, interval);

/// One decoded record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// `STP_REC_PRINTF`: one printf with its arguments, in format order.
    Printf {
        /// Format index (into `Program::formats`).
        fmt: u16,
        /// Monotonic time stamp (ns).
        time_ns: u64,
        /// The arguments.
        args: Vec<OwnedArg>,
    },
    /// `STP_REC_ERROR`: a run-time error ended a handler.
    Error {
        /// `enum stp_runtime_error` (`abi::STP_RTE_*`).
        code: u16,
        /// Handler index.
        handler: u32,
        /// Instruction index inside the handler.
        pc: u32,
        /// Faulting address, if any (`STP_RTE_USER`: the message length).
        addr: u64,
        /// Monotonic time stamp (ns).
        time_ns: u64,
        /// `STP_RTE_USER` (`error(msg)`): the message; empty otherwise.
        msg: Vec<u8>,
    },
    /// `STP_REC_EXIT`: `exit()` ran.
    Exit {
        /// Monotonic time stamp (ns).
        time_ns: u64,
    },
    /// `STP_REC_HIST`: `print(@hist_log(s))` / `print(@hist_linear(...))`.
    Hist {
        /// Statistic index (into `Program::stats`).
        stat: u16,
        /// Monotonic time stamp (ns).
        time_ns: u64,
        /// The histogram with its buckets merged over CPUs.
        hist: crate::hist::Histogram,
    },
    /// `STP_REC_SYSTEM`: `system(cmd)` ran; user space runs `cmd`.
    System {
        /// Monotonic time stamp (ns).
        time_ns: u64,
        /// The command, for `/bin/sh -c`.
        cmd: Vec<u8>,
    },
}

impl Record {
    /// The record's time stamp, for merging per-CPU rings.
    pub fn time_ns(&self) -> u64 {
        match self {
            Record::Printf { time_ns, .. }
            | Record::Error { time_ns, .. }
            | Record::Exit { time_ns }
            | Record::Hist { time_ns, .. }
            | Record::System { time_ns, .. } => *time_ns,
        }
    }
}

/// One printf argument taken out of a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnedArg {
    /// An integer.
    Int(i64),
    /// A string (bytes, not necessarily UTF-8).
    Str(Vec<u8>),
}

impl OwnedArg {
    /// This argument as an input of [`crate::core::format`].
    pub fn as_fmt_arg(&self) -> FmtArg<'_> {
        match self {
            OwnedArg::Int(v) => FmtArg::Int(*v),
            OwnedArg::Str(s) => FmtArg::Str(s),
        }
    }
}

/// Why a record could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RecordError {
    /// Fewer bytes than the header or than the header's `len`.
    #[error("record truncated: {have} bytes, need {need}")]
    Truncated {
        /// Bytes available.
        have: usize,
        /// Bytes needed.
        need: usize,
    },
    /// `len` is smaller than the header or not a multiple of 8.
    #[error("bad record length {0}")]
    BadLength(u32),
    /// Unknown record type.
    #[error("unknown record type {0}")]
    BadType(u16),
    /// A PRINTF record names a format the program does not have.
    #[error("printf record names unknown format {0}")]
    BadFormat(u16),
    /// An ERROR record carries an unknown error code.
    #[error("error record with unknown code {0}")]
    BadErrorCode(u16),
    /// The payload does not match its type or format.
    #[error("bad record payload: {0}")]
    BadPayload(&'static str),
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    let s = b.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    let s = b.get(off..off.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(u64::from_le_bytes(a))
}

fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    let s = b.get(off..off.checked_add(2)?)?;
    Some(u16::from_le_bytes([s[0], s[1]]))
}

/// The length of the record whose header starts `head`, if `head` holds a
/// whole header and the length is plausible (at least a header, a multiple
/// of 8). The record itself may extend past `head`.
pub fn record_len(head: &[u8]) -> Option<u32> {
    if head.len() < HDR_LEN {
        return None;
    }
    let len = u32_at(head, HDR_LEN_AT)?;
    if (len as usize) < HDR_LEN || len % 8 != 0 {
        return None;
    }
    Some(len)
}

/// Decodes one record. `rec` starts at the record's header and holds at
/// least the `len` bytes the header announces (extra bytes after them are
/// ignored). `formats` gives the argument kinds of each PRINTF format.
pub fn parse(rec: &[u8], formats: &[Format]) -> Result<Record, RecordError> {
    if rec.len() < HDR_LEN {
        return Err(RecordError::Truncated {
            have: rec.len(),
            need: HDR_LEN,
        });
    }
    let trunc = RecordError::Truncated {
        have: rec.len(),
        need: HDR_LEN,
    };
    let len = u32_at(rec, HDR_LEN_AT).ok_or(trunc.clone())?;
    let ty = u16_at(rec, HDR_TYPE_AT).ok_or(trunc.clone())?;
    let id = u16_at(rec, HDR_ID_AT).ok_or(trunc.clone())?;
    let time_ns = u64_at(rec, HDR_TIME_AT).ok_or(trunc)?;
    if (len as usize) < HDR_LEN || len % 8 != 0 {
        return Err(RecordError::BadLength(len));
    }
    let body = rec
        .get(HDR_LEN..len as usize)
        .ok_or(RecordError::Truncated {
            have: rec.len(),
            need: len as usize,
        })?;
    match u32::from(ty) {
        abi::STP_REC_PRINTF => {
            let f = formats
                .get(usize::from(id))
                .ok_or(RecordError::BadFormat(id))?;
            let args = parse_args(body, &f.args)?;
            Ok(Record::Printf {
                fmt: id,
                time_ns,
                args,
            })
        }
        abi::STP_REC_ERROR => {
            if u32::from(id) >= abi::STP_RTE__COUNT {
                return Err(RecordError::BadErrorCode(id));
            }
            let bad = RecordError::BadPayload("error record size");
            let addr = u64_at(body, ERR_ADDR_AT).ok_or(bad.clone())?;
            // Only STP_RTE_USER carries bytes after the struct: its
            // message, addr bytes, zero-padded to 8.
            let msg_len = if u32::from(id) == abi::STP_RTE_USER {
                usize::try_from(addr).map_err(|_| bad.clone())?
            } else {
                0
            };
            let want = msg_len
                .checked_add(7)
                .map(|n| ERROR_PAYLOAD_LEN + (n & !7))
                .ok_or(bad.clone())?;
            if body.len() != want {
                return Err(bad);
            }
            Ok(Record::Error {
                code: id,
                handler: u32_at(body, ERR_HANDLER_AT).ok_or(bad.clone())?,
                pc: u32_at(body, ERR_PC_AT).ok_or(bad.clone())?,
                addr,
                time_ns,
                msg: body[ERROR_PAYLOAD_LEN..ERROR_PAYLOAD_LEN + msg_len].to_vec(),
            })
        }
        abi::STP_REC_EXIT => {
            if !body.is_empty() {
                return Err(RecordError::BadPayload("exit record has a payload"));
            }
            Ok(Record::Exit { time_ns })
        }
        abi::STP_REC_HIST => {
            let bad = RecordError::BadPayload("histogram record");
            let kind = *body.get(HIST_KIND_AT).ok_or(bad.clone())?;
            let nb = u32_at(body, HIST_NBUCKETS_AT).ok_or(bad.clone())?;
            let start = u32_at(body, HIST_START_AT).ok_or(bad.clone())? as i32;
            let stop = u32_at(body, HIST_STOP_AT).ok_or(bad.clone())? as i32;
            let interval = u32_at(body, HIST_INTERVAL_AT).ok_or(bad.clone())? as i32;
            let kind = match crate::program::Hist::from_abi(kind.into(), start, stop, interval) {
                crate::program::Hist::None => return Err(bad),
                k => k,
            };
            if nb == 0 || nb != kind.nbuckets() {
                return Err(bad);
            }
            let want = HIST_PAYLOAD_LEN + 8 * nb as usize;
            if body.len() != want {
                return Err(bad);
            }
            let buckets = (0..nb as usize)
                .map(|i| u64_at(body, HIST_PAYLOAD_LEN + 8 * i).map(|v| v as i64))
                .collect::<Option<Vec<i64>>>()
                .ok_or(bad)?;
            Ok(Record::Hist {
                stat: id,
                time_ns,
                hist: crate::hist::Histogram { kind, buckets },
            })
        }
        abi::STP_REC_SYSTEM => {
            let bad = RecordError::BadPayload("system record");
            let n = u32_at(body, 0).ok_or(bad.clone())? as usize;
            if body.len() != (4 + n + 7) & !7 {
                return Err(bad);
            }
            Ok(Record::System {
                time_ns,
                cmd: body[4..4 + n].to_vec(),
            })
        }
        _ => Err(RecordError::BadType(ty)),
    }
}

/// Decodes the arguments of a PRINTF payload; the payload must be used up
/// exactly.
fn parse_args(body: &[u8], kinds: &[ArgKind]) -> Result<Vec<OwnedArg>, RecordError> {
    let mut args = Vec::with_capacity(kinds.len().min(abi::STP_MAX_FMT_ARGS as usize));
    let mut off = 0usize;
    for k in kinds {
        match k {
            ArgKind::Int => {
                let v = u64_at(body, off).ok_or(RecordError::BadPayload("integer past the end"))?;
                args.push(OwnedArg::Int(v as i64));
                off += 8;
            }
            ArgKind::Str => {
                let n = u32_at(body, off)
                    .ok_or(RecordError::BadPayload("string length past the end"))?
                    as usize;
                let start = off + 4;
                let end = start
                    .checked_add(n)
                    .ok_or(RecordError::BadPayload("string past the end"))?;
                let s = body
                    .get(start..end)
                    .ok_or(RecordError::BadPayload("string past the end"))?;
                args.push(OwnedArg::Str(s.to_vec()));
                // end <= body.len() < u32::MAX, so this cannot overflow.
                off = (end + 7) & !7;
            }
        }
    }
    if off != body.len() {
        return Err(RecordError::BadPayload("arguments do not fill the record"));
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(len: u32, ty: u16, id: u16, t: u64) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&len.to_le_bytes());
        v.extend_from_slice(&ty.to_le_bytes());
        v.extend_from_slice(&id.to_le_bytes());
        v.extend_from_slice(&t.to_le_bytes());
        v
    }

    fn fmt(args: Vec<ArgKind>) -> Format {
        Format {
            text: String::new(),
            args,
        }
    }

    #[test]
    fn printf_record_round_trip() {
        let mut r = hdr(16 + 8 + 8 + 8, 1, 0, 77);
        r.extend_from_slice(&(-5i64).to_le_bytes());
        r.extend_from_slice(&3u32.to_le_bytes());
        r.extend_from_slice(b"abc\0");
        r.extend_from_slice(&7i64.to_le_bytes());
        let f = [fmt(vec![ArgKind::Int, ArgKind::Str, ArgKind::Int])];
        assert_eq!(record_len(&r), Some(40));
        assert_eq!(
            parse(&r, &f).unwrap(),
            Record::Printf {
                fmt: 0,
                time_ns: 77,
                args: vec![
                    OwnedArg::Int(-5),
                    OwnedArg::Str(b"abc".to_vec()),
                    OwnedArg::Int(7)
                ]
            }
        );
        // Wrong kinds, unknown format, short payload.
        assert!(parse(&r, &[fmt(vec![ArgKind::Int])]).is_err());
        assert_eq!(parse(&r, &[]), Err(RecordError::BadFormat(0)));
        assert!(parse(&r[..32], &f).is_err());
    }

    #[test]
    fn error_and_exit_records() {
        let mut r = hdr(32, 2, abi::STP_RTE_DIVZERO as u16, 5);
        r.extend_from_slice(&3u32.to_le_bytes());
        r.extend_from_slice(&9u32.to_le_bytes());
        r.extend_from_slice(&0xdeadu64.to_le_bytes());
        assert_eq!(
            parse(&r, &[]).unwrap(),
            Record::Error {
                code: abi::STP_RTE_DIVZERO as u16,
                handler: 3,
                pc: 9,
                addr: 0xdead,
                time_ns: 5,
                msg: Vec::new(),
            }
        );
        let e = hdr(16, 3, 0, 6);
        assert_eq!(parse(&e, &[]).unwrap(), Record::Exit { time_ns: 6 });
        assert_eq!(parse(&hdr(16, 9, 0, 0), &[]), Err(RecordError::BadType(9)));
        assert_eq!(
            parse(&hdr(12, 3, 0, 0), &[]),
            Err(RecordError::BadLength(12))
        );
        assert_eq!(record_len(&hdr(12, 3, 0, 0)), None);
        assert_eq!(record_len(&[0u8; 4]), None);
    }

    #[test]
    fn hostile_bytes_never_panic() {
        let f = [
            fmt(vec![ArgKind::Str, ArgKind::Str]),
            fmt(vec![ArgKind::Int; 3]),
        ];
        // A simple deterministic generator; every prefix of every buffer.
        let mut x: u64 = 0x9e3779b97f4a7c15;
        for _ in 0..2000 {
            let mut buf = Vec::new();
            for _ in 0..48 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                buf.push(x as u8);
            }
            buf[0] = (buf[0] & 0x38) | 0x10;
            buf[1] = 0;
            buf[2] = 0;
            buf[3] = 0;
            buf[4] %= 4;
            buf[5] = 0;
            buf[6] %= 3;
            buf[7] = 0;
            for n in 0..buf.len() {
                let _ = parse(&buf[..n], &f);
                let _ = record_len(&buf[..n]);
            }
        }
    }
}
