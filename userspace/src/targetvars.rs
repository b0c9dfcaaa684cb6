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
use std::collections::HashMap;
use thiserror::Error;
use vm_spec::program::{
    cast_cond_name, Probe, ProbeTarget, Program, RelocKind, TargetSite, TargetVar,
};

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
    /// A use at `loc` in the script cannot be resolved (the message names
    /// probe, variable and place): `stapvm check` points at it.
    #[error("{msg}")]
    At {
        /// Where the use is in the script.
        loc: vm_spec::program::SrcLoc,
        /// What went wrong.
        msg: String,
    },
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
    /// `@cast`: the value in hand is the address of this BTF type.
    At(u32),
    /// `@var` of a variable BTF has no `VAR` for: an `unsigned long` at
    /// the address in hand.
    Untyped,
}

/// The value of each relocation of one variable, by kind.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Fill {
    arg: i64,
    steps: Vec<(i64, i64)>,
    shift: i64,
    rshift: i64,
    mask: i64,
    /// The last member is a bitfield: (bit in the 8-byte word read, width).
    bits: Option<(u32, u32)>,
    /// `@var`: the kernel symbol's address (`RelocKind::SymAddr`).
    sym: i64,
    /// `$x$` / `$x$$` (`RelocKind::Pretty`): the PRETTY nodes of its type.
    pretty: Option<crate::pretty::Tree>,
}

/// The PRETTY nodes of the program's uses, as `fill_patches` appends them
/// (then `Program::pretty`), and the member names they add to
/// `Program::strings` (a node's `name` indexes `names` until `finish`).
#[derive(Default)]
struct PrettyAcc {
    /// The nodes the program has already (an earlier pass's): the new
    /// ones follow them.
    start: u32,
    nodes: Vec<vm_spec::program::PrettyNode>,
    names: Vec<String>,
    index: HashMap<String, u32>,
}

impl PrettyAcc {
    /// Appends `tree`; its root's index.
    fn add(&mut self, tree: &crate::pretty::Tree) -> Result<i64, Error> {
        let base = self.start + self.nodes.len() as u32;
        for n in &tree.nodes {
            let mut n = *n;
            if n.kind == vm_spec::abi::STP_PK_STRUCT as u8 && n.count != 0
                || n.kind == vm_spec::abi::STP_PK_ARRAY as u8
            {
                n.first += base;
            }
            if let Some(name) = tree.names.get(n.name as usize) {
                n.name = match self.index.get(name) {
                    Some(&i) => i,
                    None => {
                        let i = self.names.len() as u32;
                        self.names.push(name.clone());
                        self.index.insert(name.clone(), i);
                        i
                    }
                };
            }
            self.nodes.push(n);
        }
        if self.start as usize + self.nodes.len() > vm_spec::abi::STP_MAX_PRETTY_NODES as usize {
            return Err(Error::Var(format!(
                "pretty-printing needs more than {} type nodes (the module's cap)",
                vm_spec::abi::STP_MAX_PRETTY_NODES
            )));
        }
        Ok(i64::from(base) + tree.nodes.len() as i64 - 1)
    }

    /// Moves the nodes into `prog`, their names after its strings.
    fn finish(self, prog: &mut Program) -> Result<(), Error> {
        let base = u32::try_from(prog.strings.len())
            .map_err(|_| Error::Var("too many strings".to_string()))?;
        for mut n in self.nodes {
            if n.name < vm_spec::abi::STP_PRETTY_NAME_STRUCT {
                n.name += base;
            }
            prog.pretty.push(n);
        }
        prog.strings
            .extend(self.names.into_iter().map(String::into_bytes));
        Ok(())
    }
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
    let wanted: Vec<&str> = prog
        .target_vars
        .iter()
        .filter_map(|tv| match &tv.site {
            TargetSite::Var(v) => Some(v.as_str()),
            _ => None,
        })
        .collect();
    let syms = if wanted.is_empty() {
        HashMap::new()
    } else {
        crate::kallsyms::data_symbols(crate::kallsyms::KALLSYMS_PATH, &wanted).map_err(|e| {
            Error::Var(format!(
                "@var needs {}: {e}",
                crate::kallsyms::KALLSYMS_PATH
            ))
        })?
    };
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
    apply_syms(prog, symbols, &btf, &modules, &syms)
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

/// Where one use is resolved for one probe: the probe's own symbol.
#[derive(Debug, Clone, Copy)]
enum Site<'a> {
    /// A parameter of this kernel function (`m:f` for a module's).
    Function(&'a str),
    /// An argument of this tracepoint.
    Tracepoint(&'a str),
    /// An argument of this syscall; `wrapper`: the probe is on its
    /// `__x64_sys_` wrapper (the value is in the saved registers).
    Syscall { name: &'a str, wrapper: bool },
    /// An argument of a netfilter hook (kmod/netfilter.c's ARG slots).
    Netfilter,
    /// `@cast` to this type: no probe.
    Cast(&'a str),
    /// `@var` of this kernel variable: no probe.
    Var(&'a str),
    /// A parameter of function `func` of user-space binary `bin` (its
    /// canonical path): its types from the binary's DWARF
    /// (`crate::dwarf2btf`), at most six integer-register parameters.
    User { bin: &'a str, func: &'a str },
}

/// The site of a use of `tv` in the handler of `probe`, armed on `sym`.
fn site_for<'a>(tv: &'a TargetVar, probe: &'a Probe, sym: &'a str) -> Site<'a> {
    match &tv.site {
        TargetSite::Cast(t) => return Site::Cast(t),
        TargetSite::Var(v) => return Site::Var(v),
        _ => {}
    }
    if u32::from(probe.kind) == vm_spec::abi::STP_PROBE_TRACEPOINT {
        return Site::Tracepoint(sym);
    }
    if u32::from(probe.kind) == vm_spec::abi::STP_PROBE_NETFILTER
        || matches!(tv.site, TargetSite::Netfilter)
    {
        return Site::Netfilter;
    }
    match &probe.target {
        ProbeTarget::FirstOf(v) => match v.first().and_then(|f| f.strip_prefix("__x64_sys_")) {
            Some(name) => Site::Syscall {
                name,
                wrapper: sym.starts_with("__x64_sys_"),
            },
            None => Site::Function(sym),
        },
        ProbeTarget::Symbol { .. } => Site::Function(sym),
        // A placed user-space function probe (crate::uprobes): `sym` is
        // its function.
        ProbeTarget::User { path, .. } if probe.is_uprobe() => Site::User {
            bin: path,
            func: sym,
        },
        // No target to go by: what the compiler saw.
        // (Addresses and statements are symbols by now: crate::absolute,
        // crate::statements.)
        ProbeTarget::None
        | ProbeTarget::File { .. }
        | ProbeTarget::Address(_)
        | ProbeTarget::Statement { .. }
        | ProbeTarget::User { .. }
        | ProbeTarget::Process { .. } => match &tv.site {
            TargetSite::Syscall(name) => Site::Syscall {
                name,
                wrapper: sym.starts_with("__x64_sys_"),
            },
            _ => Site::Function(sym),
        },
    }
}

/// `apply` against a given BTF.
///
/// Each use of a probe's parameter is resolved for every probe of its
/// handler, on that probe's symbol: the points of a multi-point probe, the
/// functions a wildcard expanded to. Probes whose constants come out the
/// same share the handler; each other set of constants gets a copy of the
/// handler (appended, so handler indices stay valid) with constants of its
/// own. A use that does not resolve for a probe is an error naming the
/// probe point and function, unless a `@defined` of the same variable (or
/// of a prefix of its chain) in the same handler answered 0 for that
/// probe, or one of the `@defined` conditions it runs under
/// (`TargetVar::conds`) fails there: it never runs, and is left as the
/// image has it (0).
pub fn apply_with(
    prog: &mut Program,
    symbols: &[Option<(String, u32)>],
    btf: &Btf,
) -> Result<(), Error> {
    apply_modules(prog, symbols, btf, &[])
}

/// `apply_with`, with the split BTF of some modules (name, BTF on `btf`):
/// a module function's parameters come from its module's BTF, and an
/// `@cast` to a type vmlinux lacks from the first module that has it.
pub fn apply_modules(
    prog: &mut Program,
    symbols: &[Option<(String, u32)>],
    btf: &Btf,
    modules: &[(String, Btf)],
) -> Result<(), Error> {
    apply_syms(prog, symbols, btf, modules, &HashMap::new())
}

/// Whether `tv` needs no probe: a `@cast` or a `@var`, resolved once for
/// the program.
fn is_global(tv: &TargetVar) -> bool {
    matches!(tv.site, TargetSite::Cast(_) | TargetSite::Var(_))
}

/// `apply_modules`, with the addresses of the kernel symbols `@var` reads
/// (`syms`, from /proc/kallsyms): a `@var` of a symbol not there is an
/// error naming it and its place, unless a `@defined` of it guards the use
/// (and `@defined` of it is 0).
pub fn apply_syms(
    prog: &mut Program,
    symbols: &[Option<(String, u32)>],
    btf: &Btf,
    modules: &[(String, Btf)],
    syms: &HashMap<String, u64>,
) -> Result<(), Error> {
    apply_all(prog, symbols, btf, modules, &[], syms)
}

/// The types of user-space binaries (canonical path, its DWARF as BTF or
/// why it has none) for `apply_user`.
pub type UserTypes = [(String, Result<Btf, String>)];

/// Fills the target variables of the user-space function probes of
/// `prog` (`funcs[i]`: the function of `prog.probes[i]`, `None` for every
/// other probe) from the types of their binaries (`users`), as `apply_with`
/// does for kernel functions; then takes those uses out of
/// `prog.target_vars`, so that the kernel's pass (`apply`) sees the rest
/// only. `@cast` and `@var` stay for the kernel's pass. A handler shared
/// by a user-space function probe and a kernel probe is an error: its
/// uses would be resolved against two different sets of types.
pub fn apply_user(
    prog: &mut Program,
    funcs: &[Option<String>],
    users: &UserTypes,
) -> Result<(), Error> {
    let mut handlers: Vec<u32> = prog
        .probes
        .iter()
        .zip(funcs)
        .filter(|(_, f)| f.is_some())
        .map(|(p, _)| p.handler)
        .filter(|h| {
            prog.target_vars
                .iter()
                .any(|tv| tv.handler == *h && !is_global(tv))
        })
        .collect();
    handlers.sort_unstable();
    handlers.dedup();
    if handlers.is_empty() {
        return Ok(());
    }
    for p in &prog.probes {
        if handlers.contains(&p.handler) && !p.is_uprobe() {
            let user = prog
                .probes
                .iter()
                .zip(funcs)
                .find(|(q, f)| q.handler == p.handler && f.is_some())
                .map_or("", |(q, _)| q.display.as_str());
            return Err(Error::Var(format!(
                "probe point '{}' shares its handler with user-space probe point '{user}', whose \
                 target variables come from the binary's DWARF: give them separate probes",
                p.display
            )));
        }
    }
    let (mine, rest): (Vec<TargetVar>, Vec<TargetVar>) = std::mem::take(&mut prog.target_vars)
        .into_iter()
        .partition(|tv| handlers.contains(&tv.handler) && !is_global(tv));
    prog.target_vars = mine;
    let symbols: Vec<Option<(String, u32)>> = (0..prog.probes.len())
        .map(|i| funcs.get(i).cloned().flatten().map(|f| (f, 0)))
        .collect();
    let empty = Btf::empty();
    let r = apply_all(prog, &symbols, &empty, &[], users, &HashMap::new());
    // The uses (and the copies' uses) are filled: the kernel's pass
    // must not see them.
    prog.target_vars = rest;
    r
}

/// `apply_syms` with the types of user-space binaries (`apply_user`).
fn apply_all(
    prog: &mut Program,
    symbols: &[Option<(String, u32)>],
    btf: &Btf,
    modules: &[(String, Btf)],
    users: &UserTypes,
    syms: &HashMap<String, u64>,
) -> Result<(), Error> {
    let mut patches: Vec<(usize, i64)> = Vec::new();
    let mut acc = PrettyAcc {
        start: u32::try_from(prog.pretty.len())
            .map_err(|_| Error::Var("too many pretty-printing nodes".to_string()))?,
        ..PrettyAcc::default()
    };
    // `@cast` uses need no probe (they may sit in functions): one answer
    // for the program, guarded by any `@defined` of the same chain.
    let cast_guards: Vec<(&TargetSite, &str, &[String])> = prog
        .target_vars
        .iter()
        .filter(|tv| is_exists(tv) && is_global(tv))
        .map(|tv| (&tv.site, tv.name.as_str(), tv.fields.as_slice()))
        .collect();
    // The answers of the `@cast` chains' `@defined` (the same for every
    // use: they depend on the type alone), for the conditions of uses
    // (`TargetVar::conds`) anywhere in the program.
    let mut cast_answers: Vec<(String, Vec<String>, bool)> = Vec::new();
    for tv in prog.target_vars.iter().filter(|tv| is_exists(tv)) {
        if let TargetSite::Cast(t) = &tv.site {
            let f = fill_in(btf, modules, users, tv, Site::Cast(t), "", true)?;
            let yes = f.as_ref().is_some_and(|f| f.arg != 0);
            cast_answers.push((cast_cond_name(t), tv.fields.clone(), yes));
        }
    }
    for tv in &prog.target_vars {
        let site = match &tv.site {
            TargetSite::Cast(t) => Site::Cast(t),
            TargetSite::Var(v) => Site::Var(v),
            _ => continue,
        };
        let dead = tv.conds.iter().any(|c| {
            cast_answers
                .iter()
                .any(|(n, f, yes)| *n == c.name && *f == c.fields && *yes != c.defined)
        });
        let guarded =
            dead || cast_guards.contains(&(&tv.site, tv.name.as_str(), tv.fields.as_slice()));
        if let Site::Var(v) = site {
            if let Some(fill) = var_fill(btf, tv, v, syms, guarded)? {
                patches.extend(fill_patches(tv, &fill, &mut acc)?);
            }
            continue;
        }
        if let Some(fill) = fill_in(btf, modules, users, tv, site, "", guarded)? {
            patches.extend(fill_patches(tv, &fill, &mut acc)?);
        }
    }
    // Uses of probe parameters, handler by handler.
    let mut handlers: Vec<u32> = prog
        .target_vars
        .iter()
        .filter(|tv| !is_global(tv))
        .map(|tv| tv.handler)
        .collect();
    handlers.sort_unstable();
    handlers.dedup();
    let mut copies: Vec<TargetVar> = Vec::new();
    for h in handlers {
        let tvs: Vec<TargetVar> = prog
            .target_vars
            .iter()
            .filter(|tv| tv.handler == h && !is_global(tv))
            .cloned()
            .collect();
        // (the constants of every use, the probes that get them)
        let mut groups: Vec<(Vec<Option<Fill>>, Vec<usize>)> = Vec::new();
        for (pi, p) in prog.probes.iter().enumerate() {
            if p.handler != h {
                continue;
            }
            // No symbol (begin, timers): no parameters; the compiler only
            // lets guarded uses reach here, and `@defined` stays 0. A
            // netfilter hook has none and its arguments (Site::Netfilter).
            let sym: &str = match symbols.get(pi) {
                Some(Some((sym, _))) => sym,
                _ if u32::from(p.kind) == vm_spec::abi::STP_PROBE_NETFILTER => "",
                _ => continue,
            };
            let at = probe_text(p, sym);
            // The `@defined` questions first: a use is guarded when one
            // about it (or a prefix of its chain) is answered 0 here.
            // A use whose `@defined` conditions fail here never runs
            // (`@defined($irq) ? $irq : $id` where `$irq` exists).
            let mut fills = vec![None; tvs.len()];
            let mut answers: Vec<(&str, &[String], bool)> = cast_answers
                .iter()
                .map(|(n, f, yes)| (n.as_str(), f.as_slice(), *yes))
                .collect();
            for (tv, fill) in tvs.iter().zip(fills.iter_mut()) {
                if is_exists(tv) {
                    let f = fill_in(btf, modules, users, tv, site_for(tv, p, sym), &at, false)?;
                    let yes = f.as_ref().is_some_and(|f| f.arg != 0);
                    answers.push((tv.name.as_str(), tv.fields.as_slice(), yes));
                    *fill = f;
                }
            }
            for (tv, fill) in tvs.iter().zip(fills.iter_mut()) {
                if !is_exists(tv) {
                    let absent = answers
                        .iter()
                        .any(|(n, f, yes)| !yes && *n == tv.name && tv.fields.starts_with(f));
                    let dead = tv.conds.iter().any(|c| {
                        answers
                            .iter()
                            .any(|(n, f, yes)| *n == c.name && **f == c.fields && *yes != c.defined)
                    });
                    *fill = fill_in(
                        btf,
                        modules,
                        users,
                        tv,
                        site_for(tv, p, sym),
                        &at,
                        absent || dead,
                    )?;
                }
            }
            match groups.iter_mut().find(|(f, _)| *f == fills) {
                Some((_, members)) => members.push(pi),
                None => groups.push((fills, vec![pi])),
            }
        }
        for (gi, (fills, members)) in groups.into_iter().enumerate() {
            let uses = if gi == 0 {
                tvs.clone()
            } else {
                copy_handler(prog, h, &tvs, &members, &mut copies)?
            };
            for (tv, fill) in uses.iter().zip(&fills) {
                if let Some(fill) = fill {
                    patches.extend(fill_patches(tv, fill, &mut acc)?);
                }
            }
        }
    }
    prog.target_vars.extend(copies);
    acc.finish(prog)?;
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

/// The constants of `@var` use `tv` of kernel variable `name`: its
/// address from `syms`, its type from BTF. `None` when it does not resolve
/// and `guarded`; an `@defined` of it answers whether it resolves.
fn var_fill(
    btf: &Btf,
    tv: &TargetVar,
    name: &str,
    syms: &HashMap<String, u64>,
    guarded: bool,
) -> Result<Option<Fill>, Error> {
    let addr = match syms.get(name) {
        Some(&a) if a != 0 => a as i64,
        found => {
            if is_exists(tv) {
                return Ok(Some(Fill::default()));
            }
            if guarded {
                return Ok(None);
            }
            let why = match found {
                Some(_) => format!(
                    "{} lists it at address 0 (run as root, or lower \
                     /proc/sys/kernel/kptr_restrict)",
                    crate::kallsyms::KALLSYMS_PATH
                ),
                None => format!(
                    "the kernel has no symbol '{name}' ({} does not list it; \
                     it lists data symbols only with CONFIG_KALLSYMS_ALL)",
                    crate::kallsyms::KALLSYMS_PATH
                ),
            };
            return Err(Error::Var(format!(
                "cannot read {} at {}:{}: {why}",
                var_text(tv),
                tv.loc.line,
                tv.loc.col
            )));
        }
    };
    Ok(
        fill_of(btf, tv, Site::Var(name), "", guarded)?.map(|mut f| {
            f.sym = addr;
            f
        }),
    )
}

/// The probe point of `p` as messages name it, with the function a
/// wildcard expanded to.
fn probe_text(p: &Probe, sym: &str) -> String {
    if p.display.contains(sym) {
        format!("probe point '{}'", p.display)
    } else {
        format!("probe point '{}' (function {sym})", p.display)
    }
}

/// `fill_of` in the BTF the use belongs to: its module's for a module
/// function (`m:f`), for an `@cast` whose type vmlinux lacks the first
/// module's that has it, else vmlinux's. A module without BTF is an error
/// naming it (an `@defined` about it answers 0).
fn fill_in(
    btf: &Btf,
    modules: &[(String, Btf)],
    users: &UserTypes,
    tv: &TargetVar,
    site: Site,
    at: &str,
    guarded: bool,
) -> Result<Option<Fill>, Error> {
    let vbtf = match site {
        Site::User { bin, .. } => match users.iter().find(|(p, _)| p == bin) {
            Some((_, Ok(b))) => b,
            _ if is_exists(tv) => return Ok(Some(Fill::default())),
            _ if guarded => return Ok(None),
            found => {
                let why = match found {
                    Some((_, Err(why))) => why.clone(),
                    _ => format!("the DWARF of {bin} was not read"),
                };
                return Err(Error::At {
                    loc: tv.loc,
                    msg: format!(
                        "{at}: cannot read {} at {}:{}: {why}; without DWARF use uint_arg(N), \
                         pointer_arg(N), register(\"NAME\") or returnval()",
                        var_text(tv),
                        tv.loc.line,
                        tv.loc.col
                    ),
                });
            }
        },
        Site::Cast(t) if find_type(btf, t).is_none() => modules
            .iter()
            .find(|(_, b)| find_type(b, t).is_some())
            .map_or(btf, |(_, b)| b),
        Site::Function(f) => match f.split_once(':') {
            None => btf,
            Some((m, _)) => match modules.iter().find(|(n, _)| n == m) {
                Some((_, b)) => b,
                None if is_exists(tv) => return Ok(Some(Fill::default())),
                None if guarded => return Ok(None),
                None => {
                    return Err(Error::Var(format!(
                        "{at}: cannot read {} at {}:{}: module '{m}' has no BTF \
                         ({}/{m} is missing: not loaded, or built without CONFIG_DEBUG_INFO_BTF_MODULES)",
                        var_text(tv),
                        tv.loc.line,
                        tv.loc.col,
                        crate::btf::BTF_DIR
                    )))
                }
            },
        },
        _ => btf,
    };
    fill_of(vbtf, tv, site, at, guarded)
}

/// The constants of `tv` at `site`: `None` when it does not resolve and
/// `guarded` (a `@defined` asks about it: it is left at 0, never read).
fn fill_of(
    btf: &Btf,
    tv: &TargetVar,
    site: Site,
    at: &str,
    guarded: bool,
) -> Result<Option<Fill>, Error> {
    if let Some(i) = listing_slot(&tv.name) {
        return fill_listing(btf, tv, i, site, at, guarded);
    }
    if tv.name == "return" {
        return return_fill(btf, tv, site);
    }
    Ok(match resolve_var(btf, tv, site, at) {
        Ok(_) if is_exists(tv) => Some(Fill {
            arg: 1,
            ..Fill::default()
        }),
        Ok(fill) => Some(fill),
        Err(_) if is_exists(tv) => Some(Fill::default()),
        Err(_) if guarded => None,
        Err(e) => return Err(e),
    })
}

/// `$return$` (a use named `return` whose only relocation is its PRETTY
/// node, compiler/src/passes/lower/tapset.rs): the tree of the function's
/// BTF return type (a syscall's `__do_sys_`/`__se_sys_` prototype); no
/// tree (the constant -1: PRETTY prints `?`) when BTF has no prototype.
fn return_fill(btf: &Btf, tv: &TargetVar, site: Site) -> Result<Option<Fill>, Error> {
    let deep = tv
        .relocs
        .iter()
        .any(|r| r.kind == RelocKind::Pretty { deep: true });
    let names: Vec<String> = match site {
        Site::Function(f) => vec![f.rsplit(':').next().unwrap_or(f).to_string()],
        Site::User { func, .. } => vec![func.to_string()],
        Site::Syscall { name, .. } => vec![format!("__do_sys_{name}"), format!("__se_sys_{name}")],
        _ => Vec::new(),
    };
    let Some(func) = names.iter().find_map(|n| btf.find_func(n)) else {
        return Ok(Some(Fill::default()));
    };
    let ty = btf.func_return(func)?;
    let tree = crate::pretty::build(btf, ty, deep).map_err(|e| {
        Error::Var(format!(
            "cannot pretty-print $return at {}:{}: {e}",
            tv.loc.line, tv.loc.col
        ))
    })?;
    Ok(Some(Fill {
        pretty: Some(tree),
        ..Fill::default()
    }))
}

/// The parameter index `i` of `$$parms`'s reserved variable
/// `$__stp_parm<i>` (compiler/src/tapset/listings.rs), if `name` is one.
fn listing_slot(name: &str) -> Option<usize> {
    name.strip_prefix("__stp_parm")?.parse().ok()
}

/// The parameter names of the function, tracepoint or syscall at `site`,
/// in order (`None`: BTF does not describe it).
fn param_names(btf: &Btf, site: Site) -> Result<Option<Vec<String>>, Error> {
    let names = |ps: Option<Vec<Param>>| ps.map(|v| v.into_iter().map(|p| p.name).collect());
    Ok(match site {
        Site::Function(f) => names(func_params(btf, f.split_once(':').map_or(f, |(_, n)| n))?),
        Site::User { func, .. } => names(func_params(btf, func)?),
        Site::Tracepoint(f) => names(
            btf.tracepoint_params(f)?
                .map(|ps| ps.into_iter().skip(1).collect()),
        ),
        Site::Syscall { name, .. } => {
            for f in [format!("__do_sys_{name}"), format!("__se_sys_{name}")] {
                if let Some(ps) = func_params(btf, &f)? {
                    return Ok(names(Some(ps)));
                }
            }
            SYSCALL_TABLE
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, args)| args.iter().map(|a| a.0.to_string()).collect())
        }
        Site::Netfilter => names(nf_params(btf)?),
        Site::Cast(_) | Site::Var(_) => None,
    })
}

/// The arguments of a netfilter hook as stap names them, in the ARG slots
/// kmod/netfilter.c fills (`$hooknum`, `$skb`, `$in`, `$out`, `$okfn`),
/// typed from the kernel's BTF: `struct nf_hook_state`'s `hook`, `in`,
/// `out` and `okfn`, and `nf_hook_slow`'s `skb` (`None`: BTF has neither,
/// a kernel without netfilter).
fn nf_params(btf: &Btf) -> Result<Option<Vec<Param>>, Error> {
    let Some(state) = find_struct(btf, "nf_hook_state") else {
        return Ok(None);
    };
    let Some(skb) =
        func_params(btf, "nf_hook_slow")?.and_then(|ps| ps.into_iter().find(|p| p.name == "skb"))
    else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(5);
    for (name, member) in [
        ("hooknum", "hook"),
        ("skb", ""),
        ("in", "in"),
        ("out", "out"),
        ("okfn", "okfn"),
    ] {
        let ty = if member.is_empty() {
            skb.ty
        } else {
            match btf.member(state, member)? {
                Some(m) => m.ty,
                None => return Ok(None),
            }
        };
        out.push(Param {
            name: name.to_string(),
            ty,
        });
    }
    Ok(Some(out))
}

/// `fill_of` for `$__stp_parm<i>` (parameter `i`, whatever its name) and
/// `@defined($__stp_parm<i>->__stp_name<w>)` (bytes `8w..8w+8` of its
/// name, little-endian; 0 past its end). Without parameter `i`, the
/// variable does not resolve: `@defined` of it is 0 and the listing
/// stops there.
fn fill_listing(
    btf: &Btf,
    tv: &TargetVar,
    i: usize,
    site: Site,
    at: &str,
    guarded: bool,
) -> Result<Option<Fill>, Error> {
    let names = param_names(btf, site)?.unwrap_or_default();
    let Some(real) = names.get(i).filter(|n| !n.is_empty()) else {
        if is_exists(tv) {
            return Ok(Some(Fill::default()));
        }
        if guarded {
            return Ok(None);
        }
        return Err(Error::Var(format!(
            "{at}: $$parms at {}:{}: the function has no parameter {i} in BTF",
            tv.loc.line, tv.loc.col
        )));
    };
    if let [f] = tv.fields.as_slice() {
        if let Some(w) = f
            .strip_prefix("__stp_name")
            .and_then(|w| w.parse::<usize>().ok())
        {
            let mut bytes = [0u8; 8];
            for (b, c) in bytes.iter_mut().zip(real.bytes().skip(8 * w)) {
                *b = c;
            }
            return Ok(Some(Fill {
                arg: i64::from_le_bytes(bytes),
                ..Fill::default()
            }));
        }
    }
    let mut named = tv.clone();
    named.name = real.clone();
    fill_of(btf, &named, site, at, guarded)
}

/// The (constant, value) pairs of `fill` for `tv`'s relocations.
fn fill_patches(
    tv: &TargetVar,
    fill: &Fill,
    acc: &mut PrettyAcc,
) -> Result<Vec<(usize, i64)>, Error> {
    tv.relocs
        .iter()
        .map(|r| {
            let v = match r.kind {
                // No tree (no BTF type): past every node, PRETTY's "?".
                RelocKind::Pretty { .. } => match &fill.pretty {
                    Some(t) => acc.add(t)?,
                    None => -1,
                },
                RelocKind::ArgIndex => fill.arg,
                RelocKind::Offset(n) | RelocKind::ElemSize(n) => {
                    fill.steps.get(n as usize).map_or(0, |s| s.0)
                }
                RelocKind::Deref(n) => fill.steps.get(n as usize).map_or(0, |s| s.1),
                RelocKind::Shift => fill.shift,
                RelocKind::RShift => fill.rshift,
                RelocKind::Mask => fill.mask,
                RelocKind::SymAddr => fill.sym,
                // `is_exists`: `arg` holds the answer.
                RelocKind::Exists => fill.arg,
            };
            Ok((r.konst as usize, v))
        })
        .collect()
}

/// Gives the probes `members` a copy of handler `h` whose relocated
/// constants (those of `tvs`, the handler's uses of probe parameters) are
/// new ones; returns the uses as the copy has them (also added to
/// `copies`). `@cast` constants stay shared: their values are the same.
fn copy_handler(
    prog: &mut Program,
    h: u32,
    tvs: &[TargetVar],
    members: &[usize],
    copies: &mut Vec<TargetVar>,
) -> Result<Vec<TargetVar>, Error> {
    use vm_spec::abi::{STP_MAX_HANDLERS, STP_MAX_INSNS, STP_MAX_KONSTS, STP_OP_LDK};
    let too_many = |what: &str, max: u32| {
        let display = members
            .first()
            .and_then(|&pi| prog.probes.get(pi))
            .map_or("?", |p| p.display.as_str());
        Error::Var(format!(
            "probe point '{display}': its functions' target variables differ, and the copies \
             of its handler they need pass the limit of {max} {what} (narrow the wildcard)"
        ))
    };
    let Some(mut copy) = prog.handlers.get(h as usize).cloned() else {
        return Err(Error::Var(format!(
            "corrupt program: target variable of handler {h} out of range"
        )));
    };
    let insns: usize = prog.handlers.iter().map(|x| x.code.len()).sum();
    if prog.handlers.len() >= STP_MAX_HANDLERS as usize {
        return Err(too_many("handlers", STP_MAX_HANDLERS));
    }
    if insns + copy.code.len() > STP_MAX_INSNS as usize {
        return Err(too_many("instructions", STP_MAX_INSNS));
    }
    let mut remap = std::collections::HashMap::new();
    for r in tvs.iter().flat_map(|tv| &tv.relocs) {
        if prog.konsts.len() >= STP_MAX_KONSTS as usize {
            return Err(too_many("constants", STP_MAX_KONSTS));
        }
        remap.insert(r.konst, prog.konsts.len() as u32);
        prog.konsts.push(0);
    }
    for insn in &mut copy.code {
        if u32::from(insn.op) == STP_OP_LDK {
            if let Some(&k) = u32::try_from(insn.imm).ok().and_then(|k| remap.get(&k)) {
                insn.imm = k as i32;
            }
        }
    }
    // Run-time messages name the copy's own probe point.
    let display = members
        .first()
        .and_then(|&pi| prog.probes.get(pi))
        .map(|p| p.display.clone());
    if let Some(d) = &display {
        copy.probe_point = d.clone();
    }
    let nh = prog.handlers.len() as u32;
    prog.handlers.push(copy);
    for &pi in members {
        if let Some(p) = prog.probes.get_mut(pi) {
            p.handler = nh;
        }
    }
    let uses: Vec<TargetVar> = tvs
        .iter()
        .map(|tv| {
            let mut c = tv.clone();
            c.handler = nh;
            if let Some(d) = &display {
                c.probe_point = d.clone();
            }
            for r in &mut c.relocs {
                r.konst = remap.get(&r.konst).copied().unwrap_or(r.konst);
            }
            c
        })
        .collect();
    copies.extend(uses.iter().cloned());
    Ok(uses)
}

/// Whether `tv` is an `@defined` question (its only relocation).
fn is_exists(tv: &TargetVar) -> bool {
    tv.relocs.iter().all(|r| r.kind == RelocKind::Exists) && !tv.relocs.is_empty()
}

fn var_text(tv: &TargetVar) -> String {
    let mut s = match tv.site {
        TargetSite::Cast(_) => format!("@cast(..., \"{}\")", tv.name),
        TargetSite::Var(_) => format!("@var(\"{}\")", tv.name),
        _ => format!("${}", tv.name),
    };
    for f in &tv.fields {
        if f == "[]" {
            s.push_str("[i]");
        } else {
            s.push_str("->");
            s.push_str(f);
        }
    }
    if tv.addr_of {
        s.insert(0, '&');
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

/// What a missing parameter `name` could have been: stap also reads
/// kernel global variables as `$name`, which stapvm reads only as
/// `@var("name")` (kallsyms has the address, BTF often no type).
const NO_GLOBALS: &str = "kernel global variables cannot be read as target variables: not \
supported yet (use @var(\"name\"): the kernel's BTF often has no types for them)";

/// The constants of `tv` at `site` (`at` names the probe point in
/// messages). For an `@defined` question only existence matters: a last
/// member that is a bitfield or a struct exists.
fn resolve_var(btf: &Btf, tv: &TargetVar, site: Site, at: &str) -> Result<Fill, Error> {
    let exists_only = is_exists(tv);
    let text = var_text(tv);
    let what = |why: String| {
        let at = if at.is_empty() {
            String::new()
        } else {
            format!("{at}: ")
        };
        Error::At {
            loc: tv.loc,
            msg: format!(
                "{at}cannot read {} at {}:{}: {why}",
                text, tv.loc.line, tv.loc.col
            ),
        }
    };
    let mut fill = Fill::default();
    let ty: ParamType = match site {
        Site::Function(f) | Site::Tracepoint(f) => {
            let tracepoint = matches!(site, Site::Tracepoint(_));
            let ps = if tracepoint {
                // Without `__data`: the module's tracepoint probe puts the
                // tracepoint's own arguments in slots 0.. (kmod/probes.c).
                btf.tracepoint_params(f)?
                    .map(|ps| ps.into_iter().skip(1).collect())
            } else {
                // A module's function (`m:f`): its name in the module's
                // BTF, the record with the parameter asked for.
                match f.split_once(':') {
                    Some((_, name)) => func_params_with(btf, name, &tv.name)?,
                    None => func_params(btf, f)?,
                }
            };
            let ps: Vec<Param> = ps.ok_or_else(|| {
                what(if tracepoint {
                    format!(
                        "the kernel's BTF has no arguments of tracepoint '{f}' \
                         (__bpf_trace_{f}, btf_trace_{f})"
                    )
                } else {
                    format!("the kernel's BTF has no function '{f}' (inlined or renamed?)")
                })
            })?;
            let Some(idx) = ps.iter().position(|p| p.name == tv.name) else {
                return Err(Error::At {
                    loc: tv.loc,
                    msg: format!(
                        "{at} has no parameter '{}'{} (BTF of the running kernel: parameters \
                         are {}; {NO_GLOBALS})",
                        tv.name,
                        compiler::suggest::similar(&tv.name, ps.iter().map(|p| p.name.as_str())),
                        param_list(&ps)
                    ),
                });
            };
            fill.arg = arg_slot(btf, &ps, idx, &what)?;
            fill.steps.push((0, 0));
            ParamType::Btf(ps[idx].ty)
        }
        Site::User { bin, func } => {
            let ps = func_params(btf, func)?.ok_or_else(|| {
                what(format!(
                    "the DWARF of {bin} has no function '{func}' with code (inlined, or a \
                     compiler clone whose calling convention differs?)"
                ))
            })?;
            let Some(idx) = ps.iter().position(|p| p.name == tv.name) else {
                return Err(Error::At {
                    loc: tv.loc,
                    msg: format!(
                        "{at} has no parameter '{}'{} (DWARF of {bin}: parameters are {}; \
                         global variables of a user-space binary cannot be read yet)",
                        tv.name,
                        compiler::suggest::similar(&tv.name, ps.iter().map(|p| p.name.as_str())),
                        param_list(&ps)
                    ),
                });
            };
            // A uprobe reads the user registers: a parameter passed on
            // the stack is out of reach (ARG past the sixth reads the
            // kernel stack's slots, not the user stack).
            if idx >= 6 {
                return Err(what(format!(
                    "parameter '{}' is the function's parameter {}, passed on the stack: only \
                     the first six (register) parameters of a user-space function can be read",
                    tv.name,
                    idx + 1
                )));
            }
            fill.arg = arg_slot(btf, &ps, idx, &what)?;
            fill.steps.push((0, 0));
            ParamType::Btf(ps[idx].ty)
        }
        Site::Netfilter => {
            let ps = nf_params(btf)?.ok_or_else(|| {
                what(
                    "the kernel's BTF has no struct nf_hook_state or nf_hook_slow                      (a kernel without netfilter?)"
                        .into(),
                )
            })?;
            let Some(idx) = ps.iter().position(|p| p.name == tv.name) else {
                return Err(what(format!(
                    "a netfilter hook has no argument '{}' (its arguments are {})",
                    tv.name,
                    param_list(&ps)
                )));
            };
            fill.arg = idx as i64;
            fill.steps.push((0, 0));
            ParamType::Btf(ps[idx].ty)
        }
        Site::Syscall { name, wrapper } => {
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
                None => match SYSCALL_TABLE.iter().find(|(n, _)| *n == name) {
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
                return Err(Error::At {
                    loc: tv.loc,
                    msg: format!(
                        "{at} has no parameter '{}'{} (arguments of syscall {name}: {names})",
                        tv.name,
                        compiler::suggest::similar(&tv.name, names.split(", "))
                    ),
                });
            };
            if wrapper {
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
        Site::Cast(name) => {
            let id = find_type(btf, name)
                .ok_or_else(|| what(format!("the kernel's BTF has no type '{name}'")))?;
            fill.steps.push((0, 0));
            ParamType::At(id)
        }
        Site::Var(name) => match btf.find_var(name) {
            // A struct, union or array stays an address; anything else
            // is read at step 0.
            Some(t) => {
                let embedded = matches!(
                    btf.kind(btf.skip_mods(t)?)?,
                    kind::STRUCT | kind::UNION | kind::ARRAY
                );
                fill.steps.push((0, i64::from(!embedded)));
                if embedded {
                    ParamType::At(t)
                } else {
                    ParamType::Btf(t)
                }
            }
            None => ParamType::Untyped,
        },
    };
    // Walk the chain. `cur` is the type of the value in hand when `addr` is
    // false, of the object at the address in hand when true.
    let (mut cur, mut addr) = match ty {
        ParamType::Btf(t) => (t, false),
        ParamType::At(t) => (t, true),
        ParamType::Int(bytes, signed) => {
            if !tv.fields.is_empty() {
                return Err(what(
                    "its type is unknown (no BTF prototype): '->' or '[i]' needs one".into(),
                ));
            }
            if tv.addr_of {
                return Err(what("cannot take address of object in register".into()));
            }
            (fill.shift, fill.mask) = shape(bytes, signed);
            return Ok(fill);
        }
        ParamType::Untyped => {
            if !tv.fields.is_empty() {
                return Err(what(
                    "the kernel's BTF has no type for it (no BTF_KIND_VAR: this kernel's BTF \
                     describes only per-CPU variables): '->' or '[i]' needs one; \
                     &@var(...) and its value as an unsigned long can be read"
                        .into(),
                ));
            }
            if exists_only {
                return Ok(fill);
            }
            // Read as an unsigned long; `&`: the address itself.
            fill.steps.push((0, i64::from(!tv.addr_of)));
            (fill.shift, fill.rshift, fill.mask) = (0, 0, -1);
            return Ok(fill);
        }
    };
    for (i, field) in tv.fields.iter().enumerate() {
        let t = btf.skip_mods(cur)?;
        let last = i + 1 == tv.fields.len();
        if field == "[]" {
            // C's pointer arithmetic: on a pointer, its pointee; at an
            // array, its element; at any other object, the object itself
            // (`&@cast(0, "T")[1]` is sizeof(T)).
            let elem = match (addr, btf.kind(t)?) {
                (true, kind::ARRAY) => btf.referenced(t)?,
                (true, _) => t,
                (false, kind::PTR) => btf.referenced(t)?,
                _ => {
                    return Err(what(format!(
                        "'[i]' applied to {} (not a pointer or array)",
                        btf.type_name(cur)
                    )))
                }
            };
            let size = btf
                .type_size(elem)?
                .and_then(|n| i64::try_from(n).ok())
                .ok_or_else(|| {
                    what(format!(
                        "'[i]': the size of {} is unknown",
                        btf.type_name(elem)
                    ))
                })?;
            if exists_only && last {
                return Ok(fill);
            }
            let et = btf.skip_mods(elem)?;
            let embedded = matches!(btf.kind(et)?, kind::STRUCT | kind::UNION | kind::ARRAY);
            fill.steps.push((size, i64::from(!embedded)));
            cur = elem;
            addr = embedded;
            continue;
        }
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
        let m = btf.member(st, field)?.ok_or_else(|| {
            let names = btf.member_names(st).unwrap_or_default();
            what(format!(
                "{} has no member '{field}'{}",
                btf.type_name(st),
                compiler::suggest::similar(field, names.iter().map(String::as_str))
            ))
        })?;
        if exists_only && last {
            return Ok(fill);
        }
        let mut byte = m.bit_offset / 8;
        if m.bitfield != 0 || m.bit_offset % 8 != 0 {
            if tv.addr_of && last {
                return Err(what("cannot take the address of a bit field".to_string()));
            }
            if !last {
                return Err(what(format!(
                    "member '{field}' is a bitfield: it has no members"
                )));
            }
            // The aligned 8-byte word holding the field; the shifts take
            // its bits out (little-endian: bit b of the word is bit b of
            // the struct from the word's start).
            let width = match m.bitfield {
                0 => btf.type_size(m.ty)?.unwrap_or(8) as u32 * 8,
                w => w,
            };
            byte = m.bit_offset / 64 * 8;
            let bit = (m.bit_offset % 64) as u32;
            if bit + width > 64 {
                return Err(what(format!(
                    "member '{field}' is a bitfield that straddles an 8-byte word (not supported)"
                )));
            }
            fill.bits = Some((bit, width));
        }
        let off = i64::try_from(byte).map_err(|_| what("offset too large".into()))?;
        let mt = btf.skip_mods(m.ty)?;
        let embedded = matches!(btf.kind(mt)?, kind::STRUCT | kind::UNION | kind::ARRAY);
        fill.steps.push((off, i64::from(!embedded)));
        cur = mt;
        addr = embedded;
    }
    if exists_only {
        return Ok(fill);
    }
    if tv.addr_of {
        // The address of the last member or element: no read, no narrowing.
        if let Some(last) = fill.steps.last_mut() {
            last.1 = 0;
        }
        (fill.shift, fill.rshift, fill.mask) = (0, 0, -1);
        return Ok(fill);
    }
    let t = btf.skip_mods(cur)?;
    let deep = tv.relocs.iter().find_map(|r| match r.kind {
        RelocKind::Pretty { deep } => Some(deep),
        _ => None,
    });
    if let Some(deep) = deep {
        fill.pretty = Some(
            crate::pretty::build(btf, cur, deep)
                .map_err(|e| what(format!("cannot pretty-print it: {e}")))?,
        );
        // A struct, union or array is its address; anything else that is
        // no integer or pointer (a float) prints `?` whatever the value.
        let value = match btf.kind(t)? {
            kind::PTR => true,
            kind::INT | kind::ENUM | kind::ENUM64 => btf.size(t)? <= 8,
            _ => false,
        };
        if addr || !value {
            (fill.shift, fill.rshift, fill.mask) = (0, 0, -1);
            return Ok(fill);
        }
    }
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
    fill.rshift = fill.shift;
    if let Some((bit, width)) = fill.bits {
        // Move the field to the top of the word, then down to bit 0.
        fill.shift = i64::from(64 - bit - width);
        fill.rshift = i64::from(64 - width);
        fill.mask = if signed || width == 64 {
            -1
        } else {
            ((1u64 << width) - 1) as i64
        };
    }
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
            addr_of: false,
            conds: Vec::new(),
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
            perf: None,
            watch: None,
            netfilter: None,
            uprobe: None,
            display: "kernel.function(\"vfs_read\")".into(),
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

    /// `@var(name)` with `fields`: `var`'s relocations, the first one
    /// the symbol's address.
    fn gvar(name: &str, fields: &[&str]) -> TargetVar {
        let mut tv = var(name, fields, TargetSite::Var(name.into()));
        tv.relocs[0].kind = RelocKind::SymAddr;
        tv.handler = u32::MAX;
        tv.loc = SrcLoc { line: 3, col: 7 };
        tv
    }

    /// `run` for `@var` uses, kallsyms listing `syms`.
    fn run_vars(tvs: Vec<TargetVar>, syms: &[(&str, u64)]) -> Result<Vec<i64>, Error> {
        let n = tvs
            .iter()
            .flat_map(|t| &t.relocs)
            .map(|r| r.konst as usize + 1)
            .max()
            .unwrap_or(0);
        let mut prog = Program {
            konsts: vec![0; n],
            target_vars: tvs,
            ..Default::default()
        };
        let btf = Btf::parse(sample()).unwrap();
        let syms: HashMap<String, u64> = syms.iter().map(|(n, a)| (n.to_string(), *a)).collect();
        apply_syms(&mut prog, &[], &btf, &[], &syms)?;
        Ok(prog.konsts)
    }

    #[test]
    fn var_of_a_btf_integer_is_read_at_its_kallsyms_address() {
        let k = run_vars(vec![gvar("counter", &[])], &[("counter", 0xffff_8000_1234)]).unwrap();
        // SymAddr, Offset(0), Deref(0), Shift, Mask: a signed int.
        assert_eq!(k, vec![0xffff_8000_1234, 0, 1, 32, -1]);
    }

    #[test]
    fn var_of_a_struct_walks_its_members_like_cast() {
        let k = run_vars(
            vec![gvar("init_thing", &["parent", "tgid"])],
            &[("init_thing", 0x1000)],
        )
        .unwrap();
        // The struct stays an address at step 0; ->parent (offset 24) is
        // read; ->tgid (offset 0) is a signed int.
        assert_eq!(k, vec![0x1000, 0, 0, 24, 1, 0, 1, 32, -1]);
    }

    #[test]
    fn var_of_an_array_is_indexed_by_element_size() {
        let k = run_vars(vec![gvar("loads", &["[]"])], &[("loads", 0x2000)]).unwrap();
        // Step 1: 8 bytes per element, read; unsigned long: no narrowing.
        assert_eq!(k, vec![0x2000, 0, 0, 8, 1, 0, -1]);
        let mut a = gvar("loads", &[]);
        a.addr_of = true;
        let k = run_vars(vec![a], &[("loads", 0x2000)]).unwrap();
        assert_eq!(k[..3], [0x2000, 0, 0]);
    }

    #[test]
    fn var_without_btf_type_reads_an_unsigned_long() {
        let k = run_vars(vec![gvar("jiffies", &[])], &[("jiffies", 0x3000)]).unwrap();
        assert_eq!(k, vec![0x3000, 0, 1, 0, -1]);
        let err = run_vars(vec![gvar("jiffies", &["a"])], &[("jiffies", 0x3000)]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("@var(\"jiffies\")->a at 3:7"), "{msg}");
        assert!(msg.contains("no type for it"), "{msg}");
    }

    #[test]
    fn var_of_a_missing_symbol_is_an_error_naming_it_unless_defined_asks() {
        let err = run_vars(vec![gvar("nosuchsym_xyz", &[])], &[]).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("cannot read @var(\"nosuchsym_xyz\") at 3:7")
                && msg.contains("no symbol 'nosuchsym_xyz'"),
            "{msg}"
        );
        let err = run_vars(vec![gvar("counter", &[])], &[("counter", 0)]).unwrap_err();
        assert!(err.to_string().contains("address 0"), "{err}");
        // `@defined(@var("nosuchsym_xyz"))` is 0, and guards the use.
        let mut q = gvar("nosuchsym_xyz", &[]);
        q.relocs = vec![Reloc {
            konst: 7,
            kind: RelocKind::Exists,
        }];
        let mut yes = gvar("counter", &[]);
        yes.relocs = vec![Reloc {
            konst: 6,
            kind: RelocKind::Exists,
        }];
        let k = run_vars(
            vec![gvar("nosuchsym_xyz", &[]), q, yes],
            &[("counter", 0x10)],
        )
        .unwrap();
        assert_eq!(k[..5], [0, 0, 0, 0, 0]);
        assert_eq!((k[6], k[7]), (1, 0));
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
            format!(
                "probe point 'kernel.function(\"vfs_read\")' has no parameter 'foo' \
                 (similar: pos, buf, file, count) \
                 (BTF of the running kernel: parameters are file, buf, count, pos; {NO_GLOBALS})"
            )
        );
        let e = run(var("file", &["nope"], f())).unwrap_err().to_string();
        assert!(
            e.contains("$file->nope") && e.contains("struct file has no member 'nope'"),
            "{e}"
        );
        // A bitfield: int f_flags:3 at bit 256, the low bits of the word at
        // byte 32; signed, so shifted up by 61 and arithmetically back.
        let mut tv = var("file", &["f_flags"], f());
        let n = tv.relocs.len() as u32;
        tv.relocs.push(Reloc {
            konst: n,
            kind: RelocKind::RShift,
        });
        assert_eq!(run(tv).unwrap(), [0, 0, 0, 32, 1, 61, -1, 61]);
        // An image from before RShift shifts right by Shift as well.
        assert_eq!(
            run(var("file", &["f_flags"], f())).unwrap(),
            [0, 0, 0, 32, 1, 61, -1]
        );
        let e = run(var("file", &["f_flags", "x"], f()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'f_flags' is a bitfield: it has no members"),
            "{e}"
        );
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
    fn cast_conditions_answered_by_the_casts_defined() {
        let cast = || TargetSite::Cast("file".into());
        // `@defined(@cast(p, "file")->f_path) ? … : @cast(p, "file")->nope`.
        let mut q = var("file", &["f_path"], cast());
        q.relocs = vec![Reloc {
            konst: 0,
            kind: RelocKind::Exists,
        }];
        let mut fallback = var("file", &["nope"], cast());
        for r in &mut fallback.relocs {
            r.konst += 1;
        }
        let n = fallback.relocs.len() + 1;
        fallback.conds = vec![vm_spec::program::TargetCond {
            name: cast_cond_name("file"),
            fields: vec!["f_path".into()],
            defined: false,
        }];
        // A parameter use in a probe under the same question.
        let mut param = var("nope", &[], f());
        for r in &mut param.relocs {
            r.konst += n as u32;
        }
        param.conds = fallback.conds.clone();
        let total = n + param.relocs.len();
        let mut prog = Program {
            konsts: vec![7; total],
            target_vars: vec![q.clone(), fallback.clone(), param.clone()],
            probes: one_probe(),
            ..Default::default()
        };
        let btf = Btf::parse(sample()).unwrap();
        apply_with(&mut prog, &[Some(("vfs_read".into(), 0))], &btf).unwrap();
        assert_eq!(prog.konsts[0], 1, "file has f_path");
        assert!(prog.konsts[1..].iter().all(|k| *k == 7), "dead uses stay");
        // Where the answer is the one the uses run under, they are errors.
        for tv in [&mut fallback, &mut param] {
            tv.conds[0].defined = true;
        }
        let mut prog = Program {
            konsts: vec![7; total],
            target_vars: vec![q.clone(), fallback],
            probes: one_probe(),
            ..Default::default()
        };
        let e = apply_with(&mut prog, &[Some(("vfs_read".into(), 0))], &btf).unwrap_err();
        assert!(e.to_string().contains("no member 'nope'"), "{e}");
        let mut prog = Program {
            konsts: vec![7; total],
            target_vars: vec![q, param],
            probes: one_probe(),
            ..Default::default()
        };
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

    /// BTF with `vfs_read`/`vfs_write(struct file *file, ...)` and
    /// `splice(int fd, struct file *file)`: `$file` in slot 0 or 1.
    fn two_layouts() -> Btf {
        use crate::btf::tests::Builder;
        let mut b = Builder::new();
        let int = b.int("int", 4, true);
        let file = b.compound(false, "file", 8, &[("f_mode", int, 0, 0)]);
        let pfile = b.ptr(file);
        for f in ["vfs_read", "vfs_write"] {
            b.func(f, int, &[("file", pfile), ("count", int)]);
        }
        b.func("splice", int, &[("fd", int), ("file", pfile)]);
        b.func("bare", int, &[("fd", int)]);
        Btf::parse(b.build()).unwrap()
    }

    /// A kprobe on handler 0 named as a wildcard expands it.
    fn kprobe(sym: &str) -> Probe {
        Probe {
            kind: vm_spec::abi::STP_PROBE_KPROBE as u8,
            flags: 0,
            handler: 0,
            target: ProbeTarget::Symbol {
                name: sym.into(),
                offset: 0,
            },
            maxactive: 0,
            period_ns: 0,
            randomize: 0,
            perf: None,
            watch: None,
            netfilter: None,
            uprobe: None,
            display: "kernel.function(\"*\")".into(),
        }
    }

    /// Handler 0 loads each of the `n` constants once (as the compiler's
    /// code does), then returns.
    fn program(tvs: Vec<TargetVar>, n: u32, syms: &[&str]) -> Program {
        use vm_spec::program::{Handler, Insn};
        let mut code: Vec<Insn> = (0..n)
            .map(|k| Insn::new(vm_spec::abi::STP_OP_LDK, 0, 0, 0, k as i32))
            .collect();
        code.push(Insn::new(vm_spec::abi::STP_OP_RET, 0, 0, 0, 0));
        let locs = vec![SrcLoc::default(); code.len()];
        Program {
            konsts: vec![0; n as usize],
            handlers: vec![Handler {
                ctx: vm_spec::abi::STP_CTX_KPROBE as u8,
                nregs: 1,
                code,
                locs,
                ..Default::default()
            }],
            probes: syms.iter().map(|s| kprobe(s)).collect(),
            target_vars: tvs,
            ..Default::default()
        }
    }

    fn symbols(syms: &[&str]) -> Vec<Option<(String, u32)>> {
        syms.iter().map(|s| Some((s.to_string(), 0))).collect()
    }

    #[test]
    fn probes_whose_constants_differ_get_copies_of_their_handler() {
        let syms = ["vfs_read", "splice", "vfs_write"];
        let tv = var("file", &["f_mode"], TargetSite::Function("*".into()));
        let n = tv.relocs.len() as u32;
        let mut prog = program(vec![tv], n, &syms);
        apply_with(&mut prog, &symbols(&syms), &two_layouts()).unwrap();
        // vfs_read and vfs_write share handler 0 ($file in slot 0); splice
        // has a copy whose constants say slot 1.
        assert_eq!(prog.handlers.len(), 2);
        let hs: Vec<u32> = prog.probes.iter().map(|p| p.handler).collect();
        assert_eq!(hs, [0, 1, 0]);
        assert_eq!(prog.target_vars.len(), 2);
        let copy = &prog.target_vars[1];
        assert_eq!(copy.handler, 1);
        let arg = |tv: &TargetVar| prog.konsts[tv.relocs[0].konst as usize];
        assert_eq!((arg(&prog.target_vars[0]), arg(copy)), (0, 1));
        // The copy's code loads its own constants, the original's stay.
        let loaded = |h: usize| -> Vec<i32> {
            prog.handlers[h]
                .code
                .iter()
                .filter(|i| u32::from(i.op) == vm_spec::abi::STP_OP_LDK)
                .map(|i| i.imm)
                .collect()
        };
        assert_eq!(loaded(0), (0..n as i32).collect::<Vec<_>>());
        let want: Vec<i32> = copy.relocs.iter().map(|r| r.konst as i32).collect();
        assert_eq!(loaded(1), want);
        assert!(want.iter().all(|&k| k >= n as i32));
        // Same member offset and shape in both.
        for (a, b) in prog.target_vars[0].relocs.iter().zip(&copy.relocs) {
            if a.kind != RelocKind::ArgIndex {
                assert_eq!(prog.konsts[a.konst as usize], prog.konsts[b.konst as usize]);
            }
        }
        // One layout only: no copy.
        let tv = var("file", &[], TargetSite::Function("*".into()));
        let mut prog = program(vec![tv], n - 2, &["vfs_read", "vfs_write"]);
        apply_with(
            &mut prog,
            &symbols(&["vfs_read", "vfs_write"]),
            &two_layouts(),
        )
        .unwrap();
        assert_eq!((prog.handlers.len(), prog.target_vars.len()), (1, 1));
    }

    #[test]
    fn a_function_without_the_variable_is_an_error_unless_defined_guards_it() {
        let syms = ["vfs_read", "bare"];
        let tv = var("file", &[], TargetSite::Function("*".into()));
        let n = tv.relocs.len() as u32;
        let mut prog = program(vec![tv.clone()], n, &syms);
        let e = apply_with(&mut prog, &symbols(&syms), &two_layouts())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "probe point 'kernel.function(\"*\")' (function bare) has no parameter 'file'"
            ),
            "{e}"
        );
        // With @defined($file) in the handler: bare's copy answers 0 and
        // leaves the use at 0.
        let mut q = tv.clone();
        q.relocs = vec![Reloc {
            konst: n,
            kind: RelocKind::Exists,
        }];
        let mut prog = program(vec![tv, q], n + 1, &syms);
        apply_with(&mut prog, &symbols(&syms), &two_layouts()).unwrap();
        assert_eq!(prog.probes[1].handler, 1);
        let copy: Vec<&TargetVar> = prog.target_vars.iter().filter(|t| t.handler == 1).collect();
        assert_eq!(copy.len(), 2);
        let k = |t: &TargetVar, i: usize| prog.konsts[t.relocs[i].konst as usize];
        assert_eq!(k(&prog.target_vars[1], 0), 1, "vfs_read has $file");
        assert_eq!(k(copy[1], 0), 0, "bare has not");
        assert!(copy[0]
            .relocs
            .iter()
            .all(|r| prog.konsts[r.konst as usize] == 0));
        // @defined($file) guards $file->f_mode where it is 0 (bare), not
        // where $file exists and the member does not.
        let chain = var("file", &["f_mode"], TargetSite::Function("*".into()));
        let n = chain.relocs.len() as u32;
        let mut q = var("file", &[], TargetSite::Function("*".into()));
        q.relocs = vec![Reloc {
            konst: n,
            kind: RelocKind::Exists,
        }];
        let mut prog = program(vec![chain.clone(), q.clone()], n + 1, &syms);
        apply_with(&mut prog, &symbols(&syms), &two_layouts()).unwrap();
        assert_eq!(prog.handlers.len(), 2);
        let mut bad = chain;
        bad.fields = vec!["nope".into()];
        let mut prog = program(vec![bad, q], n + 1, &syms);
        let e = apply_with(&mut prog, &symbols(&syms), &two_layouts())
            .unwrap_err()
            .to_string();
        assert!(e.contains("struct file has no member 'nope'"), "{e}");
        // `@defined($file) ? $file : $fd`: $fd runs only where $file is
        // absent (bare has it, vfs_read has not: it never runs there).
        let mut fd = var("fd", &[], TargetSite::Function("*".into()));
        fd.conds = vec![vm_spec::program::TargetCond {
            name: "file".into(),
            fields: vec![],
            defined: false,
        }];
        let n = fd.relocs.len() as u32;
        let mut q = var("file", &[], TargetSite::Function("*".into()));
        q.relocs = vec![Reloc {
            konst: n,
            kind: RelocKind::Exists,
        }];
        let mut prog = program(vec![fd.clone(), q.clone()], n + 1, &syms);
        apply_with(&mut prog, &symbols(&syms), &two_layouts()).unwrap();
        let bare = prog.probes[1].handler;
        let arg = |h: u32| {
            let tv = prog
                .target_vars
                .iter()
                .find(|t| t.handler == h && t.name == "fd");
            prog.konsts[tv.unwrap().relocs[0].konst as usize]
        };
        assert_eq!((arg(0), arg(bare)), (0, 0));
        assert_eq!(prog.handlers.len(), 2);
        // Without the condition, vfs_read's $fd is an error.
        fd.conds.clear();
        let mut prog = program(vec![fd, q], n + 1, &syms);
        let e = apply_with(&mut prog, &symbols(&syms), &two_layouts())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'kernel.function(\"*\")' (function vfs_read) has no parameter 'fd'"),
            "{e}"
        );
    }

    #[test]
    fn index_steps_and_addresses() {
        // $buf[2] of `char *buf`: step 1 is one byte per index, read, then
        // sign-extended from 8 bits.
        let mut tv = var("buf", &["[]"], f());
        tv.relocs[3].kind = RelocKind::ElemSize(1);
        assert_eq!(run(tv).unwrap(), [1, 0, 0, 1, 1, 56, -1]);
        // &@cast(0, "task")[1]: sizeof(struct task), no read, no narrowing.
        let mut tv = cast("task", &["[]"]);
        tv.relocs.truncate(3);
        tv.relocs[2].kind = RelocKind::ElemSize(1);
        tv.addr_of = true;
        assert_eq!(run(tv).unwrap(), [0, 0, 32]);
        // &@cast(p, "task")->comm[3]: offset 4, then 1 byte per index.
        let mut tv = cast("task", &["comm", "[]"]);
        tv.relocs.truncate(5);
        tv.relocs[4].kind = RelocKind::ElemSize(2);
        tv.addr_of = true;
        assert_eq!(run(tv).unwrap(), [0, 0, 4, 0, 1]);
        // &$file->f_path: an embedded struct's address.
        let mut tv = var("file", &["f_path"], f());
        tv.relocs.truncate(4);
        tv.addr_of = true;
        assert_eq!(run(tv).unwrap(), [0, 0, 0, 8]);
        let mut tv = var("file", &["f_flags"], f());
        tv.addr_of = true;
        let e = run(tv).unwrap_err().to_string();
        assert!(e.contains("cannot take the address of a bit field"), "{e}");
        let mut tv = var("count", &["[]"], f());
        tv.relocs[3].kind = RelocKind::ElemSize(1);
        let e = run(tv).unwrap_err().to_string();
        assert!(e.contains("'[i]' applied to size_t"), "{e}");
    }

    #[test]
    fn a_compiled_wildcard_and_multi_point_probe_loads_verified() {
        // The compiler's real code: a wildcard expanded by resolve, plus a
        // second point; splice's $file is in another slot, so its probe
        // gets a copy of the handler; the image verifies.
        let src = r#"probe kernel.function("vfs_*"), kernel.function("splice") {
                       if (@defined($file)) println($file->f_mode, " ", $count) }"#;
        let c = compiler::compile("t.stp", src, &compiler::Options::default())
            .unwrap_or_else(|f| panic!("{}", f.rendered));
        let text = "ffffffff81000000 T vfs_read\nffffffff81000010 T vfs_write\n\
                    ffffffff81000020 T splice\n";
        let wanted: std::collections::HashSet<String> = ["splice".to_string()].into();
        let k = crate::kallsyms::Kallsyms::scan(
            text.as_bytes(),
            &wanted,
            &std::collections::HashSet::new(),
            &["vfs_*".to_string()],
        )
        .unwrap();
        let r = crate::resolve::resolve_with(&c.program, &k).unwrap();
        let mut prog = r.program;
        // splice has no $count: an error, as in stap.
        let e = apply_with(&mut prog.clone(), &r.symbols, &two_layouts())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("(function splice) has no parameter 'count'")
                || e.contains("'kernel.function(\"splice\")' has no parameter 'count'"),
            "{e}"
        );
        let src2 = src.replace("$count", "@choose_defined($count, -1)");
        let c = compiler::compile("t.stp", &src2, &compiler::Options::default())
            .unwrap_or_else(|f| panic!("{}", f.rendered));
        let r = crate::resolve::resolve_with(&c.program, &k).unwrap();
        prog = r.program;
        let nh = prog.handlers.len();
        apply_with(&mut prog, &r.symbols, &two_layouts()).unwrap();
        assert_eq!(prog.probes.len(), 3);
        assert_eq!(prog.handlers.len(), nh + 1);
        let splice = prog
            .probes
            .iter()
            .position(|p| {
                p.target
                    == ProbeTarget::Symbol {
                        name: "splice".into(),
                        offset: 0,
                    }
            })
            .unwrap();
        assert_eq!(prog.probes[splice].handler as usize, nh);
        let img = vm_spec::image::build(&prog, &r.symbols).unwrap();
        vm_spec::core::verify_image(&img).expect("verifies");
    }
    #[test]
    fn parms_lists_each_function_s_btf_parameters() {
        use crate::btf::tests::Builder;
        let mut b = Builder::new();
        let int = b.int("int", 4, true);
        let uchar = b.int("unsigned char", 1, false);
        let file = b.compound(false, "file", 8, &[("f_mode", int, 0, 0)]);
        let pfile = b.ptr(file);
        b.func(
            "listed",
            int,
            &[
                ("dfd", int),
                ("a_name_longer_than_eight", pfile),
                ("c", uchar),
            ],
        );
        b.func("bare", int, &[("fd", int)]);
        b.func("none", int, &[]);
        let btf = Btf::parse(b.build()).unwrap();
        let src = r#"probe kernel.function("listed"), kernel.function("bare"),
                       kernel.function("none") { printf("%s|%s|%s\n", $$parms, $$vars, $$locals) }"#;
        let c = compiler::compile("t.stp", src, &compiler::Options::default())
            .unwrap_or_else(|f| panic!("{}", f.rendered));
        let text = "ffffffff81000000 T listed\nffffffff81000010 T bare\n\
                    ffffffff81000020 T none\n";
        let wanted: std::collections::HashSet<String> =
            ["listed", "bare", "none"].map(String::from).into();
        let k = crate::kallsyms::Kallsyms::scan(
            text.as_bytes(),
            &wanted,
            &std::collections::HashSet::new(),
            &[],
        )
        .unwrap();
        let r = crate::resolve::resolve_with(&c.program, &k).unwrap();
        let mut prog = r.program;
        apply_with(&mut prog, &r.symbols, &btf).unwrap();
        let env = vm_testkit::HostEnv {
            args: [-100, 0xffff_8880_0000_1000u64 as i64, 0x1ff, 7, 8, 9],
            ..Default::default()
        };
        let mut out = Vec::new();
        for fname in ["listed", "bare", "none"] {
            let p = prog
                .probes
                .iter()
                .find(|p| {
                    p.target
                        == ProbeTarget::Symbol {
                            name: fname.into(),
                            offset: 0,
                        }
                })
                .unwrap();
            let mut s = vm_testkit::host::HostSession::from_program(&prog).unwrap();
            s.run_handler(p.handler, &env).unwrap();
            out.push(String::from_utf8(s.output()).unwrap());
        }
        let listed = "dfd=0xffffffffffffff9c a_name_longer_than_eight=0xffff888000001000 c=0xff";
        assert_eq!(
            out,
            [
                format!("{listed}|{listed}|\n"),
                "fd=0xffffffffffffff9c|fd=0xffffffffffffff9c|\n".to_string(),
                "||\n".to_string(),
            ]
        );
    }

    #[test]
    fn pretty_printing_builds_nodes_from_btf_and_prints_like_stap() {
        use crate::btf::tests::Builder;
        let mut b = Builder::new();
        let int = b.int("int", 4, true);
        let long = b.int("long int", 8, true);
        let uchar = b.int("unsigned char", 1, false);
        let chr = b.int("char", 1, true);
        let pchar = b.ptr(chr);
        let pvoid = b.ptr(0);
        let path = b.compound(
            false,
            "path",
            16,
            &[("mnt", pvoid, 0, 0), ("depth", int, 64, 4)],
        );
        let anon = b.compound(true, "", 8, &[("a", int, 0, 0), ("b", long, 0, 0)]);
        let comm = b.array(chr, int, 8);
        let file = b.compound(
            false,
            "file",
            48,
            &[
                ("f_mode", int, 0, 0),
                ("name", pchar, 64, 0),
                ("f_path", path, 128, 0),
                ("", anon, 256, 0),
                ("comm", comm, 320, 0),
            ],
        );
        let pfile = b.ptr(file);
        b.func("listed", int, &[("file", pfile), ("n", int), ("c", uchar)]);
        let btf = Btf::parse(b.build()).unwrap();
        let src = r#"probe kernel.function("listed") {
            printf("%s\n%s\n%s\n%s|%s\n", $file$, $file$$, $$parms$, $file->comm$, $n$)
            printf("%s\n", @cast($file, "file")$)
        }"#;
        let c = compiler::compile("t.stp", src, &compiler::Options::default())
            .unwrap_or_else(|f| panic!("{}", f.rendered));
        let wanted: std::collections::HashSet<String> = ["listed"].map(String::from).into();
        let k = crate::kallsyms::Kallsyms::scan(
            &b"ffffffff81000000 T listed\n"[..],
            &wanted,
            &std::collections::HashSet::new(),
            &[],
        )
        .unwrap();
        let r = crate::resolve::resolve_with(&c.program, &k).unwrap();
        let mut prog = r.program;
        apply_with(&mut prog, &r.symbols, &btf).unwrap();
        // One tree per use: $file$ (1 level), $file$$ (nested), the
        // parameters' three, $file->comm$, $n$; every node verified.
        assert!(!prog.pretty.is_empty());
        let img = vm_spec::image::build(&prog, &r.symbols).unwrap();
        vm_spec::core::verify_image(&img).expect("verifies");
        let base: u64 = 0xffff_8880_0000_1000;
        let mut m = vec![0u8; 0x200];
        m[0..4].copy_from_slice(&7i32.to_le_bytes());
        m[8..16].copy_from_slice(&(base + 0x100).to_le_bytes());
        m[24] = 0xf5; // depth:4 = 5 under other bits
        m[32..40].copy_from_slice(&9i64.to_le_bytes());
        m[40..45].copy_from_slice(b"bash\0");
        m[0x100..0x103].copy_from_slice(b"hi\0");
        let env = vm_testkit::HostEnv {
            args: [base as i64, -3, 0x41, 0, 0, 0],
            memory: vec![(base, m)],
            ..Default::default()
        };
        let mut s = vm_testkit::host::HostSession::from_program(&prog).unwrap();
        s.run_handler(prog.probes[0].handler, &env).unwrap();
        let one = "{.f_mode=7, .name=\"hi\", .f_path={...}, <union>={...}, .comm=[...]}";
        assert_eq!(
            String::from_utf8(s.output()).unwrap(),
            format!(
                "{one}\n{{.f_mode=7, .name=\"hi\", .f_path={{.mnt=0x0, .depth=5}}, \
                 <union>={{.a=9, .b=9}}, .comm=\"bash\"}}\n\
                 file={one} n=-3 c='A'\n\"bash\"|-3\n{one}\n"
            )
        );
    }

    #[test]
    fn pretty_return_prints_the_btf_return_type() {
        use crate::btf::tests::Builder;
        let mut b = Builder::new();
        let int = b.int("int", 4, true);
        let chr = b.int("char", 1, true);
        let pchar = b.ptr(chr);
        let file = b.compound(
            false,
            "file",
            16,
            &[("f_mode", int, 0, 0), ("name", pchar, 64, 0)],
        );
        let pfile = b.ptr(file);
        b.func("opener", pfile, &[("n", int)]);
        b.func("counter", int, &[("n", int)]);
        let btf = Btf::parse(b.build()).unwrap();
        let src = r#"probe kernel.function("opener").return, kernel.function("counter").return {
            printf("%s|%s\n", $return$, $$return$$)
        }"#;
        let c = compiler::compile("t.stp", src, &compiler::Options::default())
            .unwrap_or_else(|f| panic!("{}", f.rendered));
        let wanted: std::collections::HashSet<String> =
            ["opener", "counter"].map(String::from).into();
        let k = crate::kallsyms::Kallsyms::scan(
            &b"ffffffff81000000 T opener\nffffffff81000010 T counter\n"[..],
            &wanted,
            &std::collections::HashSet::new(),
            &[],
        )
        .unwrap();
        let r = crate::resolve::resolve_with(&c.program, &k).unwrap();
        let mut prog = r.program;
        apply_with(&mut prog, &r.symbols, &btf).unwrap();
        let img = vm_spec::image::build(&prog, &r.symbols).unwrap();
        vm_spec::core::verify_image(&img).expect("verifies");
        let base: u64 = 0xffff_8880_0000_1000;
        let mut m = vec![0u8; 0x100];
        m[0..4].copy_from_slice(&7i32.to_le_bytes());
        m[8..16].copy_from_slice(&(base + 0x80).to_le_bytes());
        m[0x80..0x83].copy_from_slice(b"ok\0");
        let mut out = Vec::new();
        for (fname, retval) in [("opener", base as i64), ("counter", -2)] {
            let p = prog
                .probes
                .iter()
                .find(|p| {
                    p.target
                        == ProbeTarget::Symbol {
                            name: fname.into(),
                            offset: 0,
                        }
                })
                .unwrap();
            let env = vm_testkit::HostEnv {
                retval,
                memory: vec![(base, m.clone())],
                ..Default::default()
            };
            let mut s = vm_testkit::host::HostSession::from_program(&prog).unwrap();
            s.run_handler(p.handler, &env).unwrap();
            out.push(String::from_utf8(s.output()).unwrap());
        }
        // Each function's own return type: the two probes get a handler each.
        assert_eq!(
            out,
            [
                "{.f_mode=7, .name=\"ok\"}|return={.f_mode=7, .name=\"ok\"}\n",
                "-2|return=-2\n"
            ]
        );
    }

    #[test]
    fn netfilter_arguments_resolve_on_this_kernel() {
        // A netfilter probe has no symbol: its $skb (slot 1) and $hooknum
        // (slot 0) still resolve, from the running kernel's BTF (skipped
        // where there is none to read).
        let Ok(Ok(btf)) = Btf::vmlinux() else {
            return;
        };
        let src = r#"probe netfilter.hook("NF_INET_LOCAL_IN").pf("NFPROTO_IPV4") {
                       println($skb->len, " ", $hooknum, " ", $in) }"#;
        let c = compiler::compile("t.stp", src, &compiler::Options::default())
            .unwrap_or_else(|f| panic!("{}", f.rendered));
        let mut prog = c.program;
        let symbols = vec![None; prog.probes.len()];
        apply_with(&mut prog, &symbols, &btf).unwrap();
        let slot = |name: &str| {
            let tv = prog.target_vars.iter().find(|t| t.name == name).unwrap();
            let k = |kind: RelocKind| {
                tv.relocs
                    .iter()
                    .find(|r| r.kind == kind)
                    .map(|r| prog.konsts[r.konst as usize])
            };
            (k(RelocKind::ArgIndex), k(RelocKind::Mask))
        };
        assert_eq!(slot("skb").0, Some(1));
        assert_ne!(slot("skb").1, Some(0));
        assert_eq!(slot("hooknum").0, Some(0));
        assert_eq!(slot("in").0, Some(2));
        assert_eq!(slot("in").1, Some(-1));
    }
}
