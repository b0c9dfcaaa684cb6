//! The kernel tapset aliases stap builds on DWARF (`vfs.*`, `netdev.*`,
//! `signal.*`, `kprocess.*` ...), rebuilt on what every BTF kernel has:
//! functions whose parameters BTF names, stable tracepoints (their
//! arguments named by `__traceiter_NAME`), `@cast` member chains and the
//! syscall tapset. They are written in the script language, one file per
//! family group in `tapset/kernel/*.stp` (listed in `FILES`).
//!
//! Run before alias expansion: when a probe point of the script starts
//! with one of a file's families and the script defines no alias of that
//! family itself, the file's declarations (aliases, and the functions and
//! globals they use) are added to the script, relabelled to the span of
//! the first probe point that uses the family, so diagnostics point at
//! the user's script.
//!
//! Only the alias variables the script mentions are assigned (stap elides
//! the others): a prologue assignment `v = e` (or an `if` made only of
//! such assignments) to a variable no probe body, no kept prologue
//! statement and no function (as a global) mentions is dropped, so a script reading
//! `bytes_read` neither pays for nor depends on BTF having `dev` or `ino`.
//! docs/tapset.md lists what each alias defines.
use super::{index, names_in, Gen};
use crate::ast::*;
use std::collections::HashSet;

/// One tapset file: the families (first probe-point components) whose
/// aliases it defines, its text, and the functions it defines (listed by
/// compiler/build.rs).
struct File {
    families: &'static [&'static str],
    text: &'static str,
    functions: &'static [&'static str],
}

/// Every kernel tapset file. `families` must list exactly the first
/// components of the file's alias names (a unit test checks).
const FILES: &[File] = &[
    File {
        families: &["vfs", "generic", "_vfs"],
        text: include_str!("kernel/vfs.stp"),
        functions: index::KERNEL_FUNCTIONS_VFS,
    },
    File {
        families: &["netdev"],
        text: include_str!("kernel/netdev.stp"),
        functions: index::KERNEL_FUNCTIONS_NETDEV,
    },
    File {
        families: &["signal", "__signal"],
        text: include_str!("kernel/signal.stp"),
        functions: index::KERNEL_FUNCTIONS_SIGNAL,
    },
    File {
        families: &["kprocess"],
        text: include_str!("kernel/kprocess.stp"),
        functions: index::KERNEL_FUNCTIONS_KPROCESS,
    },
    File {
        families: &["scheduler", "__scheduler"],
        text: include_str!("kernel/scheduler.stp"),
        functions: index::KERNEL_FUNCTIONS_SCHEDULER,
    },
    File {
        families: &["vm", "__vm"],
        text: include_str!("kernel/memory.stp"),
        functions: index::KERNEL_FUNCTIONS_MEMORY,
    },
    File {
        families: &["irq_handler", "softirq", "workqueue"],
        text: include_str!("kernel/irq.stp"),
        functions: index::KERNEL_FUNCTIONS_IRQ,
    },
    File {
        families: &["nfsd"],
        text: include_str!("kernel/nfsd.stp"),
        functions: index::KERNEL_FUNCTIONS_NFSD,
    },
    File {
        families: &["sunrpc"],
        text: include_str!("kernel/sunrpc.stp"),
        functions: index::KERNEL_FUNCTIONS_SUNRPC,
    },
    File {
        families: &["nfs"],
        text: include_str!("kernel/nfs.stp"),
        functions: index::KERNEL_FUNCTIONS_NFS,
    },
    File {
        families: &[
            "ioblock",
            "ioblock_trace",
            "ioscheduler",
            "ioscheduler_trace",
        ],
        text: include_str!("kernel/block.stp"),
        functions: index::KERNEL_FUNCTIONS_BLOCK,
    },
    File {
        families: &["tty"],
        text: include_str!("kernel/tty.stp"),
        functions: index::KERNEL_FUNCTIONS_TTY,
    },
    File {
        families: &["scsi"],
        text: include_str!("kernel/scsi.stp"),
        functions: index::KERNEL_FUNCTIONS_SCSI,
    },
    File {
        families: &["tcp", "udp"],
        text: include_str!("kernel/tcp.stp"),
        functions: index::KERNEL_FUNCTIONS_TCP,
    },
    File {
        families: &["ipmib", "tcpmib", "linuxmib"],
        text: include_str!("kernel/mib.stp"),
        functions: index::KERNEL_FUNCTIONS_MIB,
    },
    File {
        families: &["socket"],
        text: include_str!("kernel/socket.stp"),
        functions: index::KERNEL_FUNCTIONS_SOCKET,
    },
    File {
        families: &["input"],
        text: include_str!("kernel/input.stp"),
        functions: index::KERNEL_FUNCTIONS_INPUT,
    },
    File {
        families: &["json_data"],
        text: include_str!("kernel/json.stp"),
        functions: index::KERNEL_FUNCTIONS_JSON,
    },
    File {
        families: &["netfilter"],
        text: include_str!("kernel/netfilter.stp"),
        functions: index::KERNEL_FUNCTIONS_NETFILTER,
    },
];

/// Every family the kernel tapset files define (for suggestions).
pub(crate) fn families() -> impl Iterator<Item = &'static str> {
    FILES.iter().flat_map(|f| f.families.iter().copied())
}

/// The first probe point of `s` whose first component matches `family`
/// (as a glob in the use: `probe *.read` uses every family with a `read`),
/// and the families `s` defines aliases of itself.
fn family_uses(s: &Script) -> (Vec<(&'static str, Span)>, Vec<String>) {
    let mut used: Vec<(&'static str, Span)> = Vec::new();
    let mut own: Vec<String> = Vec::new();
    for it in &s.items {
        let points: Vec<&ProbePoint> = match it {
            Item::Probe(p) => p.points.iter().collect(),
            Item::Alias(a) => {
                own.extend(
                    a.names
                        .iter()
                        .filter_map(|n| n.components.first().map(|c| c.name.clone())),
                );
                a.points.iter().collect()
            }
            _ => continue,
        };
        for pp in points {
            let Some(first) = pp.components.first() else {
                continue;
            };
            for f in FILES {
                for family in f.families {
                    if crate::glob::fnmatch(first.name.as_bytes(), family.as_bytes())
                        && !used.iter().any(|(u, _)| u == family)
                    {
                        used.push((family, first.span));
                    }
                }
            }
        }
    }
    used.retain(|(f, _)| !own.iter().any(|o| o == f));
    (used, own)
}

/// The functions called anywhere in `items` (probe, function and alias
/// bodies), each with the span of its first call, and the names the
/// items define as functions.
fn calls_and_defs(items: &mut [Item]) -> (Vec<(String, Span)>, Vec<String>) {
    let mut calls: Vec<(String, Span)> = Vec::new();
    let mut defs: Vec<String> = Vec::new();
    let mut note = |e: &mut Expr| {
        if let ExprKind::Call { name, .. } = &e.kind {
            if !calls.iter().any(|(c, _)| c == name) {
                calls.push((name.clone(), e.span));
            }
        }
    };
    for it in items.iter_mut() {
        match it {
            Item::Probe(p) => super::walk_exprs_mut(&mut p.body, &mut note),
            Item::Function(f) => {
                defs.push(f.name.clone());
                if let Some(b) = f.body.as_mut() {
                    super::walk_exprs_mut(b, &mut note);
                }
            }
            Item::Alias(a) => {
                super::walk_exprs_mut(&mut a.body, &mut note);
                if let Some(e) = a.epilogue.as_mut() {
                    super::walk_exprs_mut(e, &mut note);
                }
            }
            _ => {}
        }
    }
    (calls, defs)
}

/// Adds the declarations of the files whose families `s` probes and does
/// not define, then elides the alias variables nothing reads. A file
/// whose family is not probed but one of whose functions is called (by
/// the script or by an added file: `inet_get_local_port` in a
/// `kernel.function` probe, tcp.stp's `__ip_sock_saddr` from mib.stp) is
/// added too, its functions and globals only. A function the script
/// defines itself is not added (the script's definition wins, as in stap).
/// The files' `%( %? %: %)` conditionals are decided for `target` (the
/// script's `--compatible` version: nfs.stp's two forms of `get_ip`).
/// Returns how many files were parsed (stap -v's library scripts).
pub(crate) fn add(s: &mut Script, target: &crate::Target, diags: &mut crate::diag::Diags) -> usize {
    let (used, _) = family_uses(s);
    let (_, own_funcs) = calls_and_defs(&mut s.items);
    let mut g = Gen::new(s.nexprs);
    let mut added: Vec<Item> = Vec::new();
    let mut done = vec![false; FILES.len()];
    for (i, f) in FILES.iter().enumerate() {
        let Some(span) = f
            .families
            .iter()
            .find_map(|fam| used.iter().find(|(u, _)| u == fam).map(|(_, sp)| *sp))
        else {
            continue;
        };
        done[i] = true;
        let mut items = g.items_for(f.text, span, target);
        for it in &mut items {
            if let Item::Alias(a) = it {
                relabel_alias(&mut g, a, span);
            }
        }
        added.extend(items);
    }
    // Files wanted for their functions, until no call is left to one
    // (bounded: every round adds a file or stops).
    loop {
        let (mut calls, mut defs) = calls_and_defs(&mut s.items);
        let (c2, d2) = calls_and_defs(&mut added);
        calls.extend(c2);
        defs.extend(d2);
        let want = FILES.iter().enumerate().find_map(|(i, f)| {
            if done[i] {
                return None;
            }
            calls
                .iter()
                .find(|(c, _)| f.functions.contains(&c.as_str()) && !defs.contains(c))
                .map(|(_, sp)| (i, *sp))
        });
        let Some((i, span)) = want else { break };
        done[i] = true;
        let items = g.items_for(FILES[i].text, span, target);
        added.extend(
            items
                .into_iter()
                .filter(|it| matches!(it, Item::Function(_) | Item::Global(_))),
        );
    }
    let parsed = done.iter().filter(|&&d| d).count();
    if added.is_empty() {
        return parsed;
    }
    let own_globals = super::declared_globals(s);
    added.retain(|it| match it {
        Item::Function(f) => !own_funcs.contains(&f.name),
        Item::Global(g) => !own_globals.contains(&g.name),
        _ => true,
    });
    prune_unreached(&mut s.items, &mut added);
    s.nexprs = g.next;
    // A file that does not parse is a bug of this crate: an internal
    // error at the probe point that wanted it, never a silently missing
    // family (the unit tests parse every file).
    for (msg, span) in g.errors.drain(..) {
        diags.push(crate::diag::Diagnostic::semantic(msg, span));
    }
    let tapset_globals: Vec<String> = added
        .iter()
        .filter_map(|it| match it {
            Item::Global(gd) => Some(gd.name.clone()),
            _ => None,
        })
        .collect();
    s.items.extend(added);
    elide_unused_alias_vars(s);
    drop_unused_globals(s, &tapset_globals);
    parsed
}

/// Drops the tapset files' globals (memory.stp's `VM_FAULT_*` constants)
/// that nothing mentions, as stap does for its tapsets' globals without a
/// warning (the script's own unused globals still get one).
fn drop_unused_globals(s: &mut Script, tapset_globals: &[String]) {
    if tapset_globals.is_empty() {
        return;
    }
    let mut used: HashSet<String> = HashSet::new();
    for it in &mut s.items {
        match it {
            Item::Probe(p) => used.extend(names_in(&mut p.body).0),
            Item::Function(f) => {
                if let Some(b) = f.body.as_mut() {
                    used.extend(names_in(b).0);
                }
            }
            Item::Alias(a) => {
                used.extend(names_in(&mut a.body).0);
                if let Some(e) = a.epilogue.as_mut() {
                    used.extend(names_in(e).0);
                }
            }
            _ => {}
        }
    }
    s.items.retain(|it| match it {
        Item::Global(gd) => !tapset_globals.contains(&gd.name) || used.contains(&gd.name),
        _ => true,
    });
}

/// Drops the added functions nothing calls (from the script's items, the
/// added aliases or a kept function) and the added globals no kept item
/// names: a file's table global filled only by a function the script does
/// not call would otherwise have no type. `script` is not changed (`&mut`
/// only to walk it without a copy).
fn prune_unreached(script: &mut [Item], added: &mut Vec<Item>) {
    // The calls of the script's items, then those of the added aliases
    // and probes (json.stp's metadata file; each name once, at its first
    // call).
    let (mut want, _) = calls_and_defs(script);
    for it in added.iter_mut() {
        if matches!(it, Item::Alias(_) | Item::Probe(_)) {
            for (name, span) in calls_and_defs(std::slice::from_mut(it)).0 {
                if !want.iter().any(|(w, _)| *w == name) {
                    want.push((name, span));
                }
            }
        }
    }
    let mut kept: Vec<String> = Vec::new();
    // Bounded: every round keeps one more added function or stops.
    while let Some((name, _)) = want.pop() {
        if kept.contains(&name) {
            continue;
        }
        let Some(i) = added
            .iter()
            .position(|it| matches!(it, Item::Function(f) if f.name == name))
        else {
            continue;
        };
        kept.push(name);
        let (calls, _) = calls_and_defs(std::slice::from_mut(&mut added[i]));
        want.extend(calls);
    }
    added.retain(|it| !matches!(it, Item::Function(f) if !kept.contains(&f.name)));
    let mut named: HashSet<String> = HashSet::new();
    for it in script.iter_mut().chain(added.iter_mut()) {
        match it {
            Item::Probe(p) => named.extend(names_in(&mut p.body).0),
            Item::Function(f) => {
                if let Some(b) = f.body.as_mut() {
                    named.extend(names_in(b).0);
                }
            }
            Item::Alias(a) => {
                named.extend(names_in(&mut a.body).0);
                if let Some(e) = a.epilogue.as_mut() {
                    named.extend(names_in(e).0);
                }
            }
            _ => {}
        }
    }
    added.retain(|it| !matches!(it, Item::Global(g) if !named.contains(&g.name)));
}

/// Points every span of a tapset alias at `span`.
fn relabel_alias(g: &mut Gen, a: &mut AliasDecl, span: Span) {
    a.span = span;
    for p in a.names.iter_mut().chain(a.points.iter_mut()) {
        for c in &mut p.components {
            c.span = span;
        }
        if p.condition.is_some() {
            p.condition = Some(span);
        }
    }
    g.stmt(&mut a.body, span);
    if let Some(e) = a.epilogue.as_mut() {
        g.stmt(e, span);
    }
}

/// The variable a statement assigns and nothing else: `v = e`, `v .= e`,
/// or an `if` whose branches only assign (the same or other) variables.
/// Returns the assigned names, or `None` for any other statement.
fn only_assigns(st: &Stmt) -> Option<Vec<String>> {
    match &st.kind {
        StmtKind::Expr(Expr {
            kind: ExprKind::Assign(_, lhs, _),
            ..
        }) => match &lhs.kind {
            ExprKind::Var(v) => Some(vec![v.clone()]),
            _ => None,
        },
        StmtKind::Block(b) => {
            let mut out = Vec::new();
            for x in b {
                out.extend(only_assigns(x)?);
            }
            Some(out)
        }
        StmtKind::Null => Some(Vec::new()),
        StmtKind::If { then, els, .. } => {
            let mut out = only_assigns(then)?;
            if let Some(e) = els {
                out.extend(only_assigns(e)?);
            }
            Some(out)
        }
        _ => None,
    }
}

/// Drops the prologue assignments of every alias whose variables nothing
/// reads (fixpoint: a kept statement's names keep what they read).
fn elide_unused_alias_vars(s: &mut Script) {
    let mut needed: HashSet<String> = HashSet::new();
    // A function reads no probe's locals: only the globals it names count
    // (its parameters and locals may share an alias variable's name).
    let globals = super::declared_globals(s);
    for it in &mut s.items {
        match it {
            Item::Probe(p) => needed.extend(names_in(&mut p.body).0),
            Item::Function(f) => {
                if let Some(b) = f.body.as_mut() {
                    needed.extend(names_in(b).0.into_iter().filter(|n| globals.contains(n)));
                }
            }
            Item::Alias(a) => {
                if let Some(e) = a.epilogue.as_mut() {
                    needed.extend(names_in(e).0);
                }
                if a.epilogue_style {
                    needed.extend(names_in(&mut a.body).0);
                }
            }
            _ => {}
        }
    }
    // Prologue statements: kept ones add what they read until nothing
    // changes (bounded: every round keeps at least one more statement).
    loop {
        let before = needed.len();
        for it in &mut s.items {
            let Item::Alias(a) = it else { continue };
            if a.epilogue_style {
                continue;
            }
            let StmtKind::Block(b) = &mut a.body.kind else {
                continue;
            };
            for st in b.iter_mut() {
                let keep = match only_assigns(st) {
                    Some(vars) => vars.iter().any(|v| needed.contains(v)),
                    None => true,
                };
                if keep {
                    needed.extend(names_in(st).0);
                }
            }
        }
        if needed.len() == before {
            break;
        }
    }
    for it in &mut s.items {
        let Item::Alias(a) = it else { continue };
        if a.epilogue_style {
            continue;
        }
        if let StmtKind::Block(b) = &mut a.body.kind {
            b.retain(|st| match only_assigns(st) {
                Some(vars) => vars.iter().any(|v| needed.contains(v)),
                None => true,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_parses_and_lists_its_families() {
        for f in FILES {
            let tokens = crate::parse::lexer::lex(f.text, &[]);
            let mut d = crate::diag::Diags::default();
            let script = crate::parse::parse(&tokens, &mut d);
            assert!(!d.has_errors(), "{:?}: {:?}", f.families, d.list);
            let mut fams: Vec<String> = Vec::new();
            for it in &script.items {
                if let Item::Alias(a) = it {
                    for n in &a.names {
                        let c = n.components[0].name.clone();
                        if !fams.contains(&c) {
                            fams.push(c);
                        }
                    }
                }
            }
            fams.sort();
            let mut want: Vec<String> = f.families.iter().map(|x| x.to_string()).collect();
            want.sort();
            assert_eq!(fams, want, "families of {:?}", f.families);
        }
    }

    #[test]
    fn no_family_is_in_two_files() {
        let mut all: Vec<&str> = FILES
            .iter()
            .flat_map(|f| f.families.iter().copied())
            .collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
