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
//! statement and no function mentions is dropped, so a script reading
//! `bytes_read` neither pays for nor depends on BTF having `dev` or `ino`.
//! docs/tapset.md lists what each alias defines.
use super::{names_in, Gen};
use crate::ast::*;

/// One tapset file: the families (first probe-point components) whose
/// aliases it defines, and its text.
struct File {
    families: &'static [&'static str],
    text: &'static str,
}

/// Every kernel tapset file. `families` must list exactly the first
/// components of the file's alias names (a unit test checks).
const FILES: &[File] = &[
    File {
        families: &["vfs"],
        text: include_str!("kernel/vfs.stp"),
    },
    File {
        families: &["netdev"],
        text: include_str!("kernel/netdev.stp"),
    },
    File {
        families: &["signal", "__signal"],
        text: include_str!("kernel/signal.stp"),
    },
    File {
        families: &["kprocess"],
        text: include_str!("kernel/kprocess.stp"),
    },
    File {
        families: &["scheduler", "__scheduler"],
        text: include_str!("kernel/scheduler.stp"),
    },
    File {
        families: &["vm", "__vm"],
        text: include_str!("kernel/memory.stp"),
    },
    File {
        families: &["irq_handler", "softirq", "workqueue"],
        text: include_str!("kernel/irq.stp"),
    },
    File {
        families: &["nfsd"],
        text: include_str!("kernel/nfsd.stp"),
    },
    File {
        families: &["sunrpc"],
        text: include_str!("kernel/sunrpc.stp"),
    },
    File {
        families: &["nfs"],
        text: include_str!("kernel/nfs.stp"),
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

/// Adds the declarations of the files whose families `s` probes and does
/// not define, then elides the alias variables nothing reads.
pub(crate) fn add(s: &mut Script) {
    let (used, _) = family_uses(s);
    if used.is_empty() {
        return;
    }
    let mut g = Gen {
        next: s.nexprs,
        errors: Vec::new(),
    };
    let mut added: Vec<Item> = Vec::new();
    for f in FILES {
        let Some(span) = f
            .families
            .iter()
            .find_map(|fam| used.iter().find(|(u, _)| u == fam).map(|(_, sp)| *sp))
        else {
            continue;
        };
        let mut items = g.items(f.text, span);
        for it in &mut items {
            if let Item::Alias(a) = it {
                relabel_alias(&mut g, a, span);
            }
        }
        added.extend(items);
    }
    s.nexprs = g.next;
    // A file that does not parse is a bug of this crate, reported as
    // Gen's internal error by the pass that owns the diagnostics.
    debug_assert!(g.errors.is_empty(), "{:?}", g.errors);
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
}

/// Drops the tapset files' globals (memory.stp's `VM_FAULT_*` constants)
/// that nothing mentions, as stap does for its tapsets' globals without a
/// warning (the script's own unused globals still get one).
fn drop_unused_globals(s: &mut Script, tapset_globals: &[String]) {
    if tapset_globals.is_empty() {
        return;
    }
    let mut used: Vec<String> = Vec::new();
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
    let mut needed: Vec<String> = Vec::new();
    for it in &mut s.items {
        match it {
            Item::Probe(p) => needed.extend(names_in(&mut p.body).0),
            Item::Function(f) => {
                if let Some(b) = f.body.as_mut() {
                    needed.extend(names_in(b).0);
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
                    for n in names_in(st).0 {
                        if !needed.contains(&n) {
                            needed.push(n);
                        }
                    }
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
