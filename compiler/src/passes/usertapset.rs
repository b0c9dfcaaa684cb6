//! stap's `-I DIR`: user tapset files (`Target::tapset_files`, every
//! `*.stp` of the directories, read by the CLI), included as stap includes
//! library files.
//!
//! Every file is parsed (as a tapset: embedded C parses, as stap parses
//! tapsets in guru mode; a file with parse errors is skipped, its errors
//! shown as warnings, as stap's `pf_squash_errors` does). A file is then
//! included when the script, or a file included already, needs something
//! it declares and the script does not: a function it calls, a global it
//! names (stap looks a variable up in the tapsets' globals before making
//! it a local), or a probe alias one of its probe points matches. An
//! included file brings all its declarations, probes included (stapgames'
//! `gmtty.stp` initialises its globals in a `probe begin(-100)`).
//!
//! A file's `private` globals and functions are its own (stap's file
//! scope): they are renamed, with their uses in the file, to names the
//! script cannot write (`private_name`).
//!
//! Embedded C: a file's `%{ %}` blocks are dropped (they hold the C
//! declarations its embedded-C functions use); an embedded-C function
//! keeps its name with an empty body (so that unused callers resolve),
//! and a call of one from code that runs (a probe, or a function called
//! from one) is refused with the guru message (`crate::guru`), naming the
//! function and its file. So a file that mixes script functions with C
//! ones serves the script functions.
//!
//! Spans: a file's tokens are shifted past the script's text (and the
//! files before it), one `ExtraFile` each, so a diagnostic points into the
//! right file (`diag::Renderer::with_files`); code from these files has no
//! place in the script for run-time errors (`LineIndex::line_col` gives
//! line 0, and the error names the probe point).
//!
//! Runs right after pass 1, before the kernel aliases and alias
//! expansion; expressions are renumbered afterwards. Not done: stap's
//! `.stpm` macro files on the include path, and the kernel-version and
//! architecture subdirectories stap also searches.
use crate::ast::*;
use crate::diag::{Diagnostic, Diags, ExtraFile, Severity};
use crate::glob::fnmatch;
use crate::parse::lexer::{lex, Token};
use crate::parse::preprocess::Target;
use crate::tapset::{names_in, walk_exprs_mut};
use std::collections::HashSet;

/// What one tapset file declares, and its declarations.
struct File {
    name: String,
    items: Vec<Item>,
    funcs: HashSet<String>,
    c_funcs: HashSet<String>,
    globals: HashSet<String>,
    aliases: Vec<Vec<String>>,
    included: bool,
}

/// What some code needs from elsewhere.
#[derive(Default)]
struct Needs {
    calls: Vec<(String, Span)>,
    vars: HashSet<String>,
    points: Vec<Vec<String>>,
}

impl Needs {
    fn add_stmt(&mut self, s: &mut Stmt) {
        let (vars, _) = names_in(s);
        self.vars.extend(vars);
        let calls = &mut self.calls;
        walk_exprs_mut(s, &mut |e| {
            if let ExprKind::Call { name, .. } = &e.kind {
                calls.push((name.clone(), e.span));
            }
        });
    }

    fn add_points(&mut self, pps: &[ProbePoint]) {
        for pp in pps {
            self.points
                .push(pp.components.iter().map(|c| c.name.clone()).collect());
        }
    }

    fn add_items(&mut self, items: &mut [Item]) {
        for it in items {
            match it {
                Item::Probe(p) => {
                    self.add_points(&p.points);
                    self.add_stmt(&mut p.body);
                }
                Item::Function(f) => {
                    if let Some(b) = f.body.as_mut() {
                        self.add_stmt(b);
                    }
                }
                Item::Alias(a) => {
                    self.add_points(&a.points);
                    self.add_stmt(&mut a.body);
                    if let Some(b) = a.epilogue.as_mut() {
                        self.add_stmt(b);
                    }
                }
                Item::Global(_) | Item::Embedded(_) | Item::Unsupported(_) => {}
            }
        }
    }
}

/// The name a `private` global or function of tapset file `file` is
/// known by: `__private_<file>_<name>`, the file name reduced to
/// identifier characters (stap mangles them with the file too), so that
/// the script and the other files neither name it nor clash with it.
fn private_name(file: &str, name: &str) -> String {
    let file: String = file
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("__private_{file}_{name}")
}

/// stap's `private` (4.0): a tapset file's private globals and functions
/// are visible in that file only. They are renamed (`private_name`), and
/// so are their uses in the file: a variable of that name (not a
/// function's parameter of that name, which hides the global) and calls of
/// the function.
fn make_private_names_local(items: &mut [Item], file: &str) {
    let mut globals = HashSet::new();
    let mut funcs = HashSet::new();
    for it in items.iter() {
        match it {
            Item::Global(g) if g.private.is_some() => {
                globals.insert(g.name.clone());
            }
            Item::Function(f) if f.private.is_some() => {
                funcs.insert(f.name.clone());
            }
            _ => {}
        }
    }
    if globals.is_empty() && funcs.is_empty() {
        return;
    }
    let rename = |s: &mut Stmt, hidden: &HashSet<&str>| {
        walk_exprs_mut(s, &mut |e| match &mut e.kind {
            ExprKind::Var(n) if globals.contains(n) && !hidden.contains(n.as_str()) => {
                *n = private_name(file, n);
            }
            ExprKind::Call { name, .. } if funcs.contains(name) => {
                *name = private_name(file, name);
            }
            _ => {}
        });
    };
    let none = HashSet::new();
    for it in items.iter_mut() {
        match it {
            Item::Global(g) => {
                if g.private.take().is_some() {
                    g.name = private_name(file, &g.name);
                }
            }
            Item::Function(f) => {
                if f.private.take().is_some() {
                    f.name = private_name(file, &f.name);
                }
                let params: HashSet<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
                if let Some(b) = f.body.as_mut() {
                    rename(b, &params);
                }
            }
            Item::Probe(p) => rename(&mut p.body, &none),
            Item::Alias(a) => {
                rename(&mut a.body, &none);
                if let Some(b) = a.epilogue.as_mut() {
                    rename(b, &none);
                }
            }
            Item::Embedded(_) | Item::Unsupported(_) => {}
        }
    }
}

/// The names `items` declare: functions, globals, alias names.
fn declared(items: &[Item]) -> (HashSet<String>, HashSet<String>, Vec<Vec<String>>) {
    let mut funcs = HashSet::new();
    let mut globals = HashSet::new();
    let mut aliases = Vec::new();
    for it in items {
        match it {
            Item::Function(f) => {
                funcs.insert(f.name.clone());
            }
            Item::Global(g) => {
                globals.insert(g.name.clone());
            }
            Item::Alias(a) => {
                for n in &a.names {
                    aliases.push(n.components.iter().map(|c| c.name.clone()).collect());
                }
            }
            _ => {}
        }
    }
    (funcs, globals, aliases)
}

/// True when probe point `point` (component names, wildcards allowed) can
/// name alias `alias` (a prefix of it, suffixes being the alias's).
fn matches(point: &[String], alias: &[String]) -> bool {
    point.len() >= alias.len()
        && point
            .iter()
            .zip(alias)
            .all(|(p, a)| fnmatch(p.as_bytes(), a.as_bytes()))
}

/// Parses the tapset files of `target`, adds the ones the script needs to
/// `script` (renumbering its expressions) and their tokens to `tokens`, and
/// returns every file for the renderer. `source_len` is the script's
/// length: the files' spans start past it.
pub fn include(
    script: &mut Script,
    tokens: &mut Vec<Token>,
    source_len: usize,
    target: &Target,
    args: &[String],
    diags: &mut Diags,
) -> Vec<ExtraFile> {
    if target.tapset_files.is_empty() {
        return Vec::new();
    }
    let tapset_target = Target {
        guru: true,
        tapset_files: Vec::new(),
        ..target.clone()
    };
    let mut extra = Vec::new();
    let mut files = Vec::new();
    let mut base = u32::try_from(source_len)
        .unwrap_or(u32::MAX)
        .saturating_add(1);
    for tf in &target.tapset_files {
        let mut toks = lex(&tf.text, args);
        for t in &mut toks {
            t.span.lo = t.span.lo.saturating_add(base);
            t.span.hi = t.span.hi.saturating_add(base);
        }
        let mut d = Diags::default();
        let parsed = crate::parse::parse_for(&toks, &tapset_target, &mut d);
        let broken = d.has_errors();
        for mut x in d.list {
            if x.severity == Severity::ParseError {
                // stap's pf_squash_errors: a broken tapset is only warned about.
                x.severity = Severity::Warning;
                x.message = format!("parse error: {} (tapset file skipped)", x.message);
            }
            diags.push(x);
        }
        tokens.extend(toks);
        extra.push(ExtraFile {
            name: tf.name.clone(),
            base,
            text: tf.text.clone(),
        });
        base = base
            .saturating_add(u32::try_from(tf.text.len()).unwrap_or(u32::MAX))
            .saturating_add(1);
        if broken {
            continue;
        }
        let mut items = Vec::new();
        let mut c_funcs = HashSet::new();
        let mut parsed = parsed;
        make_private_names_local(&mut parsed.items, &tf.name);
        for it in parsed.items {
            match it {
                Item::Embedded(_) => {}
                Item::Function(mut f) if f.body.is_none() => {
                    // Kept with an empty body, so that an unused caller
                    // resolves; a call that runs is refused (below).
                    c_funcs.insert(f.name.clone());
                    f.body = Some(Stmt {
                        kind: StmtKind::Block(Vec::new()),
                        span: f.span,
                    });
                    items.push(Item::Function(f));
                }
                other => items.push(other),
            }
        }
        let (mut funcs, globals, aliases) = declared(&items);
        funcs.retain(|n| !c_funcs.contains(n));
        files.push(File {
            name: tf.name.clone(),
            items,
            funcs,
            c_funcs,
            globals,
            aliases,
            included: false,
        });
    }
    let (mut funcs, mut globals, _) = declared(&script.items);
    let mut needs = Needs::default();
    needs.add_items(&mut script.items);
    // Each round includes at least one file, or ends.
    for _ in 0..=files.len() {
        let mut more = false;
        for f in &mut files {
            if f.included {
                continue;
            }
            let wanted =
                needs.calls.iter().any(|(n, _)| {
                    !funcs.contains(n) && (f.funcs.contains(n) || f.c_funcs.contains(n))
                }) || needs
                    .vars
                    .iter()
                    .any(|v| !globals.contains(v) && f.globals.contains(v))
                    || needs
                        .points
                        .iter()
                        .any(|p| f.aliases.iter().any(|a| matches(p, a)));
            if !wanted {
                continue;
            }
            f.included = true;
            more = true;
            funcs.extend(f.funcs.iter().cloned());
            globals.extend(f.globals.iter().cloned());
            needs.add_items(&mut f.items);
        }
        if !more {
            break;
        }
    }
    // Calls of embedded-C functions (that nothing else defines), in code
    // that runs: a probe or an alias, or a function called from one (an
    // unused function is elided, as in stap).
    let c_funcs: Vec<(String, String)> = files
        .iter()
        .filter(|f| f.included)
        .flat_map(|f| f.c_funcs.iter().map(move |n| (n.clone(), f.name.clone())))
        .filter(|(n, _)| !funcs.contains(n))
        .collect();
    if !c_funcs.is_empty() {
        let mut roots = Needs::default();
        let mut bodies: std::collections::HashMap<String, Vec<(String, Span)>> = Default::default();
        let included = files.iter_mut().filter(|f| f.included);
        for items in std::iter::once(&mut script.items).chain(included.map(|f| &mut f.items)) {
            for it in items.iter_mut() {
                if let Item::Function(fd) = it {
                    let mut n = Needs::default();
                    if let Some(b) = fd.body.as_mut() {
                        n.add_stmt(b);
                    }
                    bodies.entry(fd.name.clone()).or_insert(n.calls);
                } else {
                    roots.add_items(std::slice::from_mut(it));
                }
            }
        }
        let mut work = roots.calls;
        let mut seen = HashSet::new();
        let mut refused = HashSet::new();
        while let Some((name, span)) = work.pop() {
            if let Some((_, file)) = c_funcs.iter().find(|(n, _)| *n == name) {
                if refused.insert(span.lo) {
                    diags.push(Diagnostic::semantic(
                        crate::guru::refusal(&format!("{name}() (from {file}) is embedded C")),
                        span,
                    ));
                }
            } else if seen.insert(name.clone()) {
                work.extend(bodies.get(&name).into_iter().flatten().cloned());
            }
        }
    }
    // The script's own functions win (stap looks in the tapsets only for
    // what the script does not define), and the first file's over later
    // ones.
    let (mut have, _, _) = declared(&script.items);
    let mut added = false;
    for f in files.into_iter().filter(|f| f.included) {
        for it in f.items {
            if let Item::Function(fd) = &it {
                if !have.insert(fd.name.clone()) {
                    continue;
                }
            }
            script.items.push(it);
            added = true;
        }
    }
    if added {
        script.nexprs = crate::parse::number_exprs(script);
    }
    extra
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::preprocess::TapsetFile;

    fn run(src: &str, files: &[(&str, &str)]) -> (Script, Diags) {
        let tokens = lex(src, &[]);
        let mut d = Diags::default();
        let mut script = crate::parse::parse(&tokens, &mut d);
        let target = Target {
            tapset_files: files
                .iter()
                .map(|(n, t)| TapsetFile {
                    name: n.to_string(),
                    text: t.to_string(),
                })
                .collect(),
            ..Target::default()
        };
        let mut toks = tokens.clone();
        include(&mut script, &mut toks, src.len(), &target, &[], &mut d);
        (script, d)
    }

    fn function_names(s: &Script) -> Vec<String> {
        s.items
            .iter()
            .filter_map(|it| match it {
                Item::Function(f) => Some(f.name.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn only_needed_files_are_included_transitively() {
        let (s, d) = run(
            "probe begin { a() }",
            &[
                ("t/a.stp", "function a() { b() }"),
                ("t/b.stp", "function b() { }"),
                ("t/c.stp", "function c() { }\nprobe end { }"),
            ],
        );
        assert!(!d.has_errors());
        assert_eq!(function_names(&s), vec!["a", "b"]);
        // c.stp's end probe did not come along.
        assert_eq!(
            s.items
                .iter()
                .filter(|i| matches!(i, Item::Probe(_)))
                .count(),
            1
        );
    }

    #[test]
    fn globals_and_aliases_pull_their_files() {
        let (s, _) = run(
            "probe game.kbd { x = GM_KEY }",
            &[
                ("t/g.stp", "global GM_KEY = 3"),
                ("t/alias.stp", "probe game.kbd = begin { }"),
            ],
        );
        assert_eq!(s.items.len(), 3);
    }

    #[test]
    fn the_script_wins_and_embedded_c_is_refused_at_the_call() {
        let src = "function a() { return 1 }\nprobe begin { a(); f() }";
        let (s, d) = run(
            src,
            &[(
                "t/c.stp",
                "%{ #include <x.h> %}\nfunction a() { return 2 }\nfunction f() %{ STAP_RETVALUE = 1; %}\n",
            )],
        );
        // a() is the script's; f() is C (a stub, refused where called).
        assert_eq!(function_names(&s), vec!["a", "f"]);
        assert_eq!(d.errors(), 1);
        let e = &d.list[0];
        assert!(e.message.starts_with("f() (from t/c.stp) is embedded C: "));
        assert!(e.message.ends_with(crate::guru::NO_GURU));
        assert_eq!(
            e.span.map(|x| x.lo as usize),
            src.find("f()"),
            "at the call in the script"
        );
    }

    #[test]
    fn a_broken_file_is_a_warning_and_skipped() {
        let (s, d) = run(
            "probe begin { a() }",
            &[
                ("t/bad.stp", "function a( {"),
                ("t/a.stp", "function a() {}"),
            ],
        );
        assert!(!d.has_errors());
        assert!(d.list[0].message.starts_with("parse error: "));
        assert_eq!(function_names(&s), vec!["a"]);
    }
}
