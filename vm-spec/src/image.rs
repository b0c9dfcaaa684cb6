//! The image writer: turns a `Program` plus the loader's symbol resolution
//! into the flat, offset-addressed image the LOAD ioctl takes
//! (`struct stp_image_hdr` and its sections, abi.h). The kernel trusts none
//! of it; this module only lays it out.
use crate::abi;
use crate::program::{ArgKind, ProbeTarget, Program};
use std::borrow::Cow;
use std::mem::size_of;
use thiserror::Error;

/// Why an image could not be built.
#[derive(Debug, Error)]
pub enum ImageError {
    /// A kprobe target was not resolved by the loader.
    #[error("probe {0} has no resolved symbol")]
    Unresolved(usize),
    /// A table is larger than the format can express.
    #[error("{0} too large for the image format")]
    TooLarge(&'static str),
}

/// The kernel symbol (and byte offset) chosen for each probe by the loader;
/// `None` for probes without a symbol.
pub type ResolvedSymbols = [Option<(String, u32)>];

fn push_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn align8(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
}

/// Bytes of one statistic's per-CPU copy with `nbuckets` buckets
/// (`stp_stat_size()` of kmod/core/stp_core.h).
pub fn stat_size(nbuckets: u32) -> u64 {
    64 + 8 * u64::from(nbuckets)
}

/// The kernel function that stands in for a name pattern (`vfs_*`,
/// `m:f*`) in a stand-in image: a real symbol of every kernel, so such an
/// image also loads in a guest.
pub const STAND_IN_SYMBOL: &str = "vfs_read";

/// Which names a stand-in image gives its probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StandIns {
    /// Each probe the first symbol it names, with its offset; a pattern
    /// (a glob, `m:f`, `f@file`), which only the loader can expand,
    /// [`STAND_IN_SYMBOL`]. What the
    /// test kit runs and the guest loads.
    Named,
    /// Every probe [`STAND_IN_SYMBOL`] (with its offset): the compiler's
    /// check of the code,
    /// where the names are the loader's business (it resolves them
    /// against kallsyms and reports a missing one itself).
    Uniform,
}

/// Whether a probe's name is a pattern only the loader can expand: a glob,
/// `module:function`, or `FUNC@FILEPAT` (the functions of matching source
/// files, `split_source_file`).
fn is_pattern(name: &str) -> bool {
    name.contains(['*', '?', '[', ':', '@'])
}

/// Symbols standing in for the loader's resolution where there is no
/// target kernel (the compiler's verify pass, tests, benches, fuzzing).
pub fn stand_in_symbols(prog: &Program, names: StandIns) -> Vec<Option<(String, u32)>> {
    let stand_in = || Some((STAND_IN_SYMBOL.to_string(), 0));
    prog.probes
        .iter()
        .map(|p| match (&p.target, names) {
            (ProbeTarget::None | ProbeTarget::Process { .. }, _) => None,
            (ProbeTarget::File { name, mode }, _) => Some((name.clone(), *mode)),
            (ProbeTarget::Symbol { offset, .. }, StandIns::Uniform) => {
                Some((STAND_IN_SYMBOL.to_string(), *offset))
            }
            (ProbeTarget::User { .. }, StandIns::Uniform) => Some(("/".to_string(), 0)),
            (_, StandIns::Uniform) => stand_in(),
            (ProbeTarget::Symbol { name, .. }, _) if is_pattern(name) => stand_in(),
            (ProbeTarget::Symbol { name, offset }, _) => Some((name.clone(), *offset)),
            (ProbeTarget::Address(_) | ProbeTarget::Statement { .. }, _) => stand_in(),
            // A uprobe's symbol is its binary's path, which the verifier
            // wants absolute.
            (ProbeTarget::User { path, .. }, _) if path.starts_with('/') => Some((path.clone(), 0)),
            (ProbeTarget::User { path, .. }, _) => Some((format!("/{path}"), 0)),
            (ProbeTarget::FirstOf(names), _) => names.first().map(|n| {
                if is_pattern(n) {
                    (STAND_IN_SYMBOL.to_string(), 0)
                } else {
                    (n.clone(), 0)
                }
            }),
        })
        .collect()
}

/// The image of `prog` with [`stand_in_symbols`].
pub fn build_stand_in(prog: &Program, names: StandIns) -> Result<Vec<u8>, ImageError> {
    let task = abi::STP_PROBE_F_PERF_TASK as u8;
    let no_pid =
        |p: &crate::program::Probe| p.flags & task != 0 && p.perf.is_some_and(|e| e.pid == 0);
    let no_address = |p: &crate::program::Probe| p.watch.is_some_and(|w| w.address == 0);
    if !prog.probes.iter().any(|p| no_pid(p) || no_address(p)) {
        return build(prog, &stand_in_symbols(prog, names));
    }
    // Before the loader knows them: perf .process probes count in pid 1,
    // a symbol's watchpoint is at an address aligned to any length.
    let mut stood_in = prog.clone();
    for p in &mut stood_in.probes {
        if no_pid(p) {
            if let Some(e) = p.perf.as_mut() {
                e.pid = 1;
            }
        }
        if let Some(w) = p.watch.as_mut().filter(|w| w.address == 0) {
            w.address = 0x1000;
        }
    }
    build(&stood_in, &stand_in_symbols(&stood_in, names))
}

/// MAXSTRINGLEN - 1 of the program: the longest string a register holds.
fn maxstr_of(prog: &Program) -> usize {
    prog.limits
        .get(abi::STP_LIM_MAXSTRINGLEN as usize)
        .copied()
        .unwrap_or(crate::limits::LIMITS[abi::STP_LIM_MAXSTRINGLEN as usize].default)
        .saturating_sub(1) as usize
}

/// `s` cut to at most `max` bytes, at a character boundary.
fn cut_at_char(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Builds the flat image. `symbols[i]` is the resolution of `prog.probes[i]`.
pub fn build(prog: &Program, symbols: &ResolvedSymbols) -> Result<Vec<u8>, ImageError> {
    let to_u32 =
        |n: usize, what: &'static str| u32::try_from(n).map_err(|_| ImageError::TooLarge(what));

    // Strings: the program's constants, then the probe symbols.
    let mut strings: Vec<Cow<[u8]>> = prog.strings.iter().map(|s| Cow::from(&s[..])).collect();
    let mut probe_syms = Vec::with_capacity(prog.probes.len());
    for (i, p) in prog.probes.iter().enumerate() {
        match (&p.target, symbols.get(i).and_then(|s| s.as_ref())) {
            // A watchpoint's symbol is its address (Watch::address).
            _ if p.watch.is_some() => probe_syms.push((0u32, 0u32)),
            (ProbeTarget::None | ProbeTarget::Process { .. }, _) => probe_syms.push((0u32, 0u32)),
            (_, Some((name, off))) => {
                probe_syms.push((to_u32(strings.len(), "string table")?, *off));
                strings.push(Cow::from(name.as_bytes()));
            }
            (_, None) => return Err(ImageError::Unresolved(i)),
        }
    }

    // Each probe's pp string (abi.h stp_probe_desc.pp): its display, cut
    // at MAXSTRINGLEN - 1 bytes (on a character boundary); equal ones
    // share a string.
    let mut pp_ids: Vec<u32> = Vec::with_capacity(prog.probes.len());
    {
        let mut seen: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
        for p in &prog.probes {
            let shown = cut_at_char(&p.display, maxstr_of(prog));
            let id = match seen.get(shown) {
                Some(&id) => id,
                None => {
                    let id = to_u32(strings.len(), "string table")?;
                    strings.push(Cow::from(shown.as_bytes()));
                    seen.insert(shown, id);
                    id
                }
            };
            pp_ids.push(id);
        }
    }

    // Each uprobe's or process event's program filter (`Uprobe::exe`,
    // the event's path; STP_PROBE_F_UEXE). A path not yet resolved (a
    // name the loader looks up in $PATH) stands in as `/NAME`, which the
    // verifier takes as the loader's result would be taken.
    let mut exe_ids: Vec<Option<u32>> = Vec::with_capacity(prog.probes.len());
    for p in &prog.probes {
        let exe: Cow<str> = match &p.target {
            ProbeTarget::Process { path, .. } if path.starts_with('/') || path.is_empty() => {
                Cow::from(path.as_str())
            }
            ProbeTarget::Process { path, .. } => Cow::from(format!("/{path}")),
            _ if p.is_uprobe() => Cow::from(p.uprobe.as_ref().map_or("", |u| u.exe.as_str())),
            _ => Cow::from(""),
        };
        if exe.is_empty() {
            exe_ids.push(None);
        } else {
            exe_ids.push(Some(to_u32(strings.len(), "string table")?));
            strings.push(Cow::from(exe.into_owned().into_bytes()));
        }
    }
    // User symbol tables: each binary's path a string.
    let mut usym_paths = Vec::with_capacity(prog.usyms.len());
    for u in &prog.usyms {
        usym_paths.push(to_u32(strings.len(), "string table")?);
        strings.push(Cow::from(u.path.as_bytes()));
    }

    // Format texts: only those SPRINTF formats in the kernel, cut at a NUL
    // (stap's C strings) and at MAXSTRINGLEN - 1 bytes (the NUL counts).
    let maxstr = maxstr_of(prog);
    let mut fmt_text = vec![abi::STP_FMT_NO_TEXT; prog.formats.len()];
    for h in &prog.handlers {
        for insn in &h.code {
            if u32::from(insn.op) != abi::STP_OP_SPRINTF {
                continue;
            }
            let Some(slot) = usize::try_from(insn.imm)
                .ok()
                .and_then(|i| fmt_text.get_mut(i))
            else {
                continue;
            };
            if *slot == abi::STP_FMT_NO_TEXT {
                let f = &prog.formats[insn.imm as usize];
                let mut t: Vec<u8> = f.text.bytes().take_while(|&c| c != 0).collect();
                t.truncate(maxstr);
                *slot = to_u32(strings.len(), "string table")?;
                strings.push(Cow::from(t));
            }
        }
    }

    let mut sections: Vec<Vec<u8>> = vec![Vec::new(); abi::STP_SEC__COUNT as usize];
    let ninsns: usize = prog.handlers.iter().map(|h| h.code.len()).sum();
    sections[abi::STP_SEC_CODE as usize].reserve(8 * ninsns);
    sections[abi::STP_SEC_HANDLERS as usize].reserve(16 * prog.handlers.len());
    sections[abi::STP_SEC_STRS as usize].reserve(8 * strings.len());
    sections[abi::STP_SEC_STRDATA as usize].reserve(strings.iter().map(|s| s.len()).sum());
    // The function of each handler (`Program::func_of`: the first).
    let mut func_of: Vec<Option<&crate::program::FuncSig>> = vec![None; prog.handlers.len()];
    for f in &prog.funcs {
        if let Some(slot @ None) = func_of.get_mut(f.handler as usize) {
            *slot = Some(f);
        }
    }
    // CODE and HANDLERS.
    let mut insn_off = 0u32;
    for (hi, h) in prog.handlers.iter().enumerate() {
        let code = &mut sections[abi::STP_SEC_CODE as usize];
        for insn in &h.code {
            code.extend_from_slice(&insn.to_bytes());
        }
        let hs = &mut sections[abi::STP_SEC_HANDLERS as usize];
        push_u32(hs, insn_off);
        push_u32(hs, to_u32(h.code.len(), "handler")?);
        to_u32(hi, "handlers")?;
        let (np, ns, ret) = func_of[hi].map_or((0, 0, 0), |f| (f.nparams, f.nsparams, f.ret));
        let hs = &mut sections[abi::STP_SEC_HANDLERS as usize];
        hs.extend_from_slice(&[h.nregs, h.nsregs, h.ctx, np, ns, ret, 0, 0]);
        insn_off = insn_off
            .checked_add(to_u32(h.code.len(), "code")?)
            .ok_or(ImageError::TooLarge("code"))?;
    }
    // PROBES.
    for (((p, (sym, off)), pp), exe) in prog
        .probes
        .iter()
        .zip(&probe_syms)
        .zip(&pp_ids)
        .zip(&exe_ids)
    {
        let ps = &mut sections[abi::STP_SEC_PROBES as usize];
        // The loader's flags ('!') stay in the .stpb.
        let mut flags = p.flags & !(abi::STP_PROBE_F__LOADER as u8);
        if exe.is_some() {
            flags |= abi::STP_PROBE_F_UEXE as u8;
        }
        ps.extend_from_slice(&[p.kind, flags, 0, 0]);
        push_u32(ps, p.handler);
        push_u32(ps, *sym);
        // A uprobe's offset field is its semaphore's file offset.
        push_u32(
            ps,
            if p.is_uprobe() {
                p.uprobe.as_ref().map_or(0, |u| u.semaphore)
            } else {
                *off
            },
        );
        // A procfs file's size: 0 is stap's default, MAXSTRINGLEN; a
        // USDT marker's: its argument count, the specs in UARGS.
        let uargs = p.uprobe.as_ref().map_or(&[][..], |u| &u.args[..]);
        let maxactive = match p.target {
            ProbeTarget::File { .. } if p.maxactive == 0 => maxstr as u32 + 1,
            _ if p.is_uprobe() => to_u32(uargs.len(), "USDT arguments")?,
            _ => p.maxactive,
        };
        push_u32(ps, maxactive);
        let uargs_at = to_u32(
            sections[abi::STP_SEC_UARGS as usize].len() / 8,
            "USDT arguments",
        )?;
        for a in uargs {
            sections[abi::STP_SEC_UARGS as usize].extend_from_slice(&a.to_le_bytes());
        }
        let ps = &mut sections[abi::STP_SEC_PROBES as usize];
        // ev_*: a perf probe's event, a watchpoint's, a netfilter hook's
        // family, number and priority, or a uprobe's file offset and
        // process (abi.h).
        let (ev_type, ev_config, ev_pid, ev_len) = match (p.perf, p.watch, p.netfilter) {
            _ if matches!(p.target, ProbeTarget::Process { .. }) => match p.target {
                ProbeTarget::Process { pid, event, .. } => {
                    (exe.unwrap_or(0), u64::from(event), pid, 0)
                }
                _ => (0, 0, 0, 0),
            },
            _ if p.is_uprobe() => {
                let u = p.uprobe.clone().unwrap_or_default();
                (exe.unwrap_or(0), u.offset, u.pid, 0)
            }
            (Some(e), _, _) => (e.event_type, e.config, e.pid, 0),
            (None, Some(w), _) => {
                let access = if w.rw {
                    abi::STP_WATCH_RW
                } else {
                    abi::STP_WATCH_W
                };
                (access, w.address, 0, w.len)
            }
            (None, None, Some(h)) => (h.pf, u64::from(h.hook), h.priority, 0),
            (None, None, None) => (0, 0, 0, 0),
        };
        push_u32(ps, ev_type);
        ps.extend_from_slice(&p.period_ns.to_le_bytes());
        ps.extend_from_slice(&p.randomize.to_le_bytes());
        ps.extend_from_slice(&ev_config.to_le_bytes());
        ps.extend_from_slice(&ev_pid.to_le_bytes());
        push_u32(ps, ev_len);
        push_u32(ps, *pp);
        push_u32(ps, if uargs.is_empty() { 0 } else { uargs_at });
    }
    // USYMBINS, USYMS and USYMSTR: a symbol's size is the distance to
    // the next one, 0 for the last (abi.h); names cut at STP_MAX_USYM_NAME.
    for (u, path) in prog.usyms.iter().zip(&usym_paths) {
        let first = to_u32(
            sections[abi::STP_SEC_USYMS as usize].len() / size_of::<abi::stp_usym>(),
            "user symbols",
        )?;
        let bs = &mut sections[abi::STP_SEC_USYMBINS as usize];
        push_u32(bs, *path);
        push_u32(bs, first);
        push_u32(bs, to_u32(u.symbols.len(), "user symbols")?);
        push_u32(bs, 0);
        for (k, (off, name)) in u.symbols.iter().enumerate() {
            let size = u.symbols.get(k + 1).map_or(0, |n| {
                u32::try_from(n.0.saturating_sub(*off)).unwrap_or(u32::MAX)
            });
            let name = cut_at_char(name, abi::STP_MAX_USYM_NAME as usize);
            let at = to_u32(
                sections[abi::STP_SEC_USYMSTR as usize].len(),
                "user symbol names",
            )?;
            sections[abi::STP_SEC_USYMSTR as usize].extend_from_slice(name.as_bytes());
            let us = &mut sections[abi::STP_SEC_USYMS as usize];
            us.extend_from_slice(&off.to_le_bytes());
            push_u32(us, size);
            push_u32(us, at);
            push_u32(us, to_u32(name.len(), "user symbol name")?);
            push_u32(us, 0);
        }
    }
    // KONSTS.
    for k in &prog.konsts {
        sections[abi::STP_SEC_KONSTS as usize].extend_from_slice(&k.to_le_bytes());
    }
    // STRS and STRDATA.
    for s in &strings {
        let off = to_u32(sections[abi::STP_SEC_STRDATA as usize].len(), "string data")?;
        sections[abi::STP_SEC_STRDATA as usize].extend_from_slice(s);
        let d = &mut sections[abi::STP_SEC_STRS as usize];
        push_u32(d, off);
        push_u32(d, to_u32(s.len(), "string")?);
    }
    // FORMATS.
    for (f, text) in prog.formats.iter().zip(&fmt_text) {
        let mut mask = 0u32;
        for (i, k) in f.args.iter().enumerate() {
            if *k == ArgKind::Str && i < 32 {
                mask |= 1 << i;
            }
        }
        let fs = &mut sections[abi::STP_SEC_FORMATS as usize];
        push_u32(fs, to_u32(f.args.len(), "format")?);
        push_u32(fs, mask);
        push_u32(fs, *text);
        push_u32(fs, 0);
    }

    // STATS: the scalars back to back from offset 0, then the arrays'
    // statistics in map order, capacity copies each (the verifier checks
    // the layout).
    let mut array_off = vec![0u64; prog.stats.len()];
    let mut off = prog
        .stats
        .iter()
        .filter(|st| !st.array)
        .map(|st| stat_size(st.hist.nbuckets()))
        .sum::<u64>();
    for m in &prog.maps {
        if m.value == crate::program::MapValue::Stat {
            if let Some(st) = prog.stats.get(m.stat as usize) {
                array_off[m.stat as usize] = off;
                off += u64::from(m.capacity) * stat_size(st.hist.nbuckets());
            }
        }
    }
    let mut stat_off = 0u64;
    for (si, st) in prog.stats.iter().enumerate() {
        let (kind, start, stop, interval) = match st.hist {
            crate::program::Hist::None => (abi::STP_HIST_NONE, 0, 0, 0),
            crate::program::Hist::Log => (abi::STP_HIST_LOG, 0, 0, 0),
            crate::program::Hist::Linear {
                start,
                stop,
                interval,
            } => (abi::STP_HIST_LINEAR, start, stop, interval),
        };
        let nb = st.hist.nbuckets();
        let mut flags = if st.variance {
            abi::STP_STAT_F_VARIANCE
        } else {
            0
        };
        if st.array {
            flags |= abi::STP_STAT_F_ARRAY;
        }
        let ss = &mut sections[abi::STP_SEC_STATS as usize];
        ss.extend_from_slice(&[kind as u8, st.shift, flags as u8, 0]);
        push_u32(ss, nb);
        ss.extend_from_slice(&start.to_le_bytes());
        ss.extend_from_slice(&stop.to_le_bytes());
        ss.extend_from_slice(&interval.to_le_bytes());
        let at = if st.array { array_off[si] } else { stat_off };
        push_u32(
            ss,
            u32::try_from(at).map_err(|_| ImageError::TooLarge("statistics"))?,
        );
        if !st.array {
            stat_off += stat_size(nb);
        }
    }

    // MAPS.
    for m in &prog.maps {
        let mut mask = 0u16;
        for (i, k) in m.keys.iter().enumerate() {
            if *k == ArgKind::Str && i < 16 {
                mask |= 1 << i;
            }
        }
        let value = match m.value {
            crate::program::MapValue::Long => abi::STP_MAPV_LONG,
            crate::program::MapValue::Str => abi::STP_MAPV_STR,
            crate::program::MapValue::Stat => abi::STP_MAPV_STAT,
        };
        let mut flags = 0u32;
        if m.wrap {
            flags |= abi::STP_MAP_F_WRAP;
        }
        if m.sized {
            flags |= abi::STP_MAP_F_SIZED;
        }
        let ms = &mut sections[abi::STP_SEC_MAPS as usize];
        let nkeys = u8::try_from(m.keys.len()).map_err(|_| ImageError::TooLarge("map keys"))?;
        ms.extend_from_slice(&[nkeys, value as u8, flags as u8, 0]);
        ms.extend_from_slice(&mask.to_le_bytes());
        ms.extend_from_slice(&[0, 0]);
        push_u32(ms, m.capacity);
        push_u32(
            ms,
            if m.value == crate::program::MapValue::Stat {
                m.stat
            } else {
                0
            },
        );
    }

    // REGEXES and REGEXDATA: each table's rows back to back.
    for rx in &prog.regexes {
        let at = to_u32(
            sections[abi::STP_SEC_REGEXDATA as usize].len() / 2,
            "regex data",
        )?;
        let rd = &mut sections[abi::STP_SEC_REGEXDATA as usize];
        for t in &rx.trans {
            rd.extend_from_slice(&t.to_le_bytes());
        }
        let rs = &mut sections[abi::STP_SEC_REGEXES as usize];
        push_u32(rs, to_u32(rx.nstates(), "regex")?);
        push_u32(rs, rx.nclasses);
        push_u32(rs, rx.start);
        push_u32(rs, at);
        let mut classes = [0u8; 256];
        for (c, k) in classes.iter_mut().zip(&rx.classes) {
            *c = *k;
        }
        rs.extend_from_slice(&classes);
    }

    // REGEXSUBS, REGEXPROG and REGEXSETS: one entry per regex when any
    // has a group program (ninsn 0 for those without), else none; each
    // program's SET arguments rebased onto its sets' place in REGEXSETS.
    if prog.regexes.iter().any(|rx| rx.groups.is_some()) {
        for rx in &prog.regexes {
            let first = to_u32(
                sections[abi::STP_SEC_REGEXPROG as usize].len() / 4,
                "regex program",
            )?;
            let (ninsn, nslots) = match &rx.groups {
                None => (0, 0),
                Some(g) => {
                    let base = to_u32(
                        sections[abi::STP_SEC_REGEXSETS as usize].len() / 32,
                        "regex sets",
                    )?;
                    for set in &g.sets {
                        sections[abi::STP_SEC_REGEXSETS as usize].extend_from_slice(set);
                    }
                    let rp = &mut sections[abi::STP_SEC_REGEXPROG as usize];
                    for &w in &g.insns {
                        let (op, arg) = crate::program::rx_decode(w);
                        let w = if op == abi::STP_RX_SET {
                            crate::program::rx_insn(op, arg + base)
                        } else {
                            w
                        };
                        push_u32(rp, w);
                    }
                    (to_u32(g.insns.len(), "regex program")?, g.nslots)
                }
            };
            let ss = &mut sections[abi::STP_SEC_REGEXSUBS as usize];
            push_u32(ss, first);
            push_u32(ss, ninsn);
            push_u32(ss, nslots);
            push_u32(ss, 0);
        }
    }
    // PRETTY: the loader's type nodes, as they are.
    for n in &prog.pretty {
        sections[abi::STP_SEC_PRETTY as usize].extend_from_slice(&n.to_bytes());
    }

    // Lay out: header, then each section 8-aligned.
    let hdr_size = size_of::<abi::stp_image_hdr>();
    let mut out =
        Vec::with_capacity(hdr_size + sections.iter().map(|s| s.len() + 8).sum::<usize>());
    out.resize(hdr_size, 0);
    let mut descs = Vec::with_capacity(sections.len());
    for s in &sections {
        align8(&mut out);
        descs.push((to_u32(out.len(), "image")?, to_u32(s.len(), "section")?));
        out.extend_from_slice(s);
    }
    align8(&mut out);
    let total = to_u32(out.len(), "image")?;

    let mut hdr = Vec::with_capacity(hdr_size);
    push_u32(&mut hdr, abi::STP_IMAGE_MAGIC);
    hdr.extend_from_slice(&(abi::STP_IMAGE_VERSION as u16).to_le_bytes());
    hdr.extend_from_slice(&(hdr_size as u16).to_le_bytes());
    push_u32(&mut hdr, total);
    push_u32(&mut hdr, 0);
    push_u32(&mut hdr, to_u32(prog.globals.len(), "globals")?);
    push_u32(&mut hdr, 0);
    for (off, size) in &descs {
        push_u32(&mut hdr, *off);
        push_u32(&mut hdr, *size);
    }
    for i in 0..abi::STP_LIM__COUNT as usize {
        let v = prog
            .limits
            .get(i)
            .copied()
            .unwrap_or(crate::limits::LIMITS[i].default);
        push_u32(&mut hdr, v);
    }
    debug_assert_eq!(hdr.len(), hdr_size);
    out[..hdr.len()].copy_from_slice(&hdr);
    seal(&mut out);
    Ok(out)
}

/// Byte offset of the header's checksum field.
const CHECKSUM_AT: usize = std::mem::offset_of!(abi::stp_image_hdr, checksum);

/// The checksum `image`'s header must hold (abi.h `stp_image_hdr.checksum`):
/// FNV-1a of all its bytes with the checksum field read as 0. `None` for a
/// buffer too short to have the field.
pub fn checksum(image: &[u8]) -> Option<u32> {
    image.get(CHECKSUM_AT..CHECKSUM_AT + 4)?;
    let h = crate::container::fnv1a32_from(abi::STP_FNV1A_BASIS, &image[..CHECKSUM_AT]);
    let h = crate::container::fnv1a32_from(h, &[0; 4]);
    Some(crate::container::fnv1a32_from(h, &image[CHECKSUM_AT + 4..]))
}

/// Writes `image`'s checksum into its header (after a change to its bytes;
/// a buffer too short for the field is left alone).
pub fn seal(image: &mut [u8]) {
    if let Some(sum) = checksum(image) {
        image[CHECKSUM_AT..CHECKSUM_AT + 4].copy_from_slice(&sum.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::*;

    #[test]
    fn header_fields_and_sections_are_in_place() {
        let prog = Program {
            limits: default_limits(),
            strings: vec![b"hello".to_vec()],
            handlers: vec![Handler {
                ctx: abi::STP_CTX_KPROBE as u8,
                nregs: 1,
                nsregs: 0,
                code: vec![Insn::new(abi::STP_OP_RET, 0, 0, 0, 0)],
                locs: vec![SrcLoc::default()],
                probe_point: "kprobe.function(\"f\")".into(),
            }],
            probes: vec![Probe {
                kind: abi::STP_PROBE_KPROBE as u8,
                flags: 0,
                handler: 0,
                target: ProbeTarget::Symbol {
                    name: "f".into(),
                    offset: 0,
                },
                maxactive: 0,
                period_ns: 0,
                randomize: 0,
                perf: None,
                watch: None,
                netfilter: None,
                uprobe: None,
                display: "kprobe.function(\"f\")".into(),
            }],
            ..Default::default()
        };
        let img = build(&prog, &[Some(("vfs_read".into(), 0))]).unwrap();
        assert_eq!(&img[0..4], &abi::STP_IMAGE_MAGIC.to_le_bytes());
        assert_eq!(img.len() % 8, 0);
        let total = u32::from_le_bytes(img[8..12].try_into().unwrap()) as usize;
        assert_eq!(total, img.len());
        // The probe's symbol is the second string, after "hello", then
        // its pp string.
        let hdr_size = size_of::<abi::stp_image_hdr>();
        let sec = |i: usize| {
            let o = 24 + i * 8;
            let off = u32::from_le_bytes(img[o..o + 4].try_into().unwrap()) as usize;
            let size = u32::from_le_bytes(img[o + 4..o + 8].try_into().unwrap()) as usize;
            (off, size)
        };
        let (data_off, data_size) = sec(abi::STP_SEC_STRDATA as usize);
        assert!(data_off >= hdr_size);
        assert_eq!(
            &img[data_off..data_off + data_size],
            b"hellovfs_readkprobe.function(\"f\")"
        );
        // PROBES: pp (word 14) names string 2.
        let (probes_off, _) = sec(abi::STP_SEC_PROBES as usize);
        let pp = probes_off + std::mem::offset_of!(abi::stp_probe_desc, pp);
        assert_eq!(u32::from_le_bytes(img[pp..pp + 4].try_into().unwrap()), 2);
        assert!(build(&prog, &[None]).is_err());
    }
}
