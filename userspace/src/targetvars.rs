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
/// target variables.
pub fn apply(prog: &mut Program, symbols: &[Option<(String, u32)>]) -> Result<(), Error> {
    if prog.target_vars.is_empty() {
        return Ok(());
    }
    let btf = Btf::vmlinux().map_err(|err| Error::NoBtf {
        path: crate::btf::VMLINUX_BTF,
        err,
    })??;
    apply_with(prog, symbols, &btf)
}

/// `apply` against a given BTF.
pub fn apply_with(
    prog: &mut Program,
    symbols: &[Option<(String, u32)>],
    btf: &Btf,
) -> Result<(), Error> {
    let mut patches = Vec::new();
    for tv in &prog.target_vars {
        // The probe of this handler (dropped optional probes: no code runs).
        let Some(pi) = prog.probes.iter().position(|p| p.handler == tv.handler) else {
            continue;
        };
        let Some(Some((sym, _))) = symbols.get(pi) else {
            continue;
        };
        let fill = resolve_var(btf, tv, sym)?;
        for r in &tv.relocs {
            let v = match r.kind {
                RelocKind::ArgIndex => fill.arg,
                RelocKind::Offset(n) => fill.steps.get(n as usize).map_or(0, |s| s.0),
                RelocKind::Deref(n) => fill.steps.get(n as usize).map_or(0, |s| s.1),
                RelocKind::Shift => fill.shift,
                RelocKind::Mask => fill.mask,
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

fn var_text(tv: &TargetVar) -> String {
    let mut s = format!("${}", tv.name);
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

fn resolve_var(btf: &Btf, tv: &TargetVar, sym: &str) -> Result<Fill, Error> {
    let text = var_text(tv);
    let what = |why: String| {
        Error::Var(format!(
            "probe point '{}': cannot read {} at {}:{}: {why}",
            tv.probe_point, text, tv.loc.line, tv.loc.col
        ))
    };
    let mut fill = Fill::default();
    let ty: ParamType = match &tv.site {
        TargetSite::Function(f) => {
            let ps = func_params(btf, f)?.ok_or_else(|| {
                what(format!(
                    "the kernel's BTF has no function '{f}' (inlined or renamed?)"
                ))
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
    };
    // Walk the member chain. `cur` is the type of the value in hand when
    // `addr` is false, of the struct at the address in hand when true.
    let (mut cur, mut addr) = match ty {
        ParamType::Btf(t) => (Some(t), false),
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
    for field in &tv.fields {
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
    let t = btf.skip_mods(cur.unwrap_or(0))?;
    let (bytes, signed) = match btf.kind(t)? {
        _ if addr => {
            return Err(what(format!(
                "it is a {}, not a value (structs and arrays are not supported yet)",
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

    fn run(tv: TargetVar) -> Result<Vec<i64>, Error> {
        let n = tv.relocs.len();
        let mut prog = Program {
            konsts: vec![0; n],
            target_vars: vec![tv],
            probes: vec![Probe {
                kind: 0,
                flags: 0,
                handler: 0,
                target: ProbeTarget::None,
                maxactive: 0,
                period_ns: 0,
                display: String::new(),
            }],
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

    #[test]
    fn syscall_table_fallback() {
        // The sample BTF has neither __do_sys_open nor pt_regs: a direct
        // symbol reads the argument slot; the wrapper needs pt_regs.
        let mut tv = var("flags", &[], TargetSite::Syscall("open".into()));
        tv.probe_point = "syscall.open".into();
        let mut prog = Program {
            konsts: vec![0; 7],
            target_vars: vec![tv],
            probes: vec![Probe {
                kind: 0,
                flags: 0,
                handler: 0,
                target: ProbeTarget::None,
                maxactive: 0,
                period_ns: 0,
                display: String::new(),
            }],
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
