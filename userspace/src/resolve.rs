//! Load-time resolution of a program's probe targets on the running kernel:
//! each probe's symbol is looked up in `/proc/kallsyms`; an unresolvable
//! optional probe (`?`) is dropped from the program with a warning, any
//! other one is an error naming the probe point. The result is the program
//! to turn into an image plus the symbol chosen for each of its probes.
use crate::kallsyms::{is_pattern, pattern_names, Kallsyms, ResolveError, KALLSYMS_PATH};
use crate::tracepoints::Tracepoint;
use std::collections::HashSet;
use thiserror::Error;
use vm_spec::abi;
use vm_spec::program::{ProbeTarget, Program};

/// Why a program cannot be armed on this kernel.
#[derive(Debug, Error)]
pub enum Error {
    /// A mandatory probe point has no symbol here.
    #[error("probe point '{display}' cannot be resolved: {why}")]
    Unresolved {
        /// The probe point as written.
        display: String,
        /// What is missing.
        why: ResolveError,
    },
    /// Every probe was optional and none resolved.
    #[error("no probes left to arm: every probe point was optional and unresolvable")]
    NoProbes,
    /// Wildcards expand to more probes than the module takes.
    #[error("probe point '{display}' expands to {count} probes: more than the {max} a session may have (narrow the wildcard)")]
    TooMany {
        /// The probe point as written.
        display: String,
        /// Probes of the program after expanding it.
        count: usize,
        /// `abi::STP_MAX_PROBES`.
        max: u32,
    },
    /// A wildcard tracepoint point whose handler reads target variables.
    #[error("probe point '{display}' matches {count} tracepoints, whose arguments differ: target variables need one tracepoint per probe point (name them, or use @defined)")]
    WildcardTargetVars {
        /// The probe point as written.
        display: String,
        /// Tracepoints it matched.
        count: usize,
    },
    /// /proc/kallsyms could not be read.
    #[error("cannot read {KALLSYMS_PATH}: {0}")]
    Kallsyms(std::io::Error),
    /// A `kernel.data("SYMBOL")` watchpoint has no address.
    #[error("{0}")]
    Watch(#[from] crate::watch::Error),
    /// An absolute statement probe's address has no symbol.
    #[error("{0}")]
    Absolute(#[from] crate::absolute::Error),
    /// A statement probe by source line cannot be placed.
    #[error(transparent)]
    Statement(#[from] crate::statements::Error),
    /// A user-space probe cannot be placed.
    #[error(transparent)]
    Uprobe(#[from] crate::uprobes::Error),
}

/// A program ready for `image::build`.
#[derive(Debug)]
pub struct Resolved {
    /// The program, without the optional probes that did not resolve.
    /// Handlers are kept in place so run-time error records still index
    /// the same handlers.
    pub program: Program,
    /// The symbol chosen for each probe of `program` (`image::build`'s input).
    pub symbols: Vec<Option<(String, u32)>>,
    /// One warning per optional probe dropped.
    pub warnings: Vec<String>,
    /// Each wildcard probe point and the number of functions it matched
    /// (for `-v`).
    pub expanded: Vec<(String, usize)>,
}

/// Resolves against an already read symbol set (and no tracepoint list:
/// see `resolve_with_tracepoints`).
pub fn resolve_with(prog: &Program, syms: &Kallsyms) -> Result<Resolved, Error> {
    resolve_with_tracepoints(prog, syms, &[])
}

/// Resolves against an already read symbol set and tracepoint list (for
/// `kernel.trace` globs and `SYSTEM:NAME`).
pub fn resolve_with_tracepoints(
    prog: &Program,
    syms: &Kallsyms,
    tracepoints: &[Tracepoint],
) -> Result<Resolved, Error> {
    let mut program = prog.clone();
    program.probes.clear();
    let mut symbols = Vec::with_capacity(prog.probes.len());
    let mut warnings = Vec::new();
    let mut expanded = Vec::new();
    // '!': set once a sufficient point of the current declaration resolved;
    // its following alternatives are then not tried (stap's derive_probes).
    let mut satisfied = false;
    for p in &prog.probes {
        let flags = u32::from(p.flags);
        if flags & abi::STP_PROBE_F_ALTERNATIVE == 0 {
            satisfied = false;
        } else if satisfied {
            continue;
        }
        let before = program.probes.len();
        resolve_one(
            p,
            syms,
            tracepoints,
            prog,
            &mut program,
            &mut symbols,
            &mut warnings,
            &mut expanded,
        )?;
        if flags & abi::STP_PROBE_F_SUFFICIENT != 0 && program.probes.len() > before {
            satisfied = true;
        }
    }
    drop_module_duplicates(&mut program, &mut symbols);
    if program.probes.is_empty() && !prog.probes.is_empty() {
        return Err(Error::NoProbes);
    }
    Ok(Resolved {
        program,
        symbols,
        warnings,
        expanded,
    })
}

/// Drops a `kernel.function(...)` probe that resolved to a module's
/// function (`m:f`) when a probe of the same handler and kind resolved to
/// the same place (`{kernel,module("ext4")}.function("f")`, enospc.stp):
/// stap's `kernel.function` sees vmlinux only, so the handler runs once
/// per call there, not once per point.
fn drop_module_duplicates(program: &mut Program, symbols: &mut Vec<Option<(String, u32)>>) {
    let n = program.probes.len().min(symbols.len());
    let mut keep = vec![true; n];
    for i in 0..n {
        let p = &program.probes[i];
        let Some((sym, off)) = &symbols[i] else {
            continue;
        };
        if !p.display.starts_with("kernel.") || !sym.contains(':') {
            continue;
        }
        keep[i] = !(0..n).any(|j| {
            j != i
                && keep[j]
                && program.probes[j].handler == p.handler
                && program.probes[j].kind == p.kind
                && symbols[j].as_ref() == Some(&(sym.clone(), *off))
        });
    }
    let mut it = keep.iter();
    program.probes.retain(|_| *it.next().unwrap_or(&true));
    let mut it = keep.iter();
    symbols.retain(|_| *it.next().unwrap_or(&true));
}

/// Resolves one probe of the program into `program` and `symbols` (none
/// for an optional one that does not resolve, several for a wildcard).
#[allow(clippy::too_many_arguments)]
fn resolve_one(
    p: &vm_spec::program::Probe,
    syms: &Kallsyms,
    tracepoints: &[Tracepoint],
    prog: &Program,
    program: &mut Program,
    symbols: &mut Vec<Option<(String, u32)>>,
    warnings: &mut Vec<String>,
    expanded: &mut Vec<(String, usize)>,
) -> Result<(), Error> {
    let max = abi::STP_MAX_PROBES as usize;
    // User-space probes were placed (crate::uprobes): the symbol is the
    // binary's path.
    if let (true, ProbeTarget::User { path, .. }) = (p.is_uprobe(), &p.target) {
        program.probes.push(p.clone());
        symbols.push(Some((path.clone(), 0)));
        return Ok(());
    }
    if let (true, ProbeTarget::Symbol { name, .. }) =
        (u32::from(p.kind) == abi::STP_PROBE_TRACEPOINT, &p.target)
    {
        // With no list (no tracefs, kallsyms unreadable), a plain name
        // goes to stapvm.ko, which looks it up when arming.
        if !crate::tracepoints::needs_expansion(name)
            && (tracepoints.is_empty() || tracepoints.iter().any(|t| t.name == *name))
        {
            program.probes.push(p.clone());
            symbols.push(Some((name.clone(), 0)));
            return Ok(());
        }
        let list = crate::tracepoints::matches(name, tracepoints);
        if list.is_empty() {
            let why = ResolveError::NoTracepoint(name.clone());
            if u32::from(p.flags) & abi::STP_PROBE_F_OPTIONAL != 0 {
                warnings.push(format!(
                    "optional probe point '{}' skipped: {why}",
                    p.display
                ));
                return Ok(());
            }
            return Err(Error::Unresolved {
                display: p.display.clone(),
                why,
            });
        }
        // Target variables are laid out for one tracepoint's arguments:
        // a handler shared by several cannot have them.
        if list.len() > 1 && prog.target_vars.iter().any(|tv| tv.handler == p.handler) {
            return Err(Error::WildcardTargetVars {
                display: p.display.clone(),
                count: list.len(),
            });
        }
        if program.probes.len() + list.len() > max {
            return Err(Error::TooMany {
                display: p.display.clone(),
                count: program.probes.len() + list.len(),
                max: abi::STP_MAX_PROBES,
            });
        }
        if list.len() > 1 || name.contains(['*', '?', '[']) {
            expanded.push((p.display.clone(), list.len()));
        }
        for t in list {
            program.probes.push(vm_spec::program::Probe {
                target: ProbeTarget::Symbol {
                    name: t.clone(),
                    offset: 0,
                },
                display: expanded_display(&p.display, &t),
                ..p.clone()
            });
            symbols.push(Some((t, 0)));
        }
        return Ok(());
    }
    if let ProbeTarget::Symbol { name, offset } = &p.target {
        let list = if is_pattern(name) {
            syms.pattern_matches(name)
        } else {
            Vec::new()
        };
        if !list.is_empty() {
            if program.probes.len() + list.len() > max {
                return Err(Error::TooMany {
                    display: p.display.clone(),
                    count: program.probes.len() + list.len(),
                    max: abi::STP_MAX_PROBES,
                });
            }
            expanded.push((p.display.clone(), list.len()));
            // (A module's statement keeps its offset: `m:f` is a
            // pattern, crate::statements.)
            for f in list {
                program.probes.push(vm_spec::program::Probe {
                    target: ProbeTarget::Symbol {
                        name: f.clone(),
                        offset: *offset,
                    },
                    display: if *offset == 0 {
                        expanded_display(&p.display, &f)
                    } else {
                        p.display.clone()
                    },
                    ..p.clone()
                });
                symbols.push(Some((f, *offset)));
            }
            return Ok(());
        }
    }
    // A compiler clone stands for a function only when the handler reads
    // no parameters (`@cast` needs no function): BTF describes the
    // function, not the clone.
    let reads_params = prog.target_vars.iter().any(|tv| {
        tv.handler == p.handler && !matches!(tv.site, vm_spec::program::TargetSite::Cast(_))
    });
    match syms.resolve(&p.target, !reads_params) {
        Ok(sym) => {
            program.probes.push(p.clone());
            symbols.push(sym);
        }
        Err(why) if u32::from(p.flags) & abi::STP_PROBE_F_OPTIONAL != 0 => {
            warnings.push(format!(
                "optional probe point '{}' skipped: {why}",
                p.display
            ));
        }
        Err(why) => {
            return Err(Error::Unresolved {
                display: p.display.clone(),
                why,
            })
        }
    }
    Ok(())
}

/// The probe point one match of a wildcard stands for, as stap's pp()
/// names it: the quoted pattern of `function("…")` or `trace("…")` in
/// `display` replaced by the match (`kernel.function("vfs_*").return` and
/// `vfs_read` give `kernel.function("vfs_read").return`; a module's
/// `ext4:ext4_sync_fs` gives `module("ext4").function("ext4_sync_fs")`).
/// A display without such a part is kept.
pub fn expanded_display(display: &str, name: &str) -> String {
    let name = name.rsplit_once(':').map_or(name, |(_, f)| f);
    for head in ["function(\"", "trace(\""] {
        let Some(at) = display.find(head) else {
            continue;
        };
        let start = at + head.len();
        let Some(len) = display[start..].find("\")") else {
            continue;
        };
        return format!("{}{name}{}", &display[..start], &display[start + len..]);
    }
    display.to_string()
}

/// ftrace's list of the functions it can trace (kprobes on others are
/// refused or unsafe), when tracefs is there.
pub(crate) const FILTER_FUNCTIONS: &[&str] = &[
    "/sys/kernel/tracing/available_filter_functions",
    "/sys/kernel/debug/tracing/available_filter_functions",
];
/// The kernel's kprobe blacklist (`0xSTART-0xEND\tname` lines).
pub(crate) const KPROBE_BLACKLIST: &str = "/sys/kernel/debug/kprobes/blacklist";

/// The names of a list file: the last (`blacklist`) or first field of
/// each line.
pub(crate) fn read_names(path: &str, last: bool) -> Option<HashSet<String>> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(
        text.lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                if last {
                    f.last()
                } else {
                    f.next()
                }
            })
            .map(str::to_string)
            .collect(),
    )
}

/// Resolves on the running kernel; `/proc/kallsyms` is read only when some
/// probe has a symbol.
pub fn resolve(prog: &Program) -> Result<Resolved, Error> {
    // Watchpoints on symbols first: they become addresses.
    let mut watch_warnings = Vec::new();
    let watched = crate::watch::resolve_running(prog, &mut watch_warnings)?;
    let prog = watched.as_ref().unwrap_or(prog);
    // Absolute statement probes: addresses become symbol + offset.
    let placed = crate::absolute::resolve_running(prog)?;
    let prog = placed.as_ref().unwrap_or(prog);
    // Statements by source line: the debuginfo's line table gives each
    // line's function + offset.
    let lines = crate::statements::resolve_running(prog)?;
    let (prog, line_warnings) = match &lines {
        Some((p, w)) => (p, w.clone()),
        None => (prog, Vec::new()),
    };
    // User-space probes: binaries, functions, file offsets.
    let user = crate::uprobes::place(prog)?;
    let (prog, user_warnings, user_expanded) = match &user {
        Some((p, w, e)) => (p, w.clone(), e.clone()),
        None => (prog, Vec::new(), Vec::new()),
    };
    let mut r = resolve_kernel(prog)?;
    r.warnings.splice(
        0..0,
        watch_warnings
            .into_iter()
            .chain(line_warnings)
            .chain(user_warnings),
    );
    r.expanded.splice(0..0, user_expanded);
    Ok(r)
}

/// `resolve` once the watchpoints have their addresses.
fn resolve_kernel(prog: &Program) -> Result<Resolved, Error> {
    let kallsyms_target = |p: &&vm_spec::program::Probe| {
        u32::from(p.kind) != abi::STP_PROBE_TRACEPOINT
            && !p.is_uprobe()
            && !matches!(p.target, ProbeTarget::None)
    };
    let needs_symbols = prog.probes.iter().any(|p| kallsyms_target(&p));
    let syms = if needs_symbols {
        let targets: Vec<&ProbeTarget> = prog
            .probes
            .iter()
            .filter(kallsyms_target)
            .map(|p| &p.target)
            .collect();
        let mut k = Kallsyms::read(KALLSYMS_PATH, &targets).map_err(Error::Kallsyms)?;
        let patterns = pattern_names(targets.iter().copied());
        if !patterns.is_empty() {
            let allowed = FILTER_FUNCTIONS
                .iter()
                .find_map(|p| read_names(p, false).filter(|s| !s.is_empty()));
            let blacklist = read_names(KPROBE_BLACKLIST, true).unwrap_or_default();
            k.restrict(allowed.as_ref(), &blacklist);
            // `f@FILEPAT`: the source files come from the DWARF debuginfo.
            crate::debuginfo::restrict_to_source_files(
                &mut k,
                &patterns,
                &crate::debuginfo::debug_root(),
                &crate::debuginfo::kernel_release(),
            );
        }
        k
    } else {
        Kallsyms::default()
    };
    // Read once when there is a tracepoint: a missing one is then an
    // error naming it (or a skipped optional point), not a failure to arm.
    let tracepoints = if prog
        .probes
        .iter()
        .any(|p| u32::from(p.kind) == abi::STP_PROBE_TRACEPOINT)
    {
        crate::tracepoints::running_for(prog.probes.iter().filter_map(|p| {
            match (u32::from(p.kind) == abi::STP_PROBE_TRACEPOINT, &p.target) {
                (true, ProbeTarget::Symbol { name, .. }) => Some(name.as_str()),
                _ => None,
            }
        }))
    } else {
        Vec::new()
    };
    resolve_with_tracepoints(prog, &syms, &tracepoints)
}

#[cfg(test)]
mod tests {
    use super::*;
    use vm_spec::program::Probe;

    fn probe(display: &str, target: ProbeTarget, optional: bool) -> Probe {
        Probe {
            kind: abi::STP_PROBE_KPROBE as u8,
            flags: if optional {
                abi::STP_PROBE_F_OPTIONAL as u8
            } else {
                0
            },
            handler: 0,
            target,
            maxactive: 0,
            period_ns: 0,
            randomize: 0,
            perf: None,
            watch: None,
            netfilter: None,
            uprobe: None,
            display: display.into(),
        }
    }

    #[test]
    fn an_expanded_probe_is_named_by_its_match() {
        assert_eq!(
            expanded_display("kernel.function(\"vfs_*\").return", "vfs_read"),
            "kernel.function(\"vfs_read\").return"
        );
        assert_eq!(
            expanded_display(
                "module(\"ext4\").function(\"ext4_*@fs/*.c\")",
                "ext4:ext4_sync_fs"
            ),
            "module(\"ext4\").function(\"ext4_sync_fs\")"
        );
        assert_eq!(
            expanded_display("kernel.trace(\"sched:sched_*\")", "sched_switch"),
            "kernel.trace(\"sched_switch\")"
        );
        assert_eq!(expanded_display("timer.s(1)", "x"), "timer.s(1)");
    }

    fn sym(n: &str) -> ProbeTarget {
        ProbeTarget::Symbol {
            name: n.into(),
            offset: 0,
        }
    }

    /// `text` scanned for `patterns`, without filter list or blacklist.
    fn scan(text: &str, patterns: &[&str]) -> Kallsyms {
        let patterns: Vec<String> = patterns.iter().map(|p| p.to_string()).collect();
        Kallsyms::scan(text.as_bytes(), &HashSet::new(), &HashSet::new(), &patterns).unwrap()
    }

    fn kallsyms() -> Kallsyms {
        let text = "ffffffff81000000 T vfs_read\nffffffff81000010 T vfs_write\n";
        let wanted = ["vfs_read", "vfs_write", "nope"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        Kallsyms::parse(text, &wanted)
    }

    #[test]
    fn optional_unresolved_probes_are_dropped() {
        let prog = Program {
            probes: vec![
                probe("kernel.function(\"vfs_read\")", sym("vfs_read"), false),
                probe("kernel.function(\"nope\")?", sym("nope"), true),
                Probe {
                    kind: abi::STP_PROBE_BEGIN as u8,
                    ..probe("begin", ProbeTarget::None, false)
                },
            ],
            ..Default::default()
        };
        let r = resolve_with(&prog, &kallsyms()).unwrap();
        assert_eq!(r.program.probes.len(), 2);
        assert_eq!(r.program.probes[1].display, "begin");
        assert_eq!(r.symbols, vec![Some(("vfs_read".into(), 0)), None]);
        assert_eq!(r.warnings.len(), 1);
        assert!(r.warnings[0].contains("kernel.function(\"nope\")?"));
        // The image builds from the reduced program.
        vm_spec::image::build(&r.program, &r.symbols).unwrap();
    }

    #[test]
    fn a_kernel_point_on_a_module_function_is_not_armed_twice() {
        let text = "ffffffffc0000000 t ext4_should_retry_alloc\t[ext4]\n\
                    ffffffff81000000 T vfs_read\n";
        let wanted = ["ext4_should_retry_alloc", "vfs_read"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let k = Kallsyms::parse(text, &wanted);
        let f = "ext4_should_retry_alloc";
        let mut other = probe("kernel.function(\"vfs_read\")", sym("vfs_read"), false);
        other.handler = 1;
        let prog = Program {
            probes: vec![
                probe(&format!("kernel.function(\"{f}\")?"), sym(f), true),
                probe(
                    &format!("module(\"ext4\").function(\"{f}\")?"),
                    sym(f),
                    true,
                ),
                other.clone(),
                // Another handler on the same function keeps its probe.
                Probe {
                    handler: 1,
                    ..probe(&format!("kernel.function(\"{f}\")"), sym(f), false)
                },
            ],
            ..Default::default()
        };
        let r = resolve_with(&prog, &k).unwrap();
        let shown: Vec<&str> = r
            .program
            .probes
            .iter()
            .map(|p| p.display.as_str())
            .collect();
        assert_eq!(
            shown,
            [
                "module(\"ext4\").function(\"ext4_should_retry_alloc\")?",
                "kernel.function(\"vfs_read\")",
                "kernel.function(\"ext4_should_retry_alloc\")"
            ]
        );
        assert_eq!(r.symbols.len(), 3);
        assert_eq!(
            r.symbols[0],
            Some(("ext4:ext4_should_retry_alloc".into(), 0))
        );
    }

    /// A function kallsyms has only as `f.isra.0`: a handler that reads
    /// no parameter probes the clone; one that reads a parameter cannot
    /// (BTF describes `f`, not the clone), so its optional point is
    /// dropped with the reason.
    #[test]
    fn clones_only_for_handlers_without_parameters() {
        use vm_spec::program::{SrcLoc, TargetSite, TargetVar};
        let text = "ffffffff81000000 t finish_task_switch.isra.0\n";
        let wanted = ["finish_task_switch"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let syms = Kallsyms::parse(text, &wanted);
        let mut reads = probe(
            "kernel.function(\"finish_task_switch\")?",
            sym("finish_task_switch"),
            true,
        );
        reads.handler = 1;
        let bare = probe(
            "kernel.function(\"finish_task_switch\")?",
            sym("finish_task_switch"),
            true,
        );
        let tv = |handler: u32, site: TargetSite| TargetVar {
            name: "prev".into(),
            fields: Vec::new(),
            handler,
            site,
            probe_point: "kernel.function(\"finish_task_switch\")?".into(),
            loc: SrcLoc { line: 1, col: 1 },
            relocs: Vec::new(),
            addr_of: false,
            conds: Vec::new(),
        };
        let prog = Program {
            probes: vec![bare, reads],
            target_vars: vec![
                // A @cast in handler 0 reads no parameter.
                tv(0, TargetSite::Cast("task_struct".into())),
                tv(1, TargetSite::Function("finish_task_switch".into())),
            ],
            ..Default::default()
        };
        let r = resolve_with(&prog, &syms).unwrap();
        assert_eq!(r.program.probes.len(), 1);
        assert_eq!(r.program.probes[0].handler, 0);
        assert_eq!(
            r.symbols,
            vec![Some(("finish_task_switch.isra.0".into(), 0))]
        );
        assert_eq!(r.warnings.len(), 1);
        assert!(
            r.warnings[0].contains("compiler clone 'finish_task_switch.isra.0'"),
            "{}",
            r.warnings[0]
        );
    }

    /// `probe` with `!` (sufficient) and/or following a `!` in its
    /// declaration (alternative).
    fn flagged(display: &str, name: &str, sufficient: bool, alternative: bool) -> Probe {
        let mut p = probe(display, sym(name), sufficient);
        if sufficient {
            p.flags |= abi::STP_PROBE_F_SUFFICIENT as u8;
        }
        if alternative {
            p.flags |= abi::STP_PROBE_F_ALTERNATIVE as u8;
        }
        p
    }

    fn names(r: &Resolved) -> Vec<String> {
        r.symbols
            .iter()
            .map(|s| s.as_ref().map(|s| s.0.clone()).unwrap_or_default())
            .collect()
    }

    #[test]
    fn sufficient_points_stop_their_declaration_once_resolved() {
        // probe kernel.function("nope")!, kernel.function("vfs_read") { }
        // probe kernel.function("vfs_read")!, kernel.function("vfs_write") { }
        // probe kernel.function("vfs_write") { }
        let prog = Program {
            probes: vec![
                flagged("kernel.function(\"nope\")!", "nope", true, false),
                flagged("kernel.function(\"vfs_read\")", "vfs_read", false, true),
                flagged("kernel.function(\"vfs_read\")!", "vfs_read", true, false),
                flagged("kernel.function(\"vfs_write\")", "vfs_write", false, true),
                flagged("kernel.function(\"vfs_write\")", "vfs_write", false, false),
            ],
            ..Default::default()
        };
        let r = resolve_with(&prog, &kallsyms()).unwrap();
        assert_eq!(names(&r), ["vfs_read", "vfs_read", "vfs_write"]);
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert!(r.warnings[0].contains("kernel.function(\"nope\")!"));
        vm_spec::image::build(&r.program, &r.symbols).unwrap();
    }

    #[test]
    fn an_unresolved_alternative_after_an_unresolved_sufficient_point_is_an_error() {
        let prog = Program {
            probes: vec![
                flagged("kernel.function(\"nope\")!", "nope", true, false),
                flagged("kernel.function(\"gone\")", "gone", false, true),
            ],
            ..Default::default()
        };
        let e = resolve_with(&prog, &kallsyms()).unwrap_err();
        assert!(e.to_string().contains("kernel.function(\"gone\")"), "{e}");
        // a!, b!, c: b is tried when a fails, and c is dropped when b resolves.
        let prog = Program {
            probes: vec![
                flagged("a!", "nope", true, false),
                flagged("b!", "vfs_write", true, true),
                flagged("c", "gone", false, true),
            ],
            ..Default::default()
        };
        let r = resolve_with(&prog, &kallsyms()).unwrap();
        assert_eq!(names(&r), ["vfs_write"]);
    }

    #[test]
    fn mandatory_unresolved_probe_is_an_error_naming_it() {
        let prog = Program {
            probes: vec![probe("kprobe.function(\"nope\")", sym("nope"), false)],
            ..Default::default()
        };
        let e = resolve_with(&prog, &kallsyms()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "probe point 'kprobe.function(\"nope\")' cannot be resolved: \
             the kernel has no function 'nope' (not in /proc/kallsyms)"
        );
    }

    #[test]
    fn all_optional_and_unresolved_is_an_error() {
        let prog = Program {
            probes: vec![probe("x?", sym("nope"), true)],
            ..Default::default()
        };
        assert!(matches!(
            resolve_with(&prog, &kallsyms()),
            Err(Error::NoProbes)
        ));
    }

    #[test]
    fn patterns_expand_to_one_probe_per_match_and_are_capped() {
        let text = "ffffffff81000000 T vfs_read\nffffffff81000010 T vfs_readv\n";
        let pat = sym("vfs_read*");
        let k = scan(text, &["vfs_read*", "x*"]);
        let prog = Program {
            probes: vec![
                probe("kernel.function(\"vfs_read*\")", pat.clone(), false),
                probe("kernel.function(\"x*\")?", sym("x*"), true),
            ],
            ..Default::default()
        };
        let r = resolve_with(&prog, &k).unwrap();
        assert_eq!(r.program.probes.len(), 2);
        assert_eq!(
            r.symbols,
            vec![Some(("vfs_read".into(), 0)), Some(("vfs_readv".into(), 0))]
        );
        assert_eq!(
            r.expanded,
            vec![("kernel.function(\"vfs_read*\")".into(), 2)]
        );
        assert_eq!(r.warnings.len(), 1);
        vm_spec::image::build(&r.program, &r.symbols).unwrap();
        // Mandatory and no match: an error.
        let prog2 = Program {
            probes: vec![probe(
                "kernel.function(\"x*\")",
                prog.probes[1].target.clone(),
                false,
            )],
            ..Default::default()
        };
        assert!(matches!(
            resolve_with(&prog2, &k),
            Err(Error::Unresolved { .. })
        ));
        // Over the cap.
        let many: String = (0..abi::STP_MAX_PROBES + 1)
            .map(|i| format!("ffffffff81000000 T f{i}\n"))
            .collect();
        let k = scan(&many, &["f*"]);
        let prog3 = Program {
            probes: vec![probe("kernel.function(\"f*\")", sym("f*"), false)],
            ..Default::default()
        };
        let e = resolve_with(&prog3, &k).unwrap_err();
        assert!(e.to_string().contains("expands to 4097 probes"), "{e}");
    }
}
