//! Shared helpers of the compiler's integration tests: a disassembler that
//! prints handlers as assembly text, and `verify`, a Rust mirror of the
//! verifier's rules (docs/design.md §1, abi.h `STP_VERIFY_ERRORS`) used until
//! the C verifier is callable from Rust (`vm_spec::core`).
#![allow(dead_code)]
use compiler::{compile, Options};
use vm_spec::abi;
use vm_spec::program::{ArgKind, Handler, Program};
use vm_spec::tables::{HelperArg, Operand, HELPERS, OPCODES};

/// Compiles or panics with the rendered diagnostics.
pub fn build(src: &str) -> compiler::Compiled {
    match compile("x.stp", src, &Options::default()) {
        Ok(c) => c,
        Err(f) => panic!("{src}\n{}", f.rendered),
    }
}

/// The rendered failure of `src`.
pub fn fail(src: &str) -> String {
    match compile("x.stp", src, &Options::default()) {
        Ok(_) => panic!("compiled: {src}"),
        Err(f) => f.rendered,
    }
}

/// One handler as assembly lines: `LDI r0, 5`, `JZ r1, ->7`, `PRINTF r0, s0, fmt0`.
pub fn disasm(h: &Handler) -> Vec<String> {
    h.code
        .iter()
        .enumerate()
        .map(|(pc, i)| {
            let info = &OPCODES[i.op as usize];
            let mut ops = Vec::new();
            for (kind, v) in [(info.a, i.a), (info.b, i.b), (info.c, i.c)] {
                match kind {
                    Operand::RW | Operand::RR | Operand::RN => ops.push(format!("r{v}")),
                    Operand::SW | Operand::SR | Operand::SN => ops.push(format!("s{v}")),
                    _ => {}
                }
            }
            match info.imm {
                Operand::IMM => ops.push(i.imm.to_string()),
                Operand::JF | Operand::JB => {
                    ops.push(format!("->{}", pc as i64 + 1 + i64::from(i.imm)))
                }
                Operand::K => ops.push(format!("k{}", i.imm)),
                Operand::STR => ops.push(format!("str{}", i.imm)),
                Operand::GLB => ops.push(format!("g{}", i.imm)),
                Operand::FMT => ops.push(format!("fmt{}", i.imm)),
                Operand::HLP => ops.push(
                    HELPERS
                        .get(i.imm as usize)
                        .map(|h| h.name.to_string())
                        .unwrap_or_else(|| format!("hlp{}", i.imm)),
                ),
                _ => {}
            }
            if ops.is_empty() {
                info.name.to_string()
            } else {
                format!("{} {}", info.name, ops.join(", "))
            }
        })
        .collect()
}

/// Opcode names only.
pub fn names(h: &Handler) -> Vec<&'static str> {
    h.code.iter().map(|i| OPCODES[i.op as usize].name).collect()
}

fn ctx_of_kind(kind: u8) -> u8 {
    match u32::from(kind) {
        abi::STP_PROBE_BEGIN => abi::STP_CTX_BEGIN as u8,
        abi::STP_PROBE_END | abi::STP_PROBE_ERROR => abi::STP_CTX_END as u8,
        abi::STP_PROBE_TIMER => abi::STP_CTX_TIMER as u8,
        abi::STP_PROBE_KPROBE | abi::STP_PROBE_TRACEPOINT => abi::STP_CTX_KPROBE as u8,
        _ => abi::STP_CTX_KRETPROBE as u8,
    }
}

/// Checks `p` against the verifier's rules; `Err` names the first problem.
pub fn verify(p: &Program) -> Result<(), String> {
    // MAXSTRINGLEN counts the NUL: a string holds MAXSTRINGLEN - 1 bytes.
    let maxstr = p.limits[abi::STP_LIM_MAXSTRINGLEN as usize] as usize - 1;
    for (k, s) in p.strings.iter().enumerate() {
        if s.len() > maxstr || s.contains(&0) {
            return Err(format!("BAD_STRING {k}"));
        }
    }
    for (k, f) in p.formats.iter().enumerate() {
        if f.args.len() > abi::STP_MAX_FMT_ARGS as usize {
            return Err(format!("BAD_FORMAT {k}"));
        }
    }
    for (k, pr) in p.probes.iter().enumerate() {
        let Some(h) = p.handlers.get(pr.handler as usize) else {
            return Err(format!("BAD_PROBE {k}: handler"));
        };
        if h.ctx != ctx_of_kind(pr.kind) {
            return Err(format!("BAD_PROBE {k}: context"));
        }
        if u32::from(pr.kind) == abi::STP_PROBE_TIMER && pr.period_ns < 100_000 {
            return Err(format!("BAD_PROBE {k}: period"));
        }
    }
    for (hi, h) in p.handlers.iter().enumerate() {
        verify_handler(p, h).map_err(|e| format!("handler {hi}: {e}\n{:#?}", disasm(h)))?;
    }
    Ok(())
}

fn verify_handler(p: &Program, h: &Handler) -> Result<(), String> {
    let n = h.code.len();
    if n == 0 || h.locs.len() != n {
        return Err("BAD_HANDLER: empty or locs".into());
    }
    if u32::from(h.nregs) > abi::STP_MAX_REGS || u32::from(h.nsregs) > abi::STP_MAX_SREGS {
        return Err("BAD_HANDLER: register counts".into());
    }
    let last = u32::from(h.code[n - 1].op);
    if last != abi::STP_OP_RET && last != abi::STP_OP_RETI && last != abi::STP_OP_RETS {
        return Err("NO_RET".into());
    }
    // Written registers on every path: (ints, strings) bit sets per insn.
    let mut state: Vec<Option<(u64, u32)>> = vec![None; n + 1];
    state[0] = Some((0, 0));
    let meet = |s: &mut Option<(u64, u32)>, v: (u64, u32)| {
        *s = Some(match *s {
            None => v,
            Some(o) => (o.0 & v.0, o.1 & v.1),
        })
    };
    for pc in 0..n {
        let i = h.code[pc];
        let Some(info) = OPCODES.get(i.op as usize) else {
            return Err(format!("BAD_OPCODE at {pc}"));
        };
        let Some((mut wr, mut ws)) = state[pc] else {
            // Unreachable code: nothing to check about registers.
            continue;
        };
        let fmt_counts = || -> Option<(usize, usize)> {
            if matches!(
                info.imm,
                Operand::MAP | Operand::MOP | Operand::MIT | Operand::MSX
            ) {
                let m = p.maps.get((i.imm & 0xffff) as usize)?;
                let ni = m.keys.iter().filter(|a| **a == ArgKind::Int).count();
                return Some((ni, m.keys.len() - ni));
            }
            if info.imm == Operand::FN {
                let f = p.func_of(u32::try_from(i.imm).ok()?)?;
                return Some((usize::from(f.nparams), usize::from(f.nsparams)));
            }
            let f = p.formats.get(i.imm as usize)?;
            let ni = f.args.iter().filter(|a| **a == ArgKind::Int).count();
            Some((ni, f.args.len() - ni))
        };
        for (kind, v) in [(info.a, i.a), (info.b, i.b), (info.c, i.c)] {
            let v = u32::from(v);
            match kind {
                Operand::NO if v != 0 => return Err(format!("BAD_OPERAND at {pc}")),
                Operand::RR | Operand::RW | Operand::RM if v >= u32::from(h.nregs) => {
                    return Err(format!("BAD_REGISTER r{v} at {pc}"))
                }
                Operand::SR | Operand::SW if v >= u32::from(h.nsregs) => {
                    return Err(format!("BAD_REGISTER s{v} at {pc}"))
                }
                Operand::RN | Operand::SN => {
                    let (ni, ns) = fmt_counts().ok_or(format!("BAD_INDEX fmt at {pc}"))?;
                    let (cnt, lim, set) = if kind == Operand::RN {
                        (ni as u32, u32::from(h.nregs), wr)
                    } else {
                        (ns as u32, u32::from(h.nsregs), u64::from(ws))
                    };
                    if cnt == 0 && v != 0 {
                        return Err(format!("BAD_OPERAND empty run at {pc}"));
                    }
                    if v >= lim || v + cnt > lim {
                        return Err(format!("BAD_REGISTER run at {pc}"));
                    }
                    for r in v..v + cnt {
                        if set & (1u64 << r) == 0 {
                            return Err(format!("UNINIT_REGISTER run reg {r} at {pc}"));
                        }
                    }
                }
                _ => {}
            }
        }
        // Reads before writes (an instruction reads its inputs first).
        let helper = if info.imm == Operand::HLP {
            Some(
                HELPERS
                    .get(i.imm as usize)
                    .ok_or(format!("BAD_INDEX hlp at {pc}"))?,
            )
        } else {
            None
        };
        for (kind, v) in [(info.a, i.a), (info.b, i.b), (info.c, i.c)] {
            let needs_int_read = (kind == Operand::RR || kind == Operand::RM)
                && !(helper.is_some_and(|h| h.arg == HelperArg::NONE) && v == i.b);
            if needs_int_read && wr & (1u64 << v) == 0 {
                return Err(format!("UNINIT_REGISTER r{v} at {pc}"));
            }
            if kind == Operand::SR && ws & (1u32 << v) == 0 {
                return Err(format!("UNINIT_REGISTER s{v} at {pc}"));
            }
        }
        if let Some(hl) = helper {
            if hl.arg == HelperArg::NONE && i.b != 0 {
                return Err(format!("BAD_OPERAND helper arg at {pc}"));
            }
            if hl.ctx_mask & (1 << h.ctx) == 0 {
                return Err(format!("BAD_CONTEXT at {pc}"));
            }
        }
        for (kind, v) in [(info.a, i.a), (info.b, i.b), (info.c, i.c)] {
            match kind {
                Operand::RW | Operand::RM => wr |= 1u64 << v,
                Operand::SW => ws |= 1u32 << v,
                Operand::RNW | Operand::SNW => {
                    let (ni, ns) = fmt_counts().ok_or(format!("BAD_INDEX map at {pc}"))?;
                    if kind == Operand::RNW {
                        for r in v..v + ni as u8 {
                            wr |= 1u64 << r;
                        }
                    } else {
                        for r in v..v + ns as u8 {
                            ws |= 1u32 << r;
                        }
                    }
                }
                _ => {}
            }
        }
        let idx_ok = |len: usize| (i.imm as usize) < len && i.imm >= 0;
        let target = pc as i64 + 1 + i64::from(i.imm);
        match info.imm {
            Operand::NO if i.imm != 0 => return Err(format!("BAD_OPERAND imm at {pc}")),
            Operand::JF if i.imm < 0 || target >= n as i64 => {
                return Err(format!("BAD_JUMP at {pc}"))
            }
            Operand::JB if i.imm >= 0 || target < 0 => return Err(format!("BAD_JUMP at {pc}")),
            Operand::K if !idx_ok(p.konsts.len()) => return Err(format!("BAD_INDEX k at {pc}")),
            Operand::STR if !idx_ok(p.strings.len()) => {
                return Err(format!("BAD_INDEX str at {pc}"))
            }
            Operand::GLB if !idx_ok(p.globals.len()) => {
                return Err(format!("BAD_INDEX glb at {pc}"))
            }
            Operand::FMT if !idx_ok(p.formats.len()) => {
                return Err(format!("BAD_INDEX fmt at {pc}"))
            }
            Operand::STAT if !idx_ok(p.stats.len()) => {
                return Err(format!("BAD_INDEX stat at {pc}"))
            }
            _ => {}
        }
        let op = u32::from(i.op);
        if info.imm == Operand::JF {
            meet(&mut state[target as usize], (wr, ws));
        }
        if op != abi::STP_OP_JMP && op != abi::STP_OP_RET && op != abi::STP_OP_LOOP {
            meet(&mut state[pc + 1], (wr, ws));
        }
    }
    Ok(())
}

/// Builds the kernel image with dummy symbols (the first candidate of each
/// probe target), as the loader would, and runs the C verifier (the code
/// stapvm.ko runs on LOAD) on it; panics if it refuses.
pub fn image(p: &Program) -> Vec<u8> {
    let img = image_unverified(p);
    if let Err(e) = vm_spec::core::verify_image(&img) {
        panic!(
            "C verifier: {} ({}) at {}\n{:#?}",
            e.message,
            e.name,
            e.at,
            p.handlers.iter().map(disasm).collect::<Vec<_>>()
        );
    }
    img
}

/// The image without the verifier.
pub fn image_unverified(p: &Program) -> Vec<u8> {
    use vm_spec::program::ProbeTarget;
    let syms: Vec<Option<(String, u32)>> = p
        .probes
        .iter()
        .map(|pr| match &pr.target {
            ProbeTarget::None => None,
            // A pattern (`vfs_*`, `m:f*`): the loader expands it; any
            // function stands in for its matches.
            ProbeTarget::Symbol { name, .. } if name.contains(['*', '?']) => {
                Some(("vfs_read".into(), 0))
            }
            ProbeTarget::Symbol { name, offset } => Some((name.clone(), *offset)),
            ProbeTarget::FirstOf(v) => v.first().map(|s| (s.clone(), 0)),
        })
        .collect();
    vm_spec::image::build(p, &syms).expect("image")
}
