//! The disassembler: renders a `Program` (or one instruction of it) as text,
//! one instruction per line. Every operand is printed from its kind in
//! `tables::OPCODES` (and helper operands from `tables::HELPERS`), so no
//! opcode is named here by hand: a new opcode in opcodes.h disassembles as
//! soon as it is in the table.
//!
//! Line format (`disassemble`): `  PPPP  NAME     operands   ; line:col`,
//! e.g. `  0003  ADD      r2, r0, r1`, `  0004  SLDK     s0, str#1 "hello"`,
//! `  0007  PRINTF   fmt#0 "%s (%d) open\n", r0.., s0..`,
//! `  0002  JZ       r0, -> 0006`, `  0005  CALLS    s0, EXECNAME`.
use crate::abi;
use crate::limits::LIMITS;
use crate::program::{
    ArgKind, Global, GlobalType, Insn, MapValue, ProbeTarget, Program, RelocKind, TargetSite,
    TargetVar,
};
use crate::tables::{HelperArg, Operand, HELPERS, OPCODES};
use std::fmt::Write as _;

/// Column width of the mnemonic (names are padded to it).
const NAME_WIDTH: usize = 8;
/// Column at which the source location comment starts.
const LOC_COLUMN: usize = 48;

/// The `regexes` listing: each DFA's size and, for REMATCHS, its group
/// program (abi.h: `STP_RX_*`) one instruction per line.
fn regexes(out: &mut String, prog: &Program) {
    let _ = writeln!(out, "\nregexes ({}):", prog.regexes.len());
    for (i, rx) in prog.regexes.iter().enumerate() {
        let _ = writeln!(
            out,
            "  rx#{i:<5} {}  [{} states, {} classes]",
            quote(&rx.pattern),
            rx.nstates(),
            rx.nclasses
        );
        let Some(g) = &rx.groups else { continue };
        let _ = writeln!(
            out,
            "           groups: {} ({} slots), {} instructions, {} sets",
            g.ngroups(),
            g.nslots,
            g.insns.len(),
            g.sets.len()
        );
        for (pc, &w) in g.insns.iter().enumerate() {
            let (op, arg) = crate::program::rx_decode(w);
            let text = match op {
                abi::STP_RX_SET => format!("SET    set{arg}"),
                abi::STP_RX_JMP => format!("JMP    {arg}"),
                abi::STP_RX_SPLIT => format!("SPLIT  {}, {arg}", pc + 1),
                abi::STP_RX_SAVE => format!("SAVE   slot{arg}"),
                abi::STP_RX_BOL => "BOL".to_string(),
                abi::STP_RX_EOL => "EOL".to_string(),
                abi::STP_RX_MATCH => "MATCH".to_string(),
                _ => format!("?{op}   {arg}"),
            };
            let _ = writeln!(out, "           {pc:04}  {text}");
        }
    }
}

/// Quotes bytes as a double-quoted, escaped string (`"a\n\"b\x01"`).
pub fn quote(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for &b in bytes {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out.push('"');
    out
}

/// The name of a probe kind (`abi::STP_PROBE_*`, `tables::PROBE_KINDS`).
pub fn probe_kind_name(kind: u8) -> String {
    match crate::tables::PROBE_KINDS.get(usize::from(kind)) {
        Some(k) => k.name.into(),
        None => format!("kind#{kind}?"),
    }
}

/// The name of a probe context (`abi::STP_CTX_*`).
pub fn ctx_name(ctx: u8) -> String {
    match u32::from(ctx) {
        abi::STP_CTX_BEGIN => "begin".into(),
        abi::STP_CTX_END => "end".into(),
        abi::STP_CTX_TIMER => "timer".into(),
        abi::STP_CTX_KPROBE => "kprobe".into(),
        abi::STP_CTX_KRETPROBE => "kretprobe".into(),
        abi::STP_CTX_PROCFS_READ => "procfs_read".into(),
        abi::STP_CTX_PROCFS_WRITE => "procfs_write".into(),
        abi::STP_CTX_NETFILTER => "netfilter".into(),
        abi::STP_CTX_UPROBE => "uprobe".into(),
        abi::STP_CTX_URETPROBE => "uretprobe".into(),
        abi::STP_CTX_FUNCTION => "function".into(),
        c => format!("ctx#{c}?"),
    }
}

/// Absolute target of a jump at `pc` with offset `imm` (`pc + 1 + imm`).
fn jump_target(pc: usize, imm: i32) -> i64 {
    pc as i64 + 1 + i64::from(imm)
}

/// Formats an unsigned table index together with the entry it names.
fn table_ref<T>(prefix: &str, imm: i32, table: &[T], show: impl Fn(&T) -> String) -> String {
    match usize::try_from(imm).ok().and_then(|i| table.get(i)) {
        Some(entry) => format!("{prefix}#{imm} {}", show(entry)),
        None => format!("{prefix}#{imm} <out of range>"),
    }
}

/// Formats the helper operand of CALLI/CALLS: `EXECNAME`, or `ARG(r0)` when
/// the helper takes the integer register `b` as its argument.
fn helper_ref(imm: i32, b: u8) -> String {
    match usize::try_from(imm).ok().and_then(|i| HELPERS.get(i)) {
        Some(h) if h.arg == HelperArg::INT => format!("{}(r{b})", h.name),
        Some(h) if h.arg == HelperArg::STR => format!("{}(s{b})", h.name),
        Some(h) => h.name.to_string(),
        None => format!("hlp#{imm} <out of range>"),
    }
}

/// Formats one register-field operand (a, b or c) by its kind; `None` for
/// an unused operand.
fn reg_operand(kind: Operand, v: u8) -> Option<String> {
    match kind {
        Operand::RW | Operand::RR | Operand::RM => Some(format!("r{v}")),
        Operand::SW | Operand::SR => Some(format!("s{v}")),
        Operand::RN | Operand::RNW => Some(format!("r{v}..")),
        Operand::SN | Operand::SNW => Some(format!("s{v}..")),
        Operand::SORT => Some(match (v & 15, v & 0x80 != 0) {
            (0, _) => "unsorted".to_string(),
            (15, d) => {
                // An extractor order of a statistics array (opcodes.h SORT).
                let x = match u32::from(v >> 4) & 7 {
                    abi::STP_SORTX_COUNT => "",
                    abi::STP_SORTX_SUM => " @sum",
                    abi::STP_SORTX_MIN => " @min",
                    abi::STP_SORTX_MAX => " @max",
                    abi::STP_SORTX_AVG => " @avg",
                    _ => " @?",
                };
                format!("value{x}{}", if d { "-" } else { "+" })
            }
            (c, d) => format!("key{}{}", c - 1, if d { "-" } else { "+" }),
        }),
        Operand::RP => Some(format!("r{v}:r{}", u32::from(v) + 1)),
        Operand::SP => Some(format!("s{v}:s{}", u32::from(v) + 1)),
        // Table kinds in a register field do not occur in the ISA; print
        // the raw value so nothing is hidden.
        Operand::NO => None,
        _ => Some(format!("{v}")),
    }
}

/// Formats the immediate by its kind; `None` when unused.
fn imm_operand(kind: Operand, insn: &Insn, prog: &Program, pc: usize) -> Option<String> {
    let imm = insn.imm;
    Some(match kind {
        Operand::NO => return None,
        Operand::IMM => format!("{imm}"),
        Operand::JF | Operand::JB => format!("-> {:04}", jump_target(pc, imm)),
        Operand::K => table_ref("k", imm, &prog.konsts, |k| format!("{k}")),
        Operand::STR => table_ref("str", imm, &prog.strings, |s| quote(s)),
        Operand::GLB => table_ref("glb", imm, &prog.globals, |g| g.name.clone()),
        Operand::FMT => table_ref("fmt", imm, &prog.formats, |f| quote(f.text.as_bytes())),
        Operand::HLP => helper_ref(imm, insn.b),
        Operand::FN => match u32::try_from(imm).ok().and_then(|h| prog.func_of(h)) {
            Some(f) => format!("fn#{imm} {}", f.name),
            None => format!("fn#{imm}?"),
        },
        Operand::STAT => table_ref("stat", imm, &prog.stats, |st| st.name.clone()),
        Operand::MAP => table_ref("map", imm, &prog.maps, |m| m.name.clone()),
        Operand::RX => table_ref("rx", imm, &prog.regexes, |r| quote(&r.pattern)),
        Operand::MOP | Operand::MIT | Operand::MSX => {
            let id = i32::from(crate::tables::imm_lo(imm));
            let x = crate::tables::imm_hi(imm);
            let m = table_ref("map", id, &prog.maps, |m| m.name.clone());
            if kind == Operand::MIT {
                format!("{m} it{x}")
            } else {
                let op = crate::tables::OPCODES
                    .get(usize::from(x))
                    .map_or("?", |o| o.name);
                format!("{m} {op}")
            }
        }
        // A register kind in the immediate does not occur in the ISA.
        _ => format!("{imm}"),
    })
}

/// Disassembles one instruction at `pc` (index inside its handler): the
/// mnemonic padded to a column, then the operands, each formatted from its
/// kind in `OPCODES`. Table operands are annotated with the entry they name;
/// jumps show their absolute target. Unused operands that are not zero (which
/// the verifier refuses) are shown as `!a=N`.
pub fn insn(insn: &Insn, prog: &Program, pc: usize) -> String {
    let Some(info) = OPCODES.get(usize::from(insn.op)) else {
        return format!(
            "{:<w$} op={} a={} b={} c={} imm={}",
            "???",
            insn.op,
            insn.a,
            insn.b,
            insn.c,
            insn.imm,
            w = NAME_WIDTH
        );
    };
    let mut ops: Vec<String> = Vec::with_capacity(4);
    let mut bad: Vec<String> = Vec::new();
    // A helper call consumes b itself (as its argument, or not at all).
    let b_in_helper = info.imm == Operand::HLP;
    // Run operands (RN/SN) are arguments of the table entry: name it first.
    let runs = [info.a, info.b, info.c]
        .iter()
        .any(|k| matches!(k, Operand::RN | Operand::SN));
    let imm = imm_operand(info.imm, insn, prog, pc);
    if runs {
        ops.extend(imm.clone());
    }
    for (field, kind, v) in [
        ('a', info.a, insn.a),
        ('b', info.b, insn.b),
        ('c', info.c, insn.c),
    ] {
        if field == 'b' && b_in_helper && kind == Operand::RR {
            continue;
        }
        match reg_operand(kind, v) {
            Some(s) => ops.push(s),
            None if v != 0 => bad.push(format!("!{field}={v}")),
            None => {}
        }
    }
    if !runs {
        ops.extend(imm);
    }
    if info.imm == Operand::NO && insn.imm != 0 {
        bad.push(format!("!imm={}", insn.imm));
    }
    ops.extend(bad);
    let line = format!("{:<w$} {}", info.name, ops.join(", "), w = NAME_WIDTH);
    line.trim_end().to_string()
}

/// One instruction in the compact form the compiler's lowering tests
/// compare against (no program needed, no annotations): `LDI r0, 5`,
/// `JZ r1, ->7`, `PRINTF r0, s0, fmt0`, `CALLI r1, r0, PID`. Register
/// operands read or written singly or as a run print as `rN`/`sN` (the
/// other register kinds are left out), then the immediate: a number, a
/// jump's absolute target, `kN`, `strN`, `gN`, `fmtN` or the helper's name
/// (other immediate kinds are left out).
pub fn compact(insn: &Insn, pc: usize) -> String {
    let Some(info) = OPCODES.get(usize::from(insn.op)) else {
        return format!("op{}", insn.op);
    };
    let mut ops = Vec::new();
    for (kind, v) in [(info.a, insn.a), (info.b, insn.b), (info.c, insn.c)] {
        match kind {
            Operand::RW | Operand::RR | Operand::RN => ops.push(format!("r{v}")),
            Operand::SW | Operand::SR | Operand::SN => ops.push(format!("s{v}")),
            _ => {}
        }
    }
    let imm = insn.imm;
    match info.imm {
        Operand::IMM => ops.push(imm.to_string()),
        Operand::JF | Operand::JB => ops.push(format!("->{}", jump_target(pc, imm))),
        Operand::K => ops.push(format!("k{imm}")),
        Operand::STR => ops.push(format!("str{imm}")),
        Operand::GLB => ops.push(format!("g{imm}")),
        Operand::FMT => ops.push(format!("fmt{imm}")),
        Operand::HLP => ops.push(
            usize::try_from(imm)
                .ok()
                .and_then(|i| HELPERS.get(i))
                .map_or_else(|| format!("hlp{imm}"), |h| h.name.to_string()),
        ),
        _ => {}
    }
    if ops.is_empty() {
        info.name.to_string()
    } else {
        format!("{} {}", info.name, ops.join(", "))
    }
}

/// Describes a probe target (`-`, `vfs_read+0x10`, `first of a, b`).
fn target_text(t: &ProbeTarget) -> String {
    match t {
        ProbeTarget::None => "-".into(),
        ProbeTarget::Symbol { name, offset: 0 } => name.clone(),
        ProbeTarget::Symbol { name, offset } => format!("{name}+{offset:#x}"),
        ProbeTarget::FirstOf(list) => format!("first of {}", list.join(", ")),
        ProbeTarget::Address(a) => format!("address {a:#x}"),
        ProbeTarget::User {
            path,
            library,
            site,
        } => {
            let lib = library
                .as_ref()
                .map(|l| format!(" library {l}"))
                .unwrap_or_default();
            match site {
                crate::program::UserSite::Function(f) => format!("{path}{lib} function {f}"),
                crate::program::UserSite::Address(a) => format!("{path}{lib} address {a:#x}"),
                crate::program::UserSite::Mark { provider, name } => format!(
                    "{path}{lib} mark {}{name}",
                    provider
                        .as_ref()
                        .map(|p| format!("{p}:"))
                        .unwrap_or_default()
                ),
            }
        }
        ProbeTarget::Statement { spec, nearest } => {
            format!("statement {spec}{}", if *nearest { " nearest" } else { "" })
        }
        ProbeTarget::File { name, mode } => format!("file {name} mode {mode:#o}"),
        ProbeTarget::Process { path, pid, event } => {
            let what = match *event {
                abi::STP_PROC_BEGIN => "begin",
                abi::STP_PROC_END => "end",
                abi::STP_PROC_THREAD_BEGIN => "thread begin",
                abi::STP_PROC_THREAD_END => "thread end",
                _ => "?",
            };
            match (path.is_empty(), *pid) {
                (true, 0) => format!("process {what}"),
                (true, pid) => format!("process {pid} {what}"),
                (false, _) => format!("process {path} {what}"),
            }
        }
    }
}

/// What the loader writes into a relocated constant of target variable
/// `tv` (see `RelocKind`).
fn reloc_text(tv: &TargetVar, kind: RelocKind) -> String {
    let field = |n: u32| {
        n.checked_sub(1)
            .and_then(|i| tv.fields.get(i as usize))
            .map_or_else(|| "?".to_string(), |f| step_text(f))
    };
    match kind {
        RelocKind::ArgIndex => format!("argument slot of ${}", tv.name),
        RelocKind::Offset(0) => {
            "step 0 offset (the pt_regs register of a syscall argument, else 0)".into()
        }
        RelocKind::Deref(0) => "step 0 reads memory (1: a pt_regs register, else 0)".into(),
        RelocKind::Offset(n) => format!("byte offset of {} in its struct/union", field(n)),
        RelocKind::Deref(n) => format!(
            "{} reads memory (1: pointer or scalar member, 0: embedded struct/union)",
            field(n)
        ),
        RelocKind::Shift => {
            "left shift (64 - bits for a narrow signed value, 64 - bit - bits for a bitfield, else 0)"
                .into()
        }
        RelocKind::RShift => {
            "arithmetic right shift (the left shift, or 64 - bits for a bitfield)".into()
        }
        RelocKind::Mask => {
            "zero-extension mask (2^bits - 1 for a narrow unsigned value, else -1)".into()
        }
        RelocKind::Exists => "@defined: 1 if the kernel's BTF has it, else 0".into(),
        RelocKind::ElemSize(n) => format!("element size of {} (bytes per index)", field(n)),
        RelocKind::SymAddr => format!("address of kernel symbol {} (kallsyms)", tv.name),
        RelocKind::Pretty { .. } => "PRETTY type node of its value (BTF; none: \"?\")".into(),
    }
}

/// One step of a target variable's chain as written: `->member`, or `[i]`
/// for an index step (`[]` in `TargetVar::fields`).
fn step_text(f: &str) -> String {
    if f == "[]" {
        "[i]".to_string()
    } else {
        format!("->{f}")
    }
}

/// konst index -> the target variable it is relocated for.
fn relocated_konsts(prog: &Program) -> std::collections::HashMap<usize, usize> {
    let mut m = std::collections::HashMap::new();
    for (i, tv) in prog.target_vars.iter().enumerate() {
        for r in &tv.relocs {
            m.insert(r.konst as usize, i);
        }
    }
    m
}

/// The target variables and their relocations: which constant the loader
/// fills in from BTF and what it becomes.
fn target_vars(out: &mut String, prog: &Program) {
    if prog.target_vars.is_empty() {
        return;
    }
    let _ = writeln!(out, "\ntarget variables ({}):", prog.target_vars.len());
    for (i, tv) in prog.target_vars.iter().enumerate() {
        let site = match &tv.site {
            TargetSite::Function(f) => format!("parameter of {f}"),
            TargetSite::Syscall(s) => format!("argument of syscall {s}"),
            TargetSite::Netfilter => "argument of a netfilter hook".into(),
            TargetSite::Cast(t) => format!("@cast to {t}"),
            TargetSite::Var(v) => format!("kernel variable {v}"),
        };
        let chain: String = tv.fields.iter().map(|f| step_text(f)).collect();
        let var = match &tv.site {
            TargetSite::Cast(t) => format!("@cast(..., \"{t}\")"),
            TargetSite::Var(v) => format!("@var(\"{v}\")"),
            _ => format!("${}", tv.name),
        };
        let var = if tv.addr_of { format!("&{var}") } else { var };
        // A @cast may sit in a function: no handler or probe point.
        let user = match tv.handler {
            u32::MAX => "in a function".to_string(),
            h => format!("handler#{h}, {}", tv.probe_point),
        };
        let _ = writeln!(
            out,
            "  tv#{i:<5} {var}{chain}  [{site}; {user} at {}:{}]",
            tv.loc.line, tv.loc.col
        );
        for r in &tv.relocs {
            let v = prog.konsts.get(r.konst as usize).copied();
            let v = v.map_or_else(|| "out of range".to_string(), |v| v.to_string());
            let _ = writeln!(
                out,
                "    k#{:<6} = {v:<6} {}",
                r.konst,
                reloc_text(tv, r.kind)
            );
        }
    }
}

/// Disassembles a whole program: header information, limits, tables, the
/// probes and every handler's code (one instruction per line, with its
/// source location when known).
pub fn disassemble(prog: &Program) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "source:    {}", prog.source_name);
    let _ = writeln!(out, "compiler:  {}", prog.compiler_version);
    let ninsns: usize = prog.handlers.iter().map(|h| h.code.len()).sum();
    let _ = writeln!(
        out,
        "sizes:     {} probes, {} handlers, {} instructions",
        prog.probes.len(),
        prog.handlers.len(),
        ninsns
    );
    let limits: Vec<String> = LIMITS
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let v = prog.limits.get(i).copied().unwrap_or(l.default);
            format!("{}={v}", l.name)
        })
        .collect();
    let _ = writeln!(out, "limits:    {}", limits.join(" "));

    let _ = writeln!(out, "\nglobals ({}):", prog.globals.len());
    for (i, g) in prog.globals.iter().enumerate() {
        let at_exit = if g.print_at_exit {
            " (printed at exit)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  glb#{i:<4} {} {}{at_exit}",
            g.name,
            global_type(prog, g)
        );
    }
    let _ = writeln!(out, "\nstrings ({}):", prog.strings.len());
    for (i, s) in prog.strings.iter().enumerate() {
        let _ = writeln!(out, "  str#{i:<4} {}", quote(s));
    }
    let _ = writeln!(out, "\nkonsts ({}):", prog.konsts.len());
    let relocated = relocated_konsts(prog);
    for (i, k) in prog.konsts.iter().enumerate() {
        match relocated.get(&i) {
            Some(tv) => {
                let _ = writeln!(out, "  k#{i:<6} {k} ({k:#x})  [relocated: tv#{tv}]");
            }
            None => {
                let _ = writeln!(out, "  k#{i:<6} {k} ({k:#x})");
            }
        }
    }
    target_vars(&mut out, prog);
    if !prog.pretty.is_empty() {
        let _ = writeln!(out, "\npretty nodes ({}):", prog.pretty.len());
        for (i, n) in prog.pretty.iter().enumerate() {
            let name = match n.name {
                abi::STP_PRETTY_NAME_NONE => "-".to_string(),
                abi::STP_PRETTY_NAME_UNION => "<union>".to_string(),
                abi::STP_PRETTY_NAME_STRUCT => "<class>".to_string(),
                s => prog
                    .strings
                    .get(s as usize)
                    .map_or_else(|| format!("str#{s}?"), |b| quote(b)),
            };
            let _ = writeln!(
                out,
                "  pp#{i:<5} {name} +{} kind={} size={} bits={}:{} children={}+{}",
                n.offset, n.kind, n.size, n.bit_off, n.bit_size, n.first, n.count
            );
        }
    }
    let _ = writeln!(out, "\nformats ({}):", prog.formats.len());
    for (i, f) in prog.formats.iter().enumerate() {
        let kinds: Vec<&str> = f
            .args
            .iter()
            .map(|k| match k {
                ArgKind::Int => "int",
                ArgKind::Str => "str",
            })
            .collect();
        let _ = writeln!(
            out,
            "  fmt#{i:<4} {} ({})",
            quote(f.text.as_bytes()),
            kinds.join(", ")
        );
    }
    if !prog.regexes.is_empty() {
        regexes(&mut out, prog);
    }
    let _ = writeln!(out, "\nprobes ({}):", prog.probes.len());
    for (i, p) in prog.probes.iter().enumerate() {
        let mut extra = String::new();
        if u32::from(p.flags) & abi::STP_PROBE_F_OPTIONAL != 0 {
            extra.push_str(" optional");
        }
        if u32::from(p.flags) & !abi::STP_PROBE_F__ALL != 0 {
            let _ = write!(extra, " flags={:#x}", p.flags);
        }
        if let Some(e) = p.perf {
            // perf.*: period_ns is the sample period in events (abi.h)
            let _ = write!(
                extra,
                " perf type={} config={:#x} sample={}",
                e.event_type, e.config, p.period_ns
            );
            if u32::from(p.flags) & abi::STP_PROBE_F_PERF_TASK != 0 {
                let _ = write!(extra, " process={}", e.pid);
            }
        } else if let Some(w) = p.watch {
            let access = if w.rw { "rw" } else { "write" };
            let _ = write!(
                extra,
                " watch {access} length={} address={:#x}",
                w.len, w.address
            );
        } else if let Some(h) = p.netfilter {
            let _ = write!(
                extra,
                " netfilter pf={} hook={} priority={}",
                h.pf, h.hook, h.priority
            );
        } else if u32::from(p.flags) & abi::STP_PROBE_F_JIFFIES != 0 {
            // timer.jiffies(N): period_ns counts jiffies (abi.h)
            let _ = write!(extra, " period={}jiffies", p.period_ns);
        } else if p.period_ns != 0 {
            let _ = write!(extra, " period={}ns", p.period_ns);
        }
        if p.randomize != 0 {
            // timer.UNIT(N).randomize(M): M in the period's unit (abi.h)
            let unit = if u32::from(p.flags) & abi::STP_PROBE_F_JIFFIES != 0 {
                "jiffies"
            } else {
                "ns"
            };
            let _ = write!(extra, " randomize={}{unit}", p.randomize);
        }
        if p.maxactive != 0 {
            let _ = write!(extra, " maxactive={}", p.maxactive);
        }
        if let Some(u) = p.uprobe.as_ref().filter(|u| !u.exe.is_empty()) {
            let _ = write!(extra, " in processes of {}", u.exe);
        }
        let _ = writeln!(
            out,
            "  probe#{i:<3} {}  [{} -> handler#{}, target {}{extra}]",
            p.display,
            probe_kind_name(p.kind),
            p.handler,
            target_text(&p.target)
        );
    }
    for (hi, h) in prog.handlers.iter().enumerate() {
        let _ = writeln!(
            out,
            "\nhandler#{hi} {} (ctx {}, {} regs, {} sregs, {} insns):",
            h.probe_point,
            ctx_name(h.ctx),
            h.nregs,
            h.nsregs,
            h.code.len()
        );
        for (pc, ins) in h.code.iter().enumerate() {
            let mut line = format!("  {pc:04}  {}", insn(ins, prog, pc));
            if let Some(loc) = h.locs.get(pc).filter(|l| l.line != 0) {
                let pad = LOC_COLUMN.saturating_sub(line.len()).max(1);
                let _ = write!(line, "{:pad$}; {}:{}", "", loc.line, loc.col);
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// A global's type as stap names it: `long`, `string`, `stat` (a
/// statistic), or an array's value type and key types (`long[string,
/// long]`, `stat[long]`). Arrays and statistics are found by name in the
/// program's maps and stats (a string scalar's one-entry map is not an
/// array).
fn global_type(prog: &Program, g: &Global) -> String {
    let name = |k: &ArgKind| match k {
        ArgKind::Int => "long",
        ArgKind::Str => "string",
    };
    if g.ty == GlobalType::Str {
        return "string".into();
    }
    if let Some(m) = prog.maps.iter().find(|m| m.name == g.name) {
        let value = match m.value {
            MapValue::Long => "long",
            MapValue::Str => "string",
            MapValue::Stat => "stat",
        };
        let keys: Vec<&str> = m.keys.iter().map(name).collect();
        return format!("{value}[{}]", keys.join(", "));
    }
    if prog.stats.iter().any(|st| st.name == g.name) {
        return "stat".into();
    }
    "long".into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::*;
    use crate::tables::HelperRes;

    fn sample() -> Program {
        Program {
            source_name: "x.stp".into(),
            compiler_version: "test".into(),
            limits: default_limits(),
            globals: vec![Global {
                name: "count".into(),
                ty: GlobalType::Long,
                print_at_exit: true,
            }],
            strings: vec![b"a".to_vec(), b"hello\n".to_vec()],
            konsts: vec![1 << 40],
            formats: vec![Format {
                text: "%s (%d) open\n".into(),
                args: vec![ArgKind::Str, ArgKind::Int],
            }],
            handlers: vec![Handler {
                ctx: abi::STP_CTX_KPROBE as u8,
                nregs: 3,
                nsregs: 1,
                code: vec![
                    Insn::new(abi::STP_OP_LDI, 0, 0, 0, 5),
                    Insn::new(abi::STP_OP_LDK, 1, 0, 0, 0),
                    Insn::new(abi::STP_OP_ADD, 2, 0, 1, 0),
                    Insn::new(abi::STP_OP_JZ, 2, 0, 0, 2),
                    Insn::new(abi::STP_OP_SLDK, 0, 0, 0, 1),
                    Insn::new(abi::STP_OP_CALLS, 0, 0, 0, abi::STP_HLP_EXECNAME as i32),
                    Insn::new(abi::STP_OP_PRINTF, 0, 0, 0, 0),
                    Insn::new(abi::STP_OP_RET, 0, 0, 0, 0),
                ],
                locs: vec![SrcLoc { line: 3, col: 10 }; 8],
                probe_point: "syscall.open".into(),
            }],
            probes: vec![Probe {
                kind: abi::STP_PROBE_KPROBE as u8,
                flags: abi::STP_PROBE_F_OPTIONAL as u8,
                handler: 0,
                target: ProbeTarget::FirstOf(vec!["__x64_sys_open".into(), "sys_open".into()]),
                maxactive: 0,
                period_ns: 0,
                randomize: 0,
                perf: None,
                watch: None,
                netfilter: None,
                uprobe: None,
                display: "syscall.open".into(),
            }],
            ..Default::default()
        }
    }

    #[test]
    fn every_opcode_disassembles_with_its_name() {
        let prog = sample();
        for (op, info) in OPCODES.iter().enumerate() {
            let i = Insn {
                op: op as u8,
                ..Default::default()
            };
            let text = insn(&i, &prog, 0);
            assert!(
                text.starts_with(info.name),
                "{} disassembled as {text:?}",
                info.name
            );
            let name_end = text.split_whitespace().next().unwrap();
            assert_eq!(name_end, info.name);
        }
    }

    #[test]
    fn operands_are_formatted_by_kind() {
        let p = sample();
        let d = |op, a, b, c, imm, pc| insn(&Insn::new(op, a, b, c, imm), &p, pc);
        assert_eq!(d(abi::STP_OP_ADD, 2, 0, 1, 0, 3), "ADD      r2, r0, r1");
        assert_eq!(d(abi::STP_OP_LDI, 4, 0, 0, -7, 0), "LDI      r4, -7");
        assert_eq!(
            d(abi::STP_OP_LDK, 1, 0, 0, 0, 0),
            "LDK      r1, k#0 1099511627776"
        );
        assert_eq!(
            d(abi::STP_OP_SLDK, 0, 0, 0, 1, 0),
            "SLDK     s0, str#1 \"hello\\n\""
        );
        assert_eq!(
            d(abi::STP_OP_PRINTF, 0, 0, 0, 0, 0),
            "PRINTF   fmt#0 \"%s (%d) open\\n\", r0.., s0.."
        );
        assert_eq!(
            d(abi::STP_OP_CALLS, 0, 0, 0, abi::STP_HLP_EXECNAME as i32, 0),
            "CALLS    s0, EXECNAME"
        );
        assert_eq!(
            d(abi::STP_OP_CALLI, 1, 3, 0, abi::STP_HLP_ARG as i32, 0),
            "CALLI    r1, ARG(r3)"
        );
        assert_eq!(d(abi::STP_OP_JZ, 2, 0, 0, 2, 3), "JZ       r2, -> 0006");
        assert_eq!(d(abi::STP_OP_LOOP, 0, 0, 0, -4, 9), "LOOP     -> 0006");
        assert_eq!(
            d(abi::STP_OP_STG, 1, 0, 0, 0, 0),
            "STG      r1, glb#0 count"
        );
        assert_eq!(d(abi::STP_OP_SCAT, 0, 1, 2, 0, 0), "SCAT     s0, s1, s2");
        assert_eq!(d(abi::STP_OP_RET, 0, 0, 0, 0, 0), "RET");
    }

    #[test]
    fn bad_instructions_show_everything() {
        let p = sample();
        let d = |op, a, b, c, imm| insn(&Insn::new(op, a, b, c, imm), &p, 0);
        assert_eq!(d(abi::STP_OP_RET, 1, 0, 0, 9), "RET      !a=1, !imm=9");
        assert_eq!(
            d(abi::STP_OP_SLDK, 0, 0, 0, 99),
            "SLDK     s0, str#99 <out of range>"
        );
        assert_eq!(
            d(abi::STP_OP_CALLI, 0, 0, 0, 1000),
            "CALLI    r0, hlp#1000 <out of range>"
        );
        let unknown = insn(
            &Insn {
                op: 250,
                a: 1,
                b: 2,
                c: 3,
                imm: 4,
            },
            &p,
            0,
        );
        assert_eq!(unknown, "???      op=250 a=1 b=2 c=3 imm=4");
    }

    #[test]
    fn helpers_with_an_argument_name_their_register() {
        let p = sample();
        for (id, h) in HELPERS.iter().enumerate() {
            let op = match h.res {
                HelperRes::INT => abi::STP_OP_CALLI,
                HelperRes::STR => abi::STP_OP_CALLS,
            };
            let text = insn(&Insn::new(op, 0, 5, 0, id as i32), &p, 0);
            assert!(text.contains(h.name), "{text}");
            assert_eq!(text.contains("(r5)"), h.arg == HelperArg::INT, "{text}");
        }
    }

    #[test]
    fn globals_are_listed_with_stap_s_type_names() {
        let g = |name: &str, ty| Global {
            name: name.into(),
            ty,
            print_at_exit: false,
        };
        let prog = Program {
            globals: vec![
                g("n", GlobalType::Long),
                g("s", GlobalType::Str),
                g("lat", GlobalType::Long),
                g("a", GlobalType::Long),
                g("by", GlobalType::Long),
            ],
            stats: vec![
                Stat {
                    name: "lat".into(),
                    ..Default::default()
                },
                Stat {
                    name: "by".into(),
                    ..Default::default()
                },
            ],
            maps: vec![
                MapDecl {
                    name: "s".into(),
                    keys: vec![ArgKind::Int],
                    value: MapValue::Str,
                    ..Default::default()
                },
                MapDecl {
                    name: "a".into(),
                    keys: vec![ArgKind::Str, ArgKind::Int],
                    value: MapValue::Str,
                    ..Default::default()
                },
                MapDecl {
                    name: "by".into(),
                    keys: vec![ArgKind::Int],
                    value: MapValue::Stat,
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let text = disassemble(&prog);
        let globals: Vec<&str> = text.lines().filter(|l| l.starts_with("  glb#")).collect();
        assert_eq!(
            globals,
            [
                "  glb#0    n long",
                "  glb#1    s string",
                "  glb#2    lat stat",
                "  glb#3    a string[string, long]",
                "  glb#4    by stat[long]",
            ]
        );
    }

    #[test]
    fn whole_program_listing() {
        let text = disassemble(&sample());
        assert!(text.contains("source:    x.stp"));
        assert!(text.contains("MAXACTION=10000"));
        assert!(text.contains("glb#0    count long (printed at exit)"));
        assert!(text.contains("str#1    \"hello\\n\""));
        assert!(text.contains("fmt#0    \"%s (%d) open\\n\" (str, int)"));
        assert!(text.contains(
            "probe#0   syscall.open  [kprobe -> handler#0, target first of __x64_sys_open, sys_open optional]"
        ));
        assert!(text.contains("handler#0 syscall.open (ctx kprobe, 3 regs, 1 sregs, 8 insns):"));
        let add = text.lines().find(|l| l.contains("ADD")).expect("ADD line");
        assert!(add.starts_with("  0002  ADD      r2, r0, r1"), "{add}");
        assert!(add.ends_with("; 3:10"), "{add}");
        assert!(text.contains("  0007  RET"));
    }

    #[test]
    fn target_variable_relocations_are_listed() {
        let mut p = sample();
        p.konsts = vec![1 << 40, 0, 24, 1];
        p.target_vars = vec![TargetVar {
            name: "file".into(),
            fields: vec!["f_inode".into()],
            handler: 0,
            site: TargetSite::Function("vfs_read".into()),
            probe_point: "kernel.function(\"vfs_read\")".into(),
            loc: SrcLoc { line: 2, col: 7 },
            relocs: vec![
                Reloc {
                    konst: 1,
                    kind: RelocKind::ArgIndex,
                },
                Reloc {
                    konst: 2,
                    kind: RelocKind::Offset(1),
                },
                Reloc {
                    konst: 3,
                    kind: RelocKind::Deref(1),
                },
            ],
            addr_of: false,
            conds: Vec::new(),
        }];
        let text = disassemble(&p);
        assert!(
            text.contains("  k#2      24 (0x18)  [relocated: tv#0]"),
            "{text}"
        );
        assert!(text.contains("target variables (1):\n  tv#0     $file->f_inode  [parameter of vfs_read; handler#0, kernel.function(\"vfs_read\") at 2:7]"), "{text}");
        assert!(
            text.contains("    k#2      = 24     byte offset of ->f_inode in its struct/union"),
            "{text}"
        );
        assert!(
            text.contains("    k#1      = 0      argument slot of $file"),
            "{text}"
        );
        // No section without target variables.
        assert!(!disassemble(&sample()).contains("target variables"));
    }

    #[test]
    fn quote_escapes() {
        assert_eq!(quote(b"a\"b\\\n\x01"), "\"a\\\"b\\\\\\n\\x01\"");
    }
}
