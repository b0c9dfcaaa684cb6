//! Decoding a verified image into the reference VM's own tables (every
//! read bounds-checked: a malformed image is an error, never a panic).
use super::*;

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
pub(super) struct RefHandler {
    pub(super) code: Vec<Insn>,
    pub(super) nregs: u32,
    pub(super) nsregs: u32,
    /// `abi::STP_CTX_*`.
    pub(super) ctx: u32,
    /// Function parameters (integer, string) and result kind.
    pub(super) nparams: u32,
    pub(super) nsparams: u32,
    pub(super) ret: u32,
}

/// One printf format as the kernel sees it (`struct stp_format_desc`).
#[derive(Debug, Clone, Copy)]
pub(super) struct RefFormat {
    pub(super) nargs: u32,
    pub(super) str_mask: u32,
    /// String id of the text (SPRINTF), or `STP_FMT_NO_TEXT`.
    pub(super) text: u32,
}

/// A verified image, decoded into owned tables.
#[derive(Debug, Clone)]
pub struct RefProgram {
    pub(super) handlers: Vec<RefHandler>,
    pub(super) konsts: Vec<i64>,
    pub(super) strings: Vec<Vec<u8>>,
    pub(super) formats: Vec<RefFormat>,
    pub(super) nglobals: u32,
    pub(super) limits: Vec<u32>,
    pub(super) stats: Vec<RefStat>,
    pub(super) maps: Vec<RefMapDesc>,
    pub(super) regexes: Vec<RefRegex>,
    /// REGEXSETS: the byte sets of the group programs' SET.
    pub(super) rx_sets: Vec<[u8; 32]>,
    /// PROBES: each probe's handler, pp string id (helpers.h PP), USDT
    /// argument count (maxactive) and first spec (uargs).
    pub(super) probes: Vec<(u32, u32, u32, u32)>,
    /// UARGS: USDT argument specs (helpers.h UARG).
    pub(super) uargs: Vec<u64>,
    /// How many PRETTY type nodes the image has (opcodes.h: PRETTY). The
    /// reference VM models PRETTY only for a node index past them (`?`).
    pub(super) npretty: usize,
}

/// One regular expression's DFA (`struct stp_regex_desc` and its rows of
/// REGEXDATA), as opcodes.h describes REMATCH's walk.
#[derive(Debug, Clone)]
pub(super) struct RefRegex {
    pub(super) nclasses: usize,
    pub(super) start: usize,
    pub(super) classes: Vec<u8>,
    /// The rows, `nstates * nclasses` entries.
    pub(super) trans: Vec<u16>,
    /// The group program (REGEXSUBS entry with ninsn > 0), if any.
    pub(super) groups: Option<RefGroups>,
}

impl RefRegex {
    /// REMATCH: 1 when the walk over `s` ends in state 1; an index the
    /// verifier should have refused is a hole.
    pub(super) fn matches(&self, s: &[u8]) -> Result<u64, String> {
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

pub(super) fn le_u16(b: &[u8], off: usize) -> Result<u16, RefError> {
    b.get(off..off + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or(RefError::BadImage("field past the end"))
}

pub(super) fn le_u32(b: &[u8], off: usize) -> Result<u32, RefError> {
    b.get(off..off + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or(RefError::BadImage("field past the end"))
}

pub(super) fn le_u64(b: &[u8], off: usize) -> Result<u64, RefError> {
    let s = b
        .get(off..off + 8)
        .ok_or(RefError::BadImage("field past the end"))?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Ok(u64::from_le_bytes(a))
}

/// The bytes of section `sec` and its entry count for entries of `esize`.
pub(super) fn section(img: &[u8], sec: u32, esize: usize) -> Result<(&[u8], usize), RefError> {
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
    pub(super) fn decode(img: &[u8]) -> Result<Self, RefError> {
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

        let psz = size_of::<abi::stp_probe_desc>();
        let (pbytes, np) = section(img, abi::STP_SEC_PROBES, psz)?;
        let probes = (0..np)
            .map(|k| {
                let e = &pbytes[k * psz..(k + 1) * psz];
                Ok((
                    le_u32(e, offset_of!(abi::stp_probe_desc, handler))?,
                    le_u32(e, offset_of!(abi::stp_probe_desc, pp))?,
                    le_u32(e, offset_of!(abi::stp_probe_desc, maxactive))?,
                    le_u32(e, offset_of!(abi::stp_probe_desc, uargs))?,
                ))
            })
            .collect::<Result<Vec<(u32, u32, u32, u32)>, RefError>>()?;
        let (ubytes, nu) = section(img, abi::STP_SEC_UARGS, 8)?;
        let uargs = (0..nu)
            .map(|k| le_u64(ubytes, 8 * k))
            .collect::<Result<Vec<u64>, _>>()?;

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
                groups: None,
            });
        }
        // REGEXSUBS (empty, or one entry per regex), REGEXPROG, REGEXSETS.
        let ssz = size_of::<abi::stp_regex_sub>();
        let (sbytes, nsubs) = section(img, abi::STP_SEC_REGEXSUBS, ssz)?;
        let (pbytes, _) = section(img, abi::STP_SEC_REGEXPROG, 4)?;
        let (setbytes, nsets) = section(img, abi::STP_SEC_REGEXSETS, 32)?;
        for (k, rx) in regexes.iter_mut().enumerate().take(nsubs) {
            let e = &sbytes[k * ssz..(k + 1) * ssz];
            let first = le_u32(e, offset_of!(abi::stp_regex_sub, first))? as usize;
            let ninsn = le_u32(e, offset_of!(abi::stp_regex_sub, ninsn))? as usize;
            if ninsn == 0 {
                continue;
            }
            let insns = first
                .checked_mul(4)
                .and_then(|lo| pbytes.get(lo..lo.checked_add(ninsn.checked_mul(4)?)?))
                .ok_or(RefError::BadImage("group program outside REGEXPROG"))?
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            rx.groups = Some(RefGroups {
                insns,
                nslots: le_u32(e, offset_of!(abi::stp_regex_sub, nslots))? as usize,
            });
        }
        let rx_sets = (0..nsets)
            .map(|k| {
                let mut b = [0u8; 32];
                b.copy_from_slice(&setbytes[k * 32..(k + 1) * 32]);
                b
            })
            .collect();
        let _ = le_u16(img, offset_of!(abi::stp_image_hdr, version))?;
        Ok(RefProgram {
            probes,
            uargs,
            regexes,
            rx_sets,
            npretty: section(img, abi::STP_SEC_PRETTY, size_of::<abi::stp_pretty_node>())?.1,
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

    pub(super) fn limit(&self, l: u32) -> u32 {
        self.limits.get(l as usize).copied().unwrap_or(0)
    }
}
