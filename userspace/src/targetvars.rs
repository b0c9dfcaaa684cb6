//! Load-time resolution of target variables (`$file->f_inode->i_ino`)
//! against the running kernel's BTF, CO-RE style: the compiler emitted code
//! that reads through constants (`vm_spec::program::TargetVar`); this fills
//! them in (argument register, member offsets, whether each step reads
//! memory, the width and signedness of the final value) before
//! `image::build`.
//!
//! Syscall probes on the `__x64_sys_NAME(const struct pt_regs *regs)`
//! wrapper read argument i from `regs->{di,si,dx,r10,r8,r9}[i]`; the names
//! and types of the arguments come from `__do_sys_NAME` or `__se_sys_NAME`
//! when BTF has them (they are often inlined), else from a small table of
//! common syscalls.
use crate::btf::{kind, Btf, BtfError, Param};
use thiserror::Error;
use vm_spec::program::{Program, RelocKind, TargetSite, TargetVar};

/// Why a target variable cannot be read on this kernel.
#[derive(Debug, Error)]
pub enum Error {
    /// No BTF: the kernel lacks CONFIG_DEBUG_INFO_BTF.
    #[error("target variables need the kernel's BTF ({path}: {err}); this kernel has no CONFIG_DEBUG_INFO_BTF")]
    NoBtf {
        /// The file tried.
        path: &'static str,
        /// Why it could not be read.
        err: std::io::Error,
    },
    /// The BTF does not parse.
    #[error("cannot use the kernel's BTF: {0}")]
    Btf(#[from] BtfError),
    /// A variable cannot be resolved (the message names probe and variable).
    #[error("{0}")]
    Var(String),
}

/// Marks the symbol of a tracepoint probe for `resolve_var` (no kernel
/// symbol has a space).
const TRACEPOINT_PREFIX: &str = "tracepoint ";

/// Argument registers of the x86-64 syscall ABI, as `struct pt_regs` names
/// them.
const SYSCALL_REGS: [&str; 6] = ["di", "si", "dx", "r10", "r8", "r9"];

/// Argument names of common syscalls, for kernels whose BTF lacks
/// `__do_sys_NAME` / `__se_sys_NAME` (inlined): (syscall, arguments as
/// (name, bytes, signed)).
pub(crate) type SysArgs = (&'static str, &'static [(&'static str, u32, bool)]);
pub(crate) const SYSCALL_TABLE: &[SysArgs] = &[
    (
        "open",
        &[
            ("filename", 8, false),
            ("flags", 4, true),
            ("mode", 2, false),
        ],
    ),
    (
        "openat",
        &[
            ("dfd", 4, true),
            ("filename", 8, false),
            ("flags", 4, true),
            ("mode", 2, false),
        ],
    ),
    ("creat", &[("pathname", 8, false), ("mode", 2, false)]),
    ("close", &[("fd", 4, false)]),
    (
        "read",
        &[("fd", 4, false), ("buf", 8, false), ("count", 8, false)],
    ),
    (
        "write",
        &[("fd", 4, false), ("buf", 8, false), ("count", 8, false)],
    ),
    ("unlink", &[("pathname", 8, false)]),
    (
        "unlinkat",
        &[("dfd", 4, true), ("pathname", 8, false), ("flag", 4, true)],
    ),
    ("mkdir", &[("pathname", 8, false), ("mode", 2, false)]),
    (
        "execve",
        &[
            ("filename", 8, false),
            ("argv", 8, false),
            ("envp", 8, false),
        ],
    ),
    ("kill", &[("pid", 4, true), ("sig", 4, true)]),
    ("exit_group", &[("error_code", 4, true)]),
    ("nanosleep", &[("rqtp", 8, false), ("rmtp", 8, false)]),
];

/// One parameter as the loader sees it: its name, its argument slot and
/// how its final value is shaped.
enum ParamType {
    /// A BTF type id.
    Btf(u32),
    /// From `SYSCALL_TABLE`: bytes and signedness.
    Int(u32, bool),
    /// `@cast`: the value in hand is the address of this BTF type.
    At(u32),
}

/// The value of each relocation of one variable, by kind.
#[derive(Debug, Default, PartialEq, Eq)]
struct Fill {
    arg: i64,
    steps: Vec<(i64, i64)>,
    shift: i64,
    mask: i64,
}

/// Fills every target variable's constants in `prog`. `symbols[i]` is the
/// symbol chosen for `prog.probes[i]`. Reads BTF only when the program has
/// target variables: vmlinux's, and the split BTF of each module a probe
/// is in (`m:f` symbols); an `@cast` type vmlinux lacks is looked for in
/// every loaded module's BTF (`/sys/kernel/btf/*`).
pub fn apply(prog: &mut Program, symbols: &[Option<(String, u32)>]) -> Result<(), Error> {
    if prog.target_vars.is_empty() {
        return Ok(());
    }
    let btf = Btf::vmlinux().map_err(|err| Error::NoBtf {
        path: crate::btf::VMLINUX_BTF,
        err,
    })??;
    let mut names = probe_modules(symbols);
    let cast_missing = prog.target_vars.iter().any(|tv| match &tv.site {
        TargetSite::Cast(t) => find_type(&btf, t).is_none(),
        _ => false,
    });
    if cast_missing {
        if let Ok(dir) = std::fs::read_dir(crate::btf::BTF_DIR) {
            let mut all: Vec<String> = dir
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != "vmlinux" && !names.contains(n))
                .collect();
            all.sort();
            names.extend(all);
        }
    }
    let mut modules = Vec::new();
    for m in names {
        match Btf::module(&btf, &m) {
            Ok(Some(Ok(b))) => modules.push((m, b)),
            Ok(Some(Err(e))) => {
                return Err(Error::Var(format!(
                    "cannot use the BTF of module '{m}' ({}/{m}): {e}",
                    crate::btf::BTF_DIR
                )))
            }
            // Not loaded, or no BTF: its variables report it by name.
            Ok(None) | Err(_) => {}
        }
    }
    apply_modules(prog, symbols, &btf, &modules)
}

/// The modules of the probes' symbols (`m:f`), in order, once each.
fn probe_modules(symbols: &[Option<(String, u32)>]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (s, _) in symbols.iter().flatten() {
        if let (Some(m), _) = crate::kallsyms::split_pattern(s) {
            if !out.iter().any(|o| o == m) {
                out.push(m.to_string());
            }
        }
    }
    out
}

/// `apply` against a given BTF.
pub fn apply_with(
    prog: &mut Program,
    symbols: &[Option<(String, u32)>],
    btf: &Btf,
) -> Result<(), Error> {
    apply_modules(prog, symbols, btf, &[])
}

/// `apply` against vmlinux's BTF and the split BTF of some modules (name,
/// BTF on `btf`).
pub fn apply_modules(
    prog: &mut Program,
    symbols: &[Option<(String, u32)>],
    btf: &Btf,
    modules: &[(String, Btf)],
) -> Result<(), Error> {
    let mut patches = Vec::new();
    // Variables some `@defined` asks about: a use of one that does not
    // resolve is guarded by the script, so it is left at 0, not an error.
    let guarded: Vec<(&TargetSite, &str, &[String])> = prog
        .target_vars
        .iter()
        .filter(|tv| is_exists(tv))
        .map(|tv| (&tv.site, tv.name.as_str(), tv.fields.as_slice()))
        .collect();
    let mut tp_sym;
    for tv in &prog.target_vars {
        let sym = if matches!(tv.site, TargetSite::Cast(_)) {
            // Needs no probe: it may sit in a function.
            ""
        } else {
            // The probe of this handler (dropped optional probes: no code runs).
            let Some(pi) = prog.probes.iter().position(|p| p.handler == tv.handler) else {
                continue;
            };
            let Some(Some((sym, _))) = symbols.get(pi) else {
                continue;
            };
            if u32::from(prog.probes[pi].kind) == vm_spec::abi::STP_PROBE_TRACEPOINT {
                // A tracepoint's arguments are named by the kernel's BPF
                // wrapper `__bpf_trace_CLASS(void *__data, <prototype>)`
                // (`Btf::tracepoint_params`).
                tp_sym = format!("{TRACEPOINT_PREFIX}{sym}");
                tp_sym.as_str()
            } else {
                sym.as_str()
            }
        };
        // The BTF the variable is resolved in: its probe's module's, or for
        // an `@cast` whose type vmlinux lacks, the first module that has it.
        let vbtf = match (&tv.site, crate::kallsyms::split_pattern(sym)) {
            (TargetSite::Cast(t), _) if find_type(btf, t).is_none() => modules
                .iter()
                .find(|(_, b)| find_type(b, t).is_some())
                .map_or(btf, |(_, b)| b),
            (TargetSite::Cast(_), _) | (_, (None, _)) => btf,
            (_, (Some(m), _)) => match modules.iter().find(|(n, _)| n == m) {
                Some((_, b)) => b,
                None if is_exists(tv) => {
                    patches.extend(tv.relocs.iter().map(|r| (r.konst as usize, 0)));
                    continue;
                }
                None => {
                    return Err(Error::Var(format!(
                        "probe point '{}': cannot read {} at {}:{}: module '{m}' has no BTF \
                         ({}/{m} is missing: not loaded, or built without CONFIG_DEBUG_INFO_BTF_MODULES)",
                        tv.probe_point,
                        var_text(tv),
                        tv.loc.line,
                        tv.loc.col,
                        crate::btf::BTF_DIR
                    )))
                }
            },
        };
        let fill = match resolve_var(vbtf, tv, sym) {
            Ok(_) if is_exists(tv) => Fill {
                arg: 1,
                ..Fill::default()
            },
            Ok(fill) => fill,
            Err(_) if is_exists(tv) => Fill::default(),
            Err(_) if guarded.contains(&(&tv.site, tv.name.as_str(), tv.fields.as_slice())) => {
                continue;
            }
            Err(e) => return Err(e),
        };
        for r in &tv.relocs {
            let v = match r.kind {
                RelocKind::ArgIndex => fill.arg,
                RelocKind::Offset(n) => fill.steps.get(n as usize).map_or(0, |s| s.0),
                RelocKind::Deref(n) => fill.steps.get(n as usize).map_or(0, |s| s.1),
                RelocKind::Shift => fill.shift,
                RelocKind::Mask => fill.mask,
                // `is_exists`: `arg` holds the answer.
                RelocKind::Exists => fill.arg,
            };
            patches.push((r.konst as usize, v));
        }
    }
    for (k, v) in patches {
        match prog.konsts.get_mut(k) {
            Some(slot) => *slot = v,
            None => {
                return Err(Error::Var(format!(
                    "corrupt program: relocation of constant {k} out of range"
                )))
            }
        }
    }
    Ok(())
}

/// Whether `tv` is an `@defined` question (its only relocation).
fn is_exists(tv: &TargetVar) -> bool {
    tv.relocs.iter().all(|r| r.kind == RelocKind::Exists) && !tv.relocs.is_empty()
}

fn var_text(tv: &TargetVar) -> String {
    let mut s = match tv.site {
        TargetSite::Cast(_) => format!("@cast(..., \"{}\")", tv.name),
        _ => format!("${}", tv.name),
    };
    for f in &tv.fields {
        s.push_str("->");
        s.push_str(f);
    }
    s
}

/// The parameters of function `name` in BTF, or None when BTF lacks it.
fn func_params(btf: &Btf, name: &str) -> Result<Option<Vec<Param>>, Error> {
    match btf.find_func(name) {
        Some(f) => Ok(Some(btf.params(f)?)),
        None => Ok(None),
    }
}

/// The parameters of function `name`; of several FUNCs of that name, the
/// first with a parameter `want` (a module's BTF has, e.g., a second
/// `nfsd_open` record with `(inode, file)`).
fn func_params_with(btf: &Btf, name: &str, want: &str) -> Result<Option<Vec<Param>>, Error> {
    let mut first = None;
    for f in btf.funcs_named(name) {
        let ps = btf.params(f)?;
        if ps.iter().any(|p| p.name == want) {
            return Ok(Some(ps));
        }
        first.get_or_insert(ps);
    }
    Ok(first)
}

fn param_list(ps: &[Param]) -> String {
    let v: Vec<&str> = ps
        .iter()
        .map(|p| p.name.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// The argument slot of parameter `idx` under the x86-64 SysV convention:
/// each integer-class parameter of at most 8 bytes takes one slot
/// (register, then stack); anything else before or at `idx` is refused.
fn arg_slot(
    btf: &Btf,
    ps: &[Param],
    idx: usize,
    what: &dyn Fn(String) -> Error,
) -> Result<i64, Error> {
    for p in ps.iter().take(idx + 1) {
        let t = btf.skip_mods(p.ty)?;
        let ok = match btf.kind(t)? {
            kind::INT | kind::ENUM | kind::ENUM64 => btf.size(t)? <= 8,
            kind::PTR => true,
            _ => false,
        };
        if !ok {
            return Err(what(format!(
                "parameter '{}' has type {}, which is not passed in one integer register \
                 (struct, float or wider parameters are not supported)",
                p.name,
                btf.type_name(p.ty)
            )));
        }
    }
    Ok(idx as i64)
}

/// Shift and mask that make an `bytes`-byte integer of the given
/// signedness out of a 64-bit value.
fn shape(bytes: u32, signed: bool) -> (i64, i64) {
    let bits = bytes.clamp(1, 8) * 8;
    if bits == 64 {
        (0, -1)
    } else if signed {
        (i64::from(64 - bits), -1)
    } else {
        (0, ((1u64 << bits) - 1) as i64)
    }
}

/// The constants of `tv`. For an `@defined` question only existence
/// matters: a last member that is a bitfield or a struct exists.
fn resolve_var(btf: &Btf, tv: &TargetVar, sym: &str) -> Result<Fill, Error> {
    let exists_only = is_exists(tv);
    let text = var_text(tv);
    let what = |why: String| {
        let at = if tv.probe_point.is_empty() {
            String::new()
        } else {
            format!("probe point '{}': ", tv.probe_point)
        };
        Error::Var(format!(
            "{at}cannot read {} at {}:{}: {why}",
            text, tv.loc.line, tv.loc.col
        ))
    };
    let mut fill = Fill::default();
    let ty: ParamType = match &tv.site {
        TargetSite::Function(f) => {
            let ps = match sym.strip_prefix(TRACEPOINT_PREFIX) {
                // Without `__data`: the module's tracepoint probe puts the
                // tracepoint's own arguments in slots 0.. (kmod/probes.c).
                Some(tp) => btf
                    .tracepoint_params(tp)?
                    .map(|ps| ps.into_iter().skip(1).collect()),
                None => {
                    // A module's function: its name in the module's BTF.
                    let name = match crate::kallsyms::split_pattern(sym) {
                        (Some(_), name) => name,
                        (None, _) => f.as_str(),
                    };
                    func_params_with(btf, name, &tv.name)?
                }
            };
            let ps = ps.ok_or_else(|| {
                what(match sym.strip_prefix(TRACEPOINT_PREFIX) {
                    Some(tp) => format!(
                        "the kernel's BTF has no arguments of tracepoint '{tp}' \
                         (__bpf_trace_{tp}, btf_trace_{tp})"
                    ),
                    None => format!("the kernel's BTF has no function '{f}' (inlined or renamed?)"),
                })
            })?;
            let Some(idx) = ps.iter().position(|p| p.name == tv.name) else {
                return Err(Error::Var(format!(
                    "probe point '{}' has no parameter '{}' (BTF of the running kernel: \
                     parameters are {})",
                    tv.probe_point,
                    tv.name,
                    param_list(&ps)
                )));
            };
            fill.arg = arg_slot(btf, &ps, idx, &what)?;
            fill.steps.push((0, 0));
            ParamType::Btf(ps[idx].ty)
        }
        TargetSite::Syscall(name) => {
            let mut found = None;
            for f in [format!("__do_sys_{name}"), format!("__se_sys_{name}")] {
                if let Some(ps) = func_params(btf, &f)? {
                    found = Some(ps);
                    break;
                }
            }
            let (idx, ty, names) = match &found {
                Some(ps) => (
                    ps.iter().position(|p| p.name == tv.name),
                    ps.iter()
                        .find(|p| p.name == tv.name)
                        .map(|p| ParamType::Btf(p.ty)),
                    param_list(ps),
                ),
                None => match SYSCALL_TABLE.iter().find(|(n, _)| n == name) {
                    Some((_, args)) => (
                        args.iter().position(|a| a.0 == tv.name),
                        args.iter()
                            .find(|a| a.0 == tv.name)
                            .map(|a| ParamType::Int(a.1, a.2)),
                        args.iter().map(|a| a.0).collect::<Vec<_>>().join(", "),
                    ),
                    None => {
                        return Err(what(format!(
                            "the kernel's BTF has no prototype of syscall '{name}' \
                             (__do_sys_{name}, __se_sys_{name})"
                        )))
                    }
                },
            };
            let (Some(idx), Some(ty)) = (idx, ty) else {
                return Err(Error::Var(format!(
                    "probe point '{}' has no parameter '{}' (arguments of syscall {name}: {names})",
                    tv.probe_point, tv.name
                )));
            };
            if sym.starts_with("__x64_sys_") {
                let reg = SYSCALL_REGS
                    .get(idx)
                    .ok_or_else(|| what("more than 6 arguments".into()))?;
                let regs = find_struct(btf, "pt_regs")
                    .ok_or_else(|| what("the kernel's BTF has no struct pt_regs".into()))?;
                let m = btf
                    .member(regs, reg)?
                    .ok_or_else(|| what(format!("struct pt_regs has no member '{reg}'")))?;
                fill.arg = 0;
                fill.steps.push(((m.bit_offset / 8) as i64, 1));
            } else {
                fill.arg = idx as i64;
                fill.steps.push((0, 0));
            }
            ty
        }
        TargetSite::Cast(name) => {
            let id = find_type(btf, name)
                .ok_or_else(|| what(format!("the kernel's BTF has no type '{name}'")))?;
            fill.steps.push((0, 0));
            ParamType::At(id)
        }
    };
    // Walk the member chain. `cur` is the type of the value in hand when
    // `addr` is false, of the struct at the address in hand when true.
    let (mut cur, mut addr) = match ty {
        ParamType::Btf(t) => (Some(t), false),
        ParamType::At(t) => (Some(t), true),
        ParamType::Int(bytes, signed) => {
            if !tv.fields.is_empty() {
                return Err(what(
                    "its type is unknown (no BTF prototype): '->' needs one".into(),
                ));
            }
            (fill.shift, fill.mask) = shape(bytes, signed);
            return Ok(fill);
        }
    };
    for (i, field) in tv.fields.iter().enumerate() {
        let Some(t) = cur else { break };
        let t = btf.skip_mods(t)?;
        let st = if addr {
            t
        } else {
            if btf.kind(t)? != kind::PTR {
                return Err(what(format!(
                    "'->{field}' applied to {} (not a pointer to a struct or union)",
                    btf.type_name(t)
                )));
            }
            btf.skip_mods(btf.referenced(t)?)?
        };
        match btf.kind(st)? {
            kind::STRUCT | kind::UNION => {}
            kind::FWD => {
                return Err(what(format!(
                    "'->{field}': {} is incomplete in BTF",
                    btf.type_name(st)
                )))
            }
            _ => {
                return Err(what(format!(
                    "'->{field}' applied to {} (not a struct or union)",
                    btf.type_name(st)
                )))
            }
        }
        let m = btf
            .member(st, field)?
            .ok_or_else(|| what(format!("{} has no member '{field}'", btf.type_name(st))))?;
        if exists_only && i + 1 == tv.fields.len() {
            return Ok(fill);
        }
        if m.bitfield != 0 || m.bit_offset % 8 != 0 {
            return Err(what(format!(
                "member '{field}' is a bitfield (not supported yet)"
            )));
        }
        let off = i64::try_from(m.bit_offset / 8).map_err(|_| what("offset too large".into()))?;
        let mt = btf.skip_mods(m.ty)?;
        let embedded = matches!(btf.kind(mt)?, kind::STRUCT | kind::UNION | kind::ARRAY);
        fill.steps.push((off, if embedded { 0 } else { 1 }));
        cur = Some(mt);
        addr = embedded;
    }
    if exists_only {
        return Ok(fill);
    }
    let t = btf.skip_mods(cur.unwrap_or(0))?;
    let (bytes, signed) = match btf.kind(t)? {
        // An array is its address, as in stap (`kernel_string($p->comm)`).
        kind::ARRAY if addr => (8, false),
        _ if addr => {
            return Err(what(format!(
                "it is a {}, not a value (structs are not supported yet)",
                btf.type_name(t)
            )))
        }
        kind::PTR => (8, false),
        kind::INT | kind::ENUM | kind::ENUM64 if btf.size(t)? <= 8 => {
            (btf.size(t)?, btf.is_signed(t)?)
        }
        _ => {
            return Err(what(format!(
                "its type {} is not an integer or pointer",
                btf.type_name(t)
            )))
        }
    };
    (fill.shift, fill.mask) = shape(bytes, signed);
    Ok(fill)
}

/// The type `@cast` names: `struct NAME`, `union NAME`, or a bare NAME
/// (a struct, a union or a typedef, in that order of preference).
fn find_type(btf: &Btf, name: &str) -> Option<u32> {
    let name = name.trim();
    let (kinds, bare): (&[u8], &str) = if let Some(n) = name.strip_prefix("struct ") {
        (&[kind::STRUCT], n.trim())
    } else if let Some(n) = name.strip_prefix("union ") {
        (&[kind::UNION], n.trim())
    } else {
        (&[kind::STRUCT, kind::UNION, kind::TYPEDEF], name)
    };
    kinds.iter().find_map(|&k| {
        (1..btf.len() as u32)
            .find(|&id| btf.kind(id).ok() == Some(k) && btf.name(id).ok() == Some(bare))
    })
}

/// The STRUCT named `name`.
fn find_struct(btf: &Btf, name: &str) -> Option<u32> {
    (1..btf.len() as u32)
        .find(|&id| btf.kind(id).ok() == Some(kind::STRUCT) && btf.name(id).ok() == Some(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::btf::tests::sample;
    use vm_spec::program::{Probe, ProbeTarget, Reloc, SrcLoc};

    fn var(name: &str, fields: &[&str], site: TargetSite) -> TargetVar {
        let mut relocs = vec![Reloc {
            konst: 0,
            kind: RelocKind::ArgIndex,
        }];
        let mut k = 1;
        for step in 0..=fields.len() as u32 {
            relocs.push(Reloc {
                konst: k,
                kind: RelocKind::Offset(step),
            });
            relocs.push(Reloc {
                konst: k + 1,
                kind: RelocKind::Deref(step),
            });
            k += 2;
        }
        relocs.push(Reloc {
            konst: k,
            kind: RelocKind::Shift,
        });
        relocs.push(Reloc {
            konst: k + 1,
            kind: RelocKind::Mask,
        });
        TargetVar {
            name: name.into(),
            fields: fields.iter().map(|s| s.to_string()).collect(),
            handler: 0,
            site,
            probe_point: "kernel.function(\"vfs_read\")".into(),
            loc: SrcLoc { line: 1, col: 1 },
            relocs,
        }
    }

    /// One kprobe, on handler 0 (the symbol comes from the test).
    fn one_probe() -> Vec<Probe> {
        vec![Probe {
            kind: 0,
            flags: 0,
            handler: 0,
            target: ProbeTarget::None,
            maxactive: 0,
            period_ns: 0,
            randomize: 0,
            display: String::new(),
        }]
    }

    fn run(tv: TargetVar) -> Result<Vec<i64>, Error> {
        let n = tv.relocs.len();
        let mut prog = Program {
            konsts: vec![0; n],
            target_vars: vec![tv],
            probes: one_probe(),
            ..Default::default()
        };
        let btf = Btf::parse(sample()).unwrap();
        apply_with(&mut prog, &[Some(("vfs_read".into(), 0))], &btf)?;
        Ok(prog.konsts)
    }

    fn f() -> TargetSite {
        TargetSite::Function("vfs_read".into())
    }

    #[test]
    fn parameters_and_chains() {
        // count: slot 2, u64.
        assert_eq!(run(var("count", &[], f())).unwrap(), [2, 0, 0, 0, -1]);
        // pos: slot 3, int: sign-extend 32 bits.
        assert_eq!(run(var("pos", &[], f())).unwrap(), [3, 0, 0, 32, -1]);
        // file->f_inode->i_ino: two reads.
        assert_eq!(
            run(var("file", &["f_inode", "i_ino"], f())).unwrap(),
            [0, 0, 0, 24, 1, 8, 1, 0, -1]
        );
        // file->f_path->dentry: embedded struct, then one read.
        assert_eq!(
            run(var("file", &["f_path", "dentry"], f())).unwrap(),
            [0, 0, 0, 8, 0, 8, 1, 0, -1]
        );
        // Anonymous union member, int: sign-extended.
        assert_eq!(
            run(var("file", &["a"], f())).unwrap(),
            [0, 0, 0, 0, 1, 32, -1]
        );
    }

    /// A module function's parameters and `@cast`s to a module's type come
    /// from the module's split BTF; a module without BTF is named.
    #[test]
    fn module_probes_use_the_modules_btf() {
        let base = Btf::parse(sample()).unwrap();
        let m = Btf::parse_split(&base, crate::btf::tests::split_sample()).unwrap();
        let modules = vec![("nfsd".to_string(), m)];
        let site = || TargetSite::Function("nfsd_dispatch".into());
        let go = |tv: TargetVar, sym: &str, mods: &[(String, Btf)]| {
            let n = tv.relocs.len();
            let mut prog = Program {
                konsts: vec![0; n],
                target_vars: vec![tv],
                probes: one_probe(),
                ..Default::default()
            };
            apply_modules(&mut prog, &[Some((sym.into(), 0))], &base, mods).map(|_| prog.konsts)
        };
        // $rqstp->rq_file->f_inode->i_ino: module struct, then vmlinux's.
        assert_eq!(
            go(
                var("rqstp", &["rq_file", "f_inode", "i_ino"], site()),
                "nfsd:nfsd_dispatch",
                &modules
            )
            .unwrap(),
            [0, 0, 0, 8, 1, 24, 1, 8, 1, 0, -1]
        );
        // $status: slot 1, int.
        assert_eq!(
            go(var("status", &[], site()), "nfsd:nfsd_dispatch", &modules).unwrap(),
            [1, 0, 0, 32, -1]
        );
        // vmlinux alone has no nfsd_dispatch; a module without BTF is named.
        let e = go(var("status", &[], site()), "nfsd:nfsd_dispatch", &[]).unwrap_err();
        assert!(e.to_string().contains("module 'nfsd' has no BTF"), "{e}");
        // @cast(p, "svc_rqst") found in the module, from any probe.
        let c = cast("svc_rqst", &["rq_file"]);
        assert_eq!(
            go(c.clone(), "vfs_read", &modules).unwrap(),
            [0, 0, 8, 1, 0, -1]
        );
        let e = go(c, "vfs_read", &[]).unwrap_err();
        assert!(e.to_string().contains("no type 'svc_rqst'"), "{e}");
    }

    #[test]
    fn errors_name_probe_and_variable() {
        let e = run(var("foo", &[], f())).unwrap_err().to_string();
        assert_eq!(
            e,
            "probe point 'kernel.function(\"vfs_read\")' has no parameter 'foo' \
             (BTF of the running kernel: parameters are file, buf, count, pos)"
        );
        let e = run(var("file", &["nope"], f())).unwrap_err().to_string();
        assert!(
            e.contains("$file->nope") && e.contains("struct file has no member 'nope'"),
            "{e}"
        );
        let e = run(var("file", &["f_flags"], f())).unwrap_err().to_string();
        assert!(e.contains("bitfield"), "{e}");
        let e = run(var("file", &["f_path"], f())).unwrap_err().to_string();
        assert!(e.contains("struct path, not a value"), "{e}");
        let e = run(var("count", &["x"], f())).unwrap_err().to_string();
        assert!(e.contains("not a pointer"), "{e}");
        let e = run(var("file", &["f_path", "dentry", "d_name"], f()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("incomplete"), "{e}");
    }

    fn cast(ty: &str, fields: &[&str]) -> TargetVar {
        let mut tv = var(ty, fields, TargetSite::Cast(ty.into()));
        tv.relocs.remove(0); // no ArgIndex
        for r in &mut tv.relocs {
            r.konst -= 1;
        }
        tv.probe_point = String::new();
        tv.handler = u32::MAX; // in a function: no probe
        tv
    }

    #[test]
    fn casts_need_no_probe_and_read_arrays_as_addresses() {
        // Slots: offset/deref per step, then shift, mask.
        assert_eq!(run(cast("task", &["tgid"])).unwrap(), [0, 0, 0, 1, 32, -1]);
        // char comm[16]: its address (no read), 8 bytes unsigned.
        assert_eq!(
            run(cast("struct task", &["comm"])).unwrap(),
            [0, 0, 4, 0, 0, -1]
        );
        // Through a pointer member, and through the typedef.
        assert_eq!(
            run(cast("task_t", &["parent", "tgid"])).unwrap(),
            [0, 0, 24, 1, 0, 1, 32, -1]
        );
        assert_eq!(
            run(cast("file", &["f_path", "dentry"])).unwrap(),
            [0, 0, 8, 0, 8, 1, 0, -1]
        );
        let e = run(cast("union task", &["tgid"])).unwrap_err().to_string();
        assert_eq!(
            e,
            "cannot read @cast(..., \"union task\")->tgid at 1:1: \
             the kernel's BTF has no type 'union task'"
        );
        let e = run(cast("task", &["nope"])).unwrap_err().to_string();
        assert!(e.contains("struct task has no member 'nope'"), "{e}");
        let e = run(cast("file", &["f_path"])).unwrap_err().to_string();
        assert!(e.contains("struct path, not a value"), "{e}");
    }

    #[test]
    fn defined_answers_from_btf_and_guards_uses() {
        let exists = |name: &str, fields: &[&str], konst: u32| {
            let mut tv = var(name, fields, f());
            tv.relocs = vec![Reloc {
                konst,
                kind: RelocKind::Exists,
            }];
            tv
        };
        // A use of $nope, its constants from 4 on.
        let mut nope = var("nope", &[], f());
        for r in &mut nope.relocs {
            r.konst += 4;
        }
        let mut prog = Program {
            konsts: vec![7; 9],
            target_vars: vec![
                exists("file", &["f_path"], 0),  // a struct member: exists
                exists("file", &["f_flags"], 1), // a bitfield: exists
                exists("nope", &[], 2),
                exists("file", &["f_path", "nope"], 3),
                nope.clone(),
            ],
            probes: one_probe(),
            ..Default::default()
        };
        let btf = Btf::parse(sample()).unwrap();
        apply_with(&mut prog, &[Some(("vfs_read".into(), 0))], &btf).unwrap();
        // The guarded use is left as the image has it (never run).
        assert_eq!(prog.konsts, [1, 1, 0, 0, 7, 7, 7, 7, 7]);
        // Without the question, the same use is an error.
        prog.target_vars = vec![nope];
        let e = apply_with(&mut prog, &[Some(("vfs_read".into(), 0))], &btf).unwrap_err();
        assert!(e.to_string().contains("no parameter 'nope'"), "{e}");
    }

    #[test]
    fn syscall_table_fallback() {
        // The sample BTF has neither __do_sys_open nor pt_regs: a direct
        // symbol reads the argument slot; the wrapper needs pt_regs.
        let mut tv = var("flags", &[], TargetSite::Syscall("open".into()));
        tv.probe_point = "syscall.open".into();
        let mut prog = Program {
            konsts: vec![0; 7],
            target_vars: vec![tv],
            probes: one_probe(),
            ..Default::default()
        };
        let btf = Btf::parse(sample()).unwrap();
        apply_with(&mut prog, &[Some(("sys_open".into(), 0))], &btf).unwrap();
        assert_eq!(prog.konsts, [1, 0, 0, 32, -1, 0, 0]);
        let e = apply_with(&mut prog, &[Some(("__x64_sys_open".into(), 0))], &btf)
            .unwrap_err()
            .to_string();
        assert!(e.contains("pt_regs"), "{e}");
    }
}
