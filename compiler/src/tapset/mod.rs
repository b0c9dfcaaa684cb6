//! The built-in tapset: what stap's tapset library gives a script, run
//! between `passes::expand` and `passes::resolve` as source-to-source
//! rewrites of the AST (no pass after this one knows about tapsets).
//!
//! 1. `syscalls` — `syscall.NAME[.return]`, `nd_syscall.*`, wildcards and
//!    `syscall_any[.return]`: probe points mapped to kprobes on the
//!    `__x64_sys_*` wrappers (a wildcard stays a pattern the loader expands)
//!    or to the `sys_enter`/`sys_exit` tracepoints, and the alias variables
//!    (`name`, `argstr`, `retval`, `retstr`, per-syscall arguments) defined
//!    by a prologue generated from a data table (`syscall_table`); the
//!    context-dependent tapset functions (`int_arg(n)` ..., `returnval()`,
//!    `returnstr(f)`) are expanded in place in probe bodies.
//! 2. `listings` — `$$parms`, `$$vars`, `$$locals`, `$$return`: chains
//!    over the parameters whose names and values the loader fills in.
//! 3. `entry` — `@entry(e)` and `$param` in `.return` probes: hoisted into a
//!    generated entry probe that saves them per thread.
//! 4. `library` — tapset functions written in stap source
//!    (`library.stp`, plus generated tables such as `errno_str`), added to
//!    the script when it calls them and does not define them itself.
//!
//! Before them, `target_set` adds the probes that keep target_set.stp's
//! set when the script calls its functions; right before `library`,
//! `globals` adds the tapset's plain globals the script uses (`argc`,
//! `argv`, `NULL`).
//!
//! Generated code is stap text parsed by the compiler's own parser; every
//! expression gets a fresh id and the span of the script token it stands
//! for (the probe point, or the call it replaces), so diagnostics point at
//! the user's script. See docs/tapset.md.
pub mod entry;
mod errno_table;
pub(crate) mod globals;
pub mod kernel_aliases;
pub mod library;
mod listings;
mod syscall_table;
mod syscall_vars;
pub mod syscalls;
mod target_set;
mod tree;

/// Indexes of the tapset text made by compiler/build.rs: the library cut
/// at its declarations, the functions of each kernel tapset file.
mod index {
    include!(concat!(env!("OUT_DIR"), "/tapset_index.rs"));
}

use crate::ast::*;
use crate::diag::{Diagnostic, Diags};
use rustc_hash::FxHashMap;

/// Runs the tapset rewrites on an alias-expanded script. `args` are the
/// script arguments (for `argv_N`).
pub fn run(script: Script, args: &[String], diags: &mut Diags) -> Script {
    let mut s = script;
    let mut g = Gen::new(s.nexprs);
    target_set::add_probes(&mut s, &mut g);
    syscalls::rewrite(&mut s, args, &mut g, diags);
    listings::rewrite(&mut s, &mut g);
    entry::rewrite(&mut s, &mut g, diags);
    globals::include(&mut s, args, &mut g);
    library::include(&mut s, args, &mut g, diags);
    for (msg, span) in g.errors {
        diags.push(Diagnostic::semantic(msg, span));
    }
    s.nexprs = g.next;
    s
}

/// Builds AST pieces from stap text: fresh expression ids from `next`,
/// every span set to the script token the text stands for.
pub(crate) struct Gen {
    /// The next free expression id.
    pub next: ExprId,
    /// Internal errors (generated text that does not parse).
    pub errors: Vec<(String, Span)>,
    /// Statement lists already parsed (`stmts_of`), by text, as the
    /// parser made them (not relabelled): the syscall prologues repeat
    /// the same assignments across hundreds of probes.
    parsed: FxHashMap<String, Vec<Stmt>>,
    /// `Target::default()`, made once: what generated text is parsed for
    /// unless a caller names a target.
    default_target: crate::Target,
}

impl Gen {
    /// A generator whose first fresh expression id is `next`.
    pub fn new(next: ExprId) -> Gen {
        Gen {
            next,
            errors: Vec::new(),
            parsed: FxHashMap::default(),
            default_target: crate::Target::default(),
        }
    }

    /// The declarations of `text`, relabelled to `span`.
    pub fn items(&mut self, text: &str, span: Span) -> Vec<Item> {
        self.items_patched(text, span, &mut |_| true)
    }

    /// `items`, with `patch` applied to the parsed declarations before
    /// they are relabelled (to put in pieces built as AST, see `tree`);
    /// `patch` returns false when the text is not what it expects (an
    /// internal error, as for text that does not parse).
    pub fn items_patched(
        &mut self,
        text: &str,
        span: Span,
        patch: &mut dyn FnMut(&mut Vec<Item>) -> bool,
    ) -> Vec<Item> {
        self.items_patched_for(text, span, None, patch)
    }

    /// `items`, with the text's `%( %? %: %)` conditionals decided for
    /// `target` (the script's: `systemtap_v` of `--compatible`, ...).
    pub fn items_for(&mut self, text: &str, span: Span, target: &crate::Target) -> Vec<Item> {
        self.items_patched_for(text, span, Some(target), &mut |_| true)
    }

    /// `items_patched` for `target` (`None`: the default target).
    fn items_patched_for(
        &mut self,
        text: &str,
        span: Span,
        target: Option<&crate::Target>,
        patch: &mut dyn FnMut(&mut Vec<Item>) -> bool,
    ) -> Vec<Item> {
        let tokens = crate::parse::lexer::lex(text, &[]);
        let mut d = Diags::default();
        let target = target.unwrap_or(&self.default_target);
        let script = crate::parse::parse_for(&tokens, target, &mut d);
        if d.has_errors() {
            let first = d
                .list
                .first()
                .map(|x| x.message.clone())
                .unwrap_or_default();
            self.errors.push((
                format!("internal error in the built-in tapset: {first}"),
                span,
            ));
            return Vec::new();
        }
        let mut items = script.items;
        if !patch(&mut items) {
            self.errors.push((
                "internal error in the built-in tapset: unexpected generated code".to_string(),
                span,
            ));
            return Vec::new();
        }
        for it in &mut items {
            match it {
                Item::Probe(p) => {
                    p.span = span;
                    self.stmt(&mut p.body, span);
                }
                Item::Function(f) => {
                    f.span = span;
                    for p in &mut f.params {
                        p.span = span;
                    }
                    if let Some(b) = f.body.as_mut() {
                        self.stmt(b, span);
                    }
                }
                Item::Global(g) => g.span = span,
                _ => {}
            }
        }
        items
    }

    /// The statements of `text` (a statement list), relabelled to `span`.
    pub fn stmts(&mut self, text: &str, span: Span) -> Vec<Stmt> {
        self.stmts_of(&[text], span)
    }

    /// `stmts` of the `parts` joined by newlines, each part a statement
    /// list parsed once per `Gen` (then copied): the same as parsing the
    /// joined text, ids and spans included (the relabelling walks the
    /// joined list as `items` walks a probe body; generated statements
    /// hold no span the relabelling leaves).
    pub fn stmts_of<T: AsRef<str>>(&mut self, parts: &[T], span: Span) -> Vec<Stmt> {
        let mut all: Vec<Stmt> = Vec::new();
        for part in parts {
            let part = part.as_ref();
            if let Some(done) = self.parsed.get(part) {
                all.extend(done.iter().cloned());
                continue;
            }
            match parse_stmts(part, &self.default_target) {
                Some(done) => {
                    all.extend(done.iter().cloned());
                    self.parsed.insert(part.to_string(), done);
                }
                None => {
                    // Does not parse: the internal error as the whole
                    // text gives it.
                    let text: Vec<&str> = parts.iter().map(|p| p.as_ref()).collect();
                    return self.stmts_uncached(&text.join("\n"), span);
                }
            }
        }
        let mut body = Stmt {
            kind: StmtKind::Block(all),
            span,
        };
        self.stmt(&mut body, span);
        match body.kind {
            StmtKind::Block(b) => b,
            _ => Vec::new(),
        }
    }

    /// `stmts` without the cache.
    fn stmts_uncached(&mut self, text: &str, span: Span) -> Vec<Stmt> {
        let items = self.items(&format!("probe begin {{\n{text}\n}}"), span);
        match items.into_iter().next() {
            Some(Item::Probe(p)) => match p.body.kind {
                StmtKind::Block(b) => b,
                _ => vec![p.body],
            },
            _ => Vec::new(),
        }
    }

    /// The expression `text`, relabelled to `span`.
    pub fn expr(&mut self, text: &str, span: Span) -> Expr {
        let stmts = self.stmts(&format!("({text})"), span);
        match stmts.into_iter().next() {
            Some(Stmt {
                kind: StmtKind::Expr(e),
                ..
            }) => e,
            _ => Expr {
                kind: ExprKind::Num(0),
                span,
                id: self.fresh_id(),
            },
        }
    }

    /// A new expression id.
    pub fn fresh_id(&mut self) -> ExprId {
        let id = self.next;
        self.next += 1;
        id
    }

    /// Gives `e` and its sub-expressions fresh ids and the span `span`.
    pub fn relabel_expr(&mut self, e: &mut Expr, span: Span) {
        let mut work: Vec<&mut Expr> = Vec::with_capacity(16);
        work.push(e);
        self.relabel_exprs(&mut work, span);
    }

    /// `relabel_expr` on the trees in `work` (taken last first), leaving
    /// `work` empty.
    fn relabel_exprs(&mut self, work: &mut Vec<&mut Expr>, span: Span) {
        while let Some(x) = work.pop() {
            x.id = self.next;
            self.next += 1;
            x.span = span;
            x.push_children_mut(work);
        }
    }

    /// Gives every expression of `s` a fresh id, and everything `span`.
    pub fn stmt(&mut self, s: &mut Stmt, span: Span) {
        let mut work: Vec<&mut Stmt> = Vec::with_capacity(16);
        let mut es: Vec<&mut Expr> = Vec::with_capacity(8);
        let mut w: Vec<&mut Expr> = Vec::with_capacity(16);
        work.push(s);
        while let Some(x) = work.pop() {
            x.span = span;
            if let StmtKind::Foreach(f) = &mut x.kind {
                for k in &mut f.keys {
                    k.1 = span;
                }
                if let Some(v) = f.value.as_mut() {
                    v.1 = span;
                }
            }
            x.push_children_mut(&mut es, &mut work);
            for e in es.drain(..) {
                w.push(e);
                self.relabel_exprs(&mut w, span);
            }
        }
    }

    /// A copy of `s` with fresh expression ids (spans kept).
    pub fn fresh_copy(&mut self, s: &Stmt) -> Stmt {
        let mut s = s.clone();
        let next = &mut self.next;
        walk_exprs_mut(&mut s, &mut |y| {
            y.id = *next;
            *next += 1;
        });
        s
    }
}

/// The statements of the statement list `text` as the parser makes them
/// for `target` (ids from 0, spans in `text`), `None` when it does not
/// parse.
fn parse_stmts(text: &str, target: &crate::Target) -> Option<Vec<Stmt>> {
    let text = format!("probe begin {{\n{text}\n}}");
    let tokens = crate::parse::lexer::lex(&text, &[]);
    let mut d = Diags::default();
    let script = crate::parse::parse_for(&tokens, target, &mut d);
    if d.has_errors() {
        return None;
    }
    let mut items = script.items.into_iter();
    match (items.next(), items.next()) {
        (Some(Item::Probe(p)), None) => match p.body.kind {
            StmtKind::Block(b) => Some(b),
            _ => None,
        },
        _ => None,
    }
}

/// The names of the globals `s` declares.
pub(crate) fn declared_globals(s: &Script) -> std::collections::HashSet<String> {
    s.items
        .iter()
        .filter_map(|it| match it {
            Item::Global(g) => Some(g.name.clone()),
            _ => None,
        })
        .collect()
}

/// The body of every probe and function of `s`.
pub(crate) fn bodies_mut(s: &mut Script) -> Vec<&mut Stmt> {
    s.items
        .iter_mut()
        .filter_map(|it| match it {
            Item::Probe(p) => Some(&mut p.body),
            Item::Function(f) => f.body.as_mut(),
            _ => None,
        })
        .collect()
}

/// Calls `f` on every expression of `s`, parents before children.
pub(crate) fn walk_exprs_mut(s: &mut Stmt, f: &mut dyn FnMut(&mut Expr)) {
    let mut work: Vec<&mut Stmt> = Vec::with_capacity(16);
    let mut es: Vec<&mut Expr> = Vec::with_capacity(8);
    let mut w: Vec<&mut Expr> = Vec::with_capacity(16);
    work.push(s);
    while let Some(x) = work.pop() {
        x.push_children_mut(&mut es, &mut work);
        for e in es.drain(..) {
            w.push(e);
            while let Some(y) = w.pop() {
                f(y);
                y.push_children_mut(&mut w);
            }
        }
    }
}

/// The variable names `s` mentions (read or written), and the functions it
/// calls. Takes `&mut` only to walk the tree without copying it (the
/// generated tapset functions are large); `s` is not changed.
pub(crate) fn names_in(s: &mut Stmt) -> (Vec<String>, Vec<String>) {
    let mut vars = Vec::new();
    let mut calls = Vec::new();
    walk_exprs_mut(s, &mut |e| match &e.kind {
        ExprKind::Var(n) => vars.push(n.clone()),
        ExprKind::Call { name, .. } => calls.push(name.clone()),
        _ => {}
    });
    let mut st = vec![&*s];
    while let Some(x) = st.pop() {
        match &x.kind {
            StmtKind::Block(b) => st.extend(b.iter()),
            StmtKind::If { then, els, .. } => {
                st.push(then);
                if let Some(e) = els {
                    st.push(e);
                }
            }
            StmtKind::Loop(l) => st.push(&l.body),
            StmtKind::Foreach(f) => {
                vars.extend(f.keys.iter().map(|k| k.0.clone()));
                vars.extend(f.value.iter().map(|k| k.0.clone()));
                st.push(&f.body);
            }
            StmtKind::Try { body, handler, var } => {
                vars.extend(var.iter().map(|k| k.0.clone()));
                st.push(body);
                st.push(handler);
            }
            _ => {}
        }
    }
    (vars, calls)
}
