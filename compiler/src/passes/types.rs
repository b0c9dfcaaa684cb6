//! Type inference: long or string for every variable and expression, across
//! all probes, as stap's `typeresolution_info` does.
//!
//! Types flow both ways (an operator demands types of its operands, an
//! assignment gives its target the type of its value); the pass repeats
//! until nothing new is learnt (a repeat walks only the bodies that read
//! something learnt since, `Typer::dirty`), then reports conflicts with
//! stap's three
//! messages (`type mismatch: expected long but found string`, `type
//! mismatch (string)` chained to `type was first inferred here (long)`, and
//! `type mismatch: left and right sides don't agree (long vs string)`),
//! locals left without a type (`unresolved type `), printf argument count
//! and kinds. Globals are typed like locals, across every probe and
//! function that uses them (a string global is lowered as a one-entry map,
//! `passes/lower/strglobals.rs`).
//!
//! Needs: the `Script` and `passes::resolve`'s `Resolved` (run only when
//! resolution found no error). Runs next: `passes::lower`.
use super::resolve::{Builtin, Ref, Resolved};
use crate::ast::*;
use crate::diag::{Diagnostic, Diags};
use rustc_hash::FxHashMap;
use std::rc::Rc;
use vm_spec::program::ArgKind;
use vm_spec::tables::{HelperRes, HELPERS};

/// The type of an expression or variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ty {
    /// Not known (yet).
    #[default]
    Unknown,
    /// 64-bit integer.
    Long,
    /// String.
    Str,
    /// No value (`exit()`).
    Void,
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Ty::Unknown => "unknown",
            Ty::Long => "long",
            Ty::Str => "string",
            Ty::Void => "void",
        }
    }
}

/// The result of type inference.
#[derive(Debug, Clone, Default)]
pub struct Types {
    /// Type of each expression, indexed by `ExprId`.
    pub exprs: Vec<Ty>,
    /// Type of each local, per probe (same order as `Resolved::probes`),
    /// then per function (`Resolved::funcs`, parameters first).
    pub locals: Vec<Vec<Ty>>,
    /// Result type of each function (`Void` for none).
    pub funcs: Vec<Ty>,
    /// Type of each global (an array's: its values).
    pub globals: Vec<Ty>,
    /// Key types of each global array (empty for scalars).
    pub keys: Vec<Vec<Ty>>,
}

/// A variable: global or (probe, local).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Var {
    Global(usize),
    Local(usize, usize),
    /// Key `i` of global array `g`.
    Key(usize, usize),
}

impl Var {
    /// This variable's entry in tables kept per global, per local of each
    /// probe or function and per key of each array.
    fn slot<'t, T>(
        self,
        globals: &'t [T],
        locals: &'t [Vec<T>],
        keys: &'t [Vec<T>],
    ) -> Option<&'t T> {
        match self {
            Var::Global(g) => globals.get(g),
            Var::Local(p, l) => locals.get(p).and_then(|x| x.get(l)),
            Var::Key(g, i) => keys.get(g).and_then(|x| x.get(i)),
        }
    }

    /// [`Var::slot`], to change.
    fn slot_mut<'t, T>(
        self,
        globals: &'t mut [T],
        locals: &'t mut [Vec<T>],
        keys: &'t mut [Vec<T>],
    ) -> Option<&'t mut T> {
        match self {
            Var::Global(g) => globals.get_mut(g),
            Var::Local(p, l) => locals.get_mut(p).and_then(|x| x.get_mut(l)),
            Var::Key(g, i) => keys.get_mut(g).and_then(|x| x.get_mut(i)),
        }
    }
}

struct Typer<'a> {
    res: &'a Resolved,
    t: Types,
    /// Where each variable's type was first inferred.
    first_g: Vec<Option<Span>>,
    first_l: Vec<Vec<Option<Span>>>,
    first_k: Vec<Vec<Option<Span>>>,
    /// Scope being walked: a probe, or `probes.len() + f` for function f.
    probe: usize,
    /// Function being walked.
    func: Option<usize>,
    changed: bool,
    /// The argument kinds of each format text met so far.
    formats: FxHashMap<Vec<u8>, Rc<[ArgKind]>>,
    /// Times the walk met something that can make a later walk differ:
    /// an unknown type read or made, or an operand whose type follows the
    /// expected one (`exit()`, `error()`, ...).
    unknowns: u64,
    /// The bodies (`probe` numbering) that read each variable, or each
    /// function's result, while it had no type (and left it so there):
    /// giving it a type makes them `dirty`.
    readers: FxHashMap<Var, Vec<usize>>,
    func_readers: FxHashMap<usize, Vec<usize>>,
    /// Bodies whose next walk may differ from their last: a type they
    /// read as unknown was given since, or they gave one from a walk that
    /// met unknowns (another walk would expect it). A clean body's walk
    /// would read exactly what its last one read, change nothing and find
    /// the same errors, so a round walks the dirty bodies only.
    dirty: Vec<bool>,
    /// The errors of each body's last walk (`Typer::error`).
    body_errors: Vec<Vec<Diagnostic>>,
}

impl Typer<'_> {
    fn var_of(&self, id: ExprId) -> Option<Var> {
        match self.res.refs.get(id as usize) {
            Some(Ref::Global(g)) => Some(Var::Global(*g)),
            Some(Ref::Local(l)) => Some(Var::Local(self.probe, *l)),
            _ => None,
        }
    }

    fn var_ty(&self, v: Var) -> Ty {
        let t = &self.t;
        v.slot(&t.globals, &t.locals, &t.keys)
            .copied()
            .unwrap_or_default()
    }

    fn set_var(&mut self, v: Var, ty: Ty, at: Span) {
        let t = &mut self.t;
        let slot = v.slot_mut(&mut t.globals, &mut t.locals, &mut t.keys);
        let first = v.slot_mut(&mut self.first_g, &mut self.first_l, &mut self.first_k);
        if let (Some(slot), Some(first)) = (slot, first) {
            if *slot == Ty::Unknown {
                *slot = ty;
                *first = Some(at);
                self.changed = true;
                if !self.readers.is_empty() {
                    if let Some(bodies) = self.readers.remove(&v) {
                        self.make_dirty(&bodies);
                    }
                }
            }
        }
    }

    /// `v` was read as unknown and stays so here.
    fn note_unknown(&mut self, v: Var) {
        self.unknowns += 1;
        self.readers.entry(v).or_default().push(self.probe);
    }

    /// Function `f`'s result was read as unknown and stays so here.
    fn note_unknown_func(&mut self, f: usize) {
        self.unknowns += 1;
        self.func_readers.entry(f).or_default().push(self.probe);
    }

    /// Starts walking body `b` if it is dirty (its last walk's errors
    /// dropped); false if its walk would repeat the last.
    fn begin_walk(&mut self, b: usize) -> bool {
        match self.dirty.get_mut(b) {
            Some(d) if *d => {
                *d = false;
                self.probe = b;
                if let Some(e) = self.body_errors.get_mut(b) {
                    e.clear();
                }
                true
            }
            _ => false,
        }
    }

    fn make_dirty(&mut self, bodies: &[usize]) {
        for &b in bodies {
            if let Some(d) = self.dirty.get_mut(b) {
                *d = true;
            }
        }
    }

    /// The body being walked gave a type from a walk that met unknowns.
    fn dirty_here(&mut self) {
        if let Some(d) = self.dirty.get_mut(self.probe) {
            *d = true;
        }
    }

    /// Gives function `f` its result type `ty` (it had none); `sensitive`:
    /// the type came from a walk that met unknowns.
    fn set_func(&mut self, f: usize, ty: Ty, sensitive: bool) {
        if let Some(slot) = self.t.funcs.get_mut(f) {
            *slot = ty;
            self.changed = true;
            if sensitive {
                self.dirty_here();
            }
            if let Some(bodies) = self.func_readers.remove(&f) {
                self.make_dirty(&bodies);
            }
        }
    }

    /// Types `e`, the value of `v` (a key or a parameter): against `v`'s
    /// type once it has one, else on its own, giving `v` its type when that
    /// is a long or a string.
    fn flow(&mut self, v: Var, e: &Expr) {
        let vt = self.var_ty(v);
        if vt == Ty::Unknown {
            let before = self.unknowns;
            let t = self.expr(e, Ty::Unknown);
            if matches!(t, Ty::Long | Ty::Str) {
                // Another round would type `e` expecting `t`.
                if self.unknowns != before {
                    self.dirty_here();
                }
                self.set_var(v, t, e.span);
            } else {
                self.note_unknown(v);
            }
        } else {
            self.want(e, vt);
        }
    }

    fn first_inferred(&self, v: Var) -> Option<Span> {
        v.slot(&self.first_g, &self.first_l, &self.first_k)
            .copied()
            .flatten()
    }

    /// The global array an expression (`Var`) names.
    fn array_of(&self, e: &Expr) -> Option<usize> {
        match self.res.refs.get(e.id as usize) {
            Some(Ref::Global(g)) => Some(*g),
            _ => None,
        }
    }

    /// Types the keys of `a[k...]` named as a statistic (statistics arrays).
    fn stat_elem(&mut self, a: &Expr) {
        if let ExprKind::Index { base, keys } = &a.kind {
            if let Some(g) = self.array_of(base) {
                self.array_keys(g, &keys.iter().flatten().collect::<Vec<_>>(), a.span);
            }
        }
    }

    /// Types the keys of an access to array `g` (arity fixed by the first).
    fn array_keys(&mut self, g: usize, keys: &[&Expr], at: Span) {
        let keys: Vec<Option<&Expr>> = keys.iter().map(|k| Some(*k)).collect();
        self.array_slice_keys(g, &keys, at);
    }

    /// `array_keys` where a `None` key is a slice's `*` (not typed).
    fn array_slice_keys(&mut self, g: usize, keys: &[Option<&Expr>], at: Span) {
        let n = keys.len();
        let Some(cur) = self.t.keys.get(g).map(Vec::len) else {
            return;
        };
        if cur == 0 {
            self.t.keys[g] = vec![Ty::Unknown; n];
            self.first_k[g] = vec![None; n];
            self.changed = true;
        } else if cur != n {
            self.error(Diagnostic::semantic(
                format!("inconsistent arity ({n} vs {cur})"),
                at,
            ));
            return;
        }
        for (i, k) in keys.iter().enumerate() {
            if let Some(k) = k {
                self.flow(Var::Key(g, i), k);
            }
        }
    }

    /// Ties variable `a` and `b` (a foreach variable and its key or value).
    fn tie(&mut self, a: Var, b: Var, at: Span) {
        let (ta, tb) = (self.var_ty(a), self.var_ty(b));
        if ta == Ty::Unknown && tb == Ty::Unknown {
            self.note_unknown(a);
            self.note_unknown(b);
        } else if ta == Ty::Unknown && tb != Ty::Unknown {
            self.set_var(a, tb, at);
        } else if tb == Ty::Unknown && ta != Ty::Unknown {
            self.set_var(b, ta, at);
        } else if ta != tb {
            let mut d = Diagnostic::semantic(format!("type mismatch ({})", tb.name()), at);
            if let Some(first) = self.first_inferred(a) {
                d = d.with_note(
                    format!("type was first inferred here ({})", ta.name()),
                    first,
                );
            }
            self.error(d);
        }
    }

    /// A foreach loop: keys and value tied to the array's.
    fn foreach(&mut self, f: &Foreach) {
        if matches!(&f.array.kind, ExprKind::Stat { op, .. } if op.starts_with("@hist")) {
            // Bucket indexes of a histogram (resolve/arrays.rs foreach_hist).
            self.expr(&f.array, Ty::Unknown);
            let locals = self.res.body_locals(self.probe).to_vec();
            for (name, sp) in &f.keys {
                if let Some(l) = locals.iter().position(|(n, _)| n == name) {
                    self.set_var(Var::Local(self.probe, l), Ty::Long, *sp);
                }
            }
            if let Some(l) = &f.limit {
                self.want(l, Ty::Long);
            }
            self.stmt(&f.body);
            return;
        }
        let Some(g) = self.array_of(&f.array) else {
            return;
        };
        let n = f.keys.len();
        if self.t.keys.get(g).is_some_and(Vec::is_empty) {
            self.t.keys[g] = vec![Ty::Unknown; n];
            self.first_k[g] = vec![None; n];
            self.changed = true;
        } else if self.t.keys.get(g).map(Vec::len) != Some(n) {
            let cur = self.t.keys.get(g).map_or(0, Vec::len);
            self.error(Diagnostic::semantic(
                format!("inconsistent arity ({n} vs {cur})"),
                f.array.span,
            ));
        }
        let locals = self.res.body_locals(self.probe).to_vec();
        let local = |name: &str| locals.iter().position(|(n, _)| n == name);
        for (i, (name, sp)) in f.keys.iter().enumerate() {
            if let (Some(l), true) = (local(name), i < self.t.keys[g].len()) {
                self.tie(Var::Local(self.probe, l), Var::Key(g, i), *sp);
            }
        }
        if let Some((name, sp)) = &f.value {
            if let Some(l) = local(name) {
                self.tie(Var::Local(self.probe, l), Var::Global(g), *sp);
            }
        }
        // The fixed keys of a slice (`arr[1, *]`) have the key's type.
        for (i, k) in f.slice.iter().flatten().enumerate() {
            let Some(k) = k else { continue };
            self.flow(Var::Key(g, i), k);
        }
        if let Some(l) = &f.limit {
            self.want(l, Ty::Long);
        }
        self.stmt(&f.body);
    }

    fn error(&mut self, d: Diagnostic) {
        let Some(errors) = self.body_errors.get_mut(self.probe) else {
            return;
        };
        if !errors.contains(&d) {
            errors.push(d);
        }
    }

    fn record(&mut self, e: &Expr, ty: Ty) -> Ty {
        if ty == Ty::Unknown {
            self.unknowns += 1;
        }
        if let Some(slot) = self.t.exprs.get_mut(e.id as usize) {
            if *slot == Ty::Unknown && ty != Ty::Unknown {
                *slot = ty;
                self.changed = true;
            }
        }
        ty
    }

    /// The arguments of printf/sprintf against the conversions of their
    /// literal format: the count must match, each argument gets the kind
    /// its conversion wants, and extra arguments are still typed.
    fn format_args(&mut self, format: Option<&[u8]>, args: &[Expr], span: Span) {
        let kinds = match format {
            Some(f) => match self.formats.get(f) {
                Some(k) => Rc::clone(k),
                None => {
                    let k: Rc<[ArgKind]> = crate::printf::parse(&String::from_utf8_lossy(f))
                        .unwrap_or_default()
                        .into();
                    self.formats.insert(f.to_vec(), Rc::clone(&k));
                    k
                }
            },
            None => Rc::from([]),
        };
        if kinds.len() != args.len() {
            self.error(Diagnostic::semantic(
                "Wrong number of args to formatted print operator",
                span,
            ));
        }
        for (a, k) in args.iter().zip(kinds.iter()) {
            let want = match k {
                ArgKind::Int => Ty::Long,
                ArgKind::Str => Ty::Str,
            };
            self.want(a, want);
        }
        for a in args.iter().skip(kinds.len()) {
            self.expr(a, Ty::Unknown);
        }
    }

    /// Types `e` where a value of type `want` is required.
    fn want(&mut self, e: &Expr, want: Ty) -> Ty {
        let got = self.expr(e, want);
        if got != Ty::Unknown && got != want {
            match self
                .var_of(e.id)
                .filter(|_| matches!(e.kind, ExprKind::Var(_)))
            {
                Some(v) => {
                    let mut d =
                        Diagnostic::semantic(format!("type mismatch ({})", want.name()), e.span);
                    if let Some(first) = self.first_inferred(v) {
                        d = d.with_note(
                            format!("type was first inferred here ({})", got.name()),
                            first,
                        );
                    }
                    self.error(d);
                }
                None => self.error(Diagnostic::semantic(
                    format!(
                        "type mismatch: expected {} but found {}",
                        want.name(),
                        got.name()
                    ),
                    e.span,
                )),
            }
        }
        got
    }

    /// Types `a` and `b`, which must agree; returns the common type.
    fn agree(&mut self, a: &Expr, b: &Expr, hint: Ty, op: Span) -> Ty {
        let mut ta = self.expr(a, hint);
        let mut tb = self.expr(b, if ta == Ty::Unknown { hint } else { ta });
        if ta == Ty::Unknown && tb != Ty::Unknown {
            ta = self.expr(a, tb);
        }
        if tb == Ty::Unknown && ta != Ty::Unknown {
            tb = self.expr(b, ta);
        }
        self.sides_agree(ta, tb, op)
    }

    /// `agree(lhs, rhs, hint, op)` for `lhs = rhs` where `lhs` is variable
    /// `v` (untyped: `tl`, its reading by the assignment, is unknown), and
    /// `hint` no type: this assignment's own readings of `v` do not make
    /// its body dirty when `rhs` gives `v` a type (another walk would take
    /// the `tl` path and type `rhs` expecting that type), unless typing
    /// `rhs` met unknowns.
    fn agree_into(&mut self, v: Var, lhs: &Expr, rhs: &Expr, hint: Ty, op: Span) -> Ty {
        // `expr(lhs, hint)`, `v` untyped and `hint` no type: unknown,
        // nothing given a type (its reading is noted below if `v` stays
        // untyped).
        self.unknowns += 1;
        let mut ta = Ty::Unknown;
        let before = self.unknowns;
        let mut tb = self.expr(rhs, hint);
        if self.unknowns != before {
            self.dirty_here();
        }
        if ta == Ty::Unknown && tb != Ty::Unknown {
            ta = self.expr(lhs, tb);
        }
        if tb == Ty::Unknown && ta != Ty::Unknown {
            tb = self.expr(rhs, ta);
        }
        if self.var_ty(v) == Ty::Unknown {
            self.note_unknown(v);
        }
        self.sides_agree(ta, tb, op)
    }

    /// Types `e`; `hint` is the type its context expects (or Unknown).
    fn expr(&mut self, e: &Expr, hint: Ty) -> Ty {
        let ty = match &e.kind {
            // `$value` of a procfs or input probe (resolve: value_exprs).
            ExprKind::Target(_) if self.res.value_exprs.contains(&e.id) => Ty::Str,
            ExprKind::Num(_) | ExprKind::Target(_) => Ty::Long,
            ExprKind::Str(_) => Ty::Str,
            ExprKind::Var(_) => match self.var_of(e.id) {
                Some(v) => {
                    let t = self.var_ty(v);
                    if t == Ty::Unknown && matches!(hint, Ty::Long | Ty::Str) {
                        self.set_var(v, hint, e.span);
                        hint
                    } else {
                        if t == Ty::Unknown {
                            self.note_unknown(v);
                        }
                        t
                    }
                }
                None => Ty::Unknown,
            },
            ExprKind::Call { args, .. } => match self.res.refs.get(e.id as usize) {
                Some(Ref::Builtin(b)) => match *b {
                    Builtin::Helper { id, arg } => {
                        if arg {
                            for a in args {
                                self.want(a, Ty::Long);
                            }
                        }
                        match HELPERS.get(id as usize).map(|h| h.res) {
                            Some(HelperRes::STR) => Ty::Str,
                            _ => Ty::Long,
                        }
                    }
                    Builtin::HelperDiv { .. } => Ty::Long,
                    Builtin::Strlen => {
                        for a in args {
                            self.want(a, Ty::Str);
                        }
                        Ty::Long
                    }
                    // stap's exit() has no declared type: like a user
                    // function's, it takes the type its context wants
                    // (`c && exit()` is long, value 0).
                    Builtin::Exit | Builtin::Abort => {
                        self.unknowns += 1;
                        if hint == Ty::Long {
                            Ty::Long
                        } else {
                            Ty::Void
                        }
                    }
                    b => {
                        if matches!(b, Builtin::Error | Builtin::Warn) {
                            self.unknowns += 1;
                        }
                        let kinds = b.string_args().unwrap_or_default();
                        for (a, is_str) in args.iter().zip(kinds) {
                            self.want(a, if *is_str { Ty::Str } else { Ty::Long });
                        }
                        match b {
                            Builtin::Substr
                            | Builtin::StrReplace
                            | Builtin::TextStr
                            | Builtin::TextStrn
                            | Builtin::StringQuoted
                            | Builtin::Tokenize
                            | Builtin::Matched
                            | Builtin::MatchedStr
                            | Builtin::Pp
                            | Builtin::Pn
                            | Builtin::Pretty { .. }
                            | Builtin::ProbeType => Ty::Str,
                            Builtin::Error | Builtin::Warn if hint == Ty::Long => Ty::Long,
                            Builtin::Error
                            | Builtin::System
                            | Builtin::PrintChar
                            | Builtin::SwitchFile
                            | Builtin::Warn => Ty::Void,
                            _ => Ty::Long,
                        }
                    }
                },
                Some(Ref::Func(f)) => {
                    let f = *f;
                    let scope = self.res.probes.len() + f;
                    for (k, a) in args.iter().enumerate() {
                        self.flow(Var::Local(scope, k), a);
                    }
                    let rt = self.t.funcs.get(f).copied().unwrap_or_default();
                    if rt == Ty::Unknown && matches!(hint, Ty::Long | Ty::Str) {
                        self.set_func(f, hint, false);
                        hint
                    } else {
                        if rt == Ty::Unknown {
                            self.note_unknown_func(f);
                        }
                        rt
                    }
                }
                _ => Ty::Unknown,
            },
            ExprKind::Format { name, format, args } => {
                if name == "sprintf" {
                    self.format_args(format.as_deref(), args, e.span);
                } else {
                    for a in args {
                        let t = self.expr(a, Ty::Unknown);
                        if t == Ty::Void {
                            self.want(a, Ty::Long);
                        }
                    }
                }
                if name.starts_with('s') {
                    Ty::Str
                } else {
                    Ty::Void
                }
            }
            ExprKind::Print { kind, format, args } => {
                match kind {
                    PrintKind::Printf => self.format_args(format.as_deref(), args, e.span),
                    PrintKind::Print | PrintKind::Println => {
                        for a in args {
                            let t = self.expr(a, Ty::Unknown);
                            if t == Ty::Void {
                                self.want(a, Ty::Long);
                            }
                        }
                    }
                }
                Ty::Void
            }
            ExprKind::Unary(_, a) => {
                self.want(a, Ty::Long);
                Ty::Long
            }
            ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) => {
                self.want(a, Ty::Long);
                self.want(b, Ty::Long);
                Ty::Long
            }
            ExprKind::Cmp(_, a, b) => {
                let t = self.agree(a, b, Ty::Unknown, e.span);
                if t == Ty::Void {
                    self.error(Diagnostic::semantic(
                        "type mismatch: expected long but found void",
                        e.span,
                    ));
                }
                Ty::Long
            }
            ExprKind::Concat(a, b) => {
                self.want(a, Ty::Str);
                self.want(b, Ty::Str);
                Ty::Str
            }
            ExprKind::Regex { lhs, .. } => {
                self.want(lhs, Ty::Str);
                Ty::Long
            }
            ExprKind::Ternary(c, a, b) => {
                self.want(c, Ty::Long);
                let ta = self.expr(a, hint);
                let hint_b = if ta == Ty::Unknown { hint } else { ta };
                let tb = if hint_b == Ty::Unknown {
                    self.expr(b, Ty::Unknown)
                } else {
                    self.want(b, hint_b)
                };
                if ta == Ty::Unknown && tb != Ty::Unknown {
                    self.want(a, tb);
                    tb
                } else {
                    ta
                }
            }
            ExprKind::Assign(op, lhs, rhs) => match op {
                AssignOp::Set => {
                    // A variable keeps its first type: a value of another
                    // type is a mismatch at the variable (stap's chained form).
                    let lv = self
                        .var_of(lhs.id)
                        .filter(|_| matches!(lhs.kind, ExprKind::Var(_)));
                    let tl = match lv {
                        // `expr(lhs, Unknown)` of an untyped variable:
                        // unknown, nothing recorded; its reading is noted
                        // below.
                        Some(v) if self.var_ty(v) == Ty::Unknown => {
                            self.unknowns += 1;
                            Ty::Unknown
                        }
                        _ => self.expr(lhs, Ty::Unknown),
                    };
                    if let (Some(v), true) = (lv, tl != Ty::Unknown) {
                        let tr = self.expr(rhs, tl);
                        if tr != Ty::Unknown && tr != tl {
                            let mut d = Diagnostic::semantic(
                                format!("type mismatch ({})", tr.name()),
                                lhs.span,
                            );
                            if let Some(first) = self.first_inferred(v) {
                                d = d.with_note(
                                    format!("type was first inferred here ({})", tl.name()),
                                    first,
                                );
                            }
                            self.error(d);
                        }
                        return self.record(e, tl);
                    }
                    let t = match lv {
                        Some(v) if !matches!(hint, Ty::Long | Ty::Str) => {
                            self.agree_into(v, lhs, rhs, hint, e.span)
                        }
                        Some(v) => {
                            self.note_unknown(v);
                            self.agree(lhs, rhs, hint, e.span)
                        }
                        None => self.agree(lhs, rhs, hint, e.span),
                    };
                    if t == Ty::Void {
                        self.error(Diagnostic::semantic(
                            "type mismatch: expected long but found void",
                            rhs.span,
                        ));
                    }
                    t
                }
                AssignOp::Bin(_) => {
                    self.want(lhs, Ty::Long);
                    self.want(rhs, Ty::Long);
                    Ty::Long
                }
                AssignOp::Concat => {
                    self.want(lhs, Ty::Str);
                    self.want(rhs, Ty::Str);
                    Ty::Str
                }
            },
            ExprKind::PreIncr(_, a) | ExprKind::PostIncr(_, a) => {
                self.want(a, Ty::Long);
                Ty::Long
            }
            ExprKind::Index { base, keys } if matches!(base.kind, ExprKind::Var(_)) => {
                match self.array_of(base) {
                    Some(g) => {
                        self.array_keys(g, &keys.iter().flatten().collect::<Vec<_>>(), e.span);
                        let t = self.var_ty(Var::Global(g));
                        if t == Ty::Unknown && matches!(hint, Ty::Long | Ty::Str) {
                            self.set_var(Var::Global(g), hint, e.span);
                            hint
                        } else {
                            if t == Ty::Unknown {
                                self.note_unknown(Var::Global(g));
                            }
                            t
                        }
                    }
                    None => Ty::Unknown,
                }
            }
            // `i in @hist_log(s)`: a bucket's count, as `@hist_log(s)[i]`.
            ExprKind::In { keys, array } if matches!(array.kind, ExprKind::Stat { .. }) => {
                self.expr(array, Ty::Unknown);
                for k in keys.iter().flatten() {
                    self.want(k, Ty::Long);
                }
                Ty::Long
            }
            ExprKind::In { keys, array } => {
                if let Some(g) = self.array_of(array) {
                    let keys: Vec<Option<&Expr>> = keys.iter().map(Option::as_ref).collect();
                    self.array_slice_keys(g, &keys, e.span);
                }
                Ty::Long
            }
            // `@hist_log(s)[i]`: one bucket's count.
            ExprKind::Index { base, keys } if matches!(base.kind, ExprKind::Stat { .. }) => {
                self.expr(base, Ty::Unknown);
                for k in keys.iter().flatten() {
                    self.want(k, Ty::Long);
                }
                Ty::Long
            }
            // A histogram is only printed (print/println take it as is).
            ExprKind::Stat { op, args } if op.starts_with("@hist") => {
                if let Some(a) = args.first() {
                    self.stat_elem(a);
                }
                Ty::Unknown
            }
            ExprKind::Stat { args, .. } => {
                if let Some(a) = args.first() {
                    self.stat_elem(a);
                }
                Ty::Long
            }
            ExprKind::Append(a, b) => {
                self.stat_elem(a);
                self.want(b, Ty::Long);
                Ty::Void
            }
            ExprKind::AtOp { op, .. } if op == "@defined" => Ty::Long,
            // Only where `resolve` found it dead (`Resolved::dead_targets`).
            ExprKind::AtOp { op, .. } if op == "@entry" => Ty::Long,
            // A kernel global variable (its name is a literal).
            ExprKind::AtOp { op, .. } if op == "@var" => Ty::Long,
            // A target variable's member chain (resolve checked the form);
            // `@cast(addr, "type")->...` also takes its address as a long.
            ExprKind::Deref { base, comps } => {
                if let ExprKind::AtOp { op, args } = &base.kind {
                    if let Some(a) = args.first().filter(|_| op == "@cast") {
                        self.want(a, Ty::Long);
                    }
                }
                for c in comps {
                    if let TargetComp::Index(i) = c {
                        self.want(i, Ty::Long);
                    }
                }
                Ty::Long
            }
            // `&x` of a target value: an address.
            ExprKind::AddrOf(inner) => {
                match &inner.kind {
                    // `&@var("x")`: its operand is the name.
                    ExprKind::AtOp { op, .. } if op == "@var" => {}
                    ExprKind::AtOp { args, .. } => {
                        if let Some(a) = args.first() {
                            self.want(a, Ty::Long);
                        }
                    }
                    _ => {
                        self.expr(inner, Ty::Long);
                    }
                }
                Ty::Long
            }
            // Rejected by `resolve`; this pass does not run on them.
            _ => Ty::Unknown,
        };
        self.record(e, ty)
    }

    fn cond(&mut self, e: &Expr) {
        self.want(e, Ty::Long);
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Block(b) => b.iter().for_each(|s| self.stmt(s)),
            StmtKind::Expr(e) => {
                self.expr(e, Ty::Unknown);
            }
            StmtKind::If { cond, then, els } => {
                self.cond(cond);
                self.stmt(then);
                if let Some(e) = els {
                    self.stmt(e);
                }
            }
            StmtKind::Loop(l) => {
                let (init, cond, incr, body) = (&l.init, &l.cond, &l.incr, &l.body);
                if let Some(e) = init {
                    self.expr(e, Ty::Unknown);
                }
                self.cond(cond);
                if let Some(e) = incr {
                    self.expr(e, Ty::Unknown);
                }
                self.stmt(body);
            }
            StmtKind::Foreach(f) => self.foreach(f),
            StmtKind::Try { body, var, handler } => {
                self.stmt(body);
                if let Some((name, sp)) = var {
                    let locals = self.res.body_locals(self.probe);
                    if let Some(l) = locals.iter().position(|(n, _)| n == name) {
                        self.set_var(Var::Local(self.probe, l), Ty::Str, *sp);
                    }
                }
                self.stmt(handler);
            }
            StmtKind::Delete(e) => {
                if let ExprKind::Index { base, keys } = &e.kind {
                    if let Some(g) = self.array_of(base) {
                        let keys: Vec<Option<&Expr>> = keys.iter().map(Option::as_ref).collect();
                        self.array_slice_keys(g, &keys, e.span);
                    }
                }
            }
            StmtKind::Return(e) => {
                let Some(f) = self.func else { return };
                let rt = self.t.funcs.get(f).copied().unwrap_or_default();
                let before = self.unknowns;
                let got = match e {
                    None => Ty::Void,
                    Some(e) if rt == Ty::Unknown => self.expr(e, Ty::Unknown),
                    Some(e) => self.want(e, rt),
                };
                if rt == Ty::Unknown && got != Ty::Unknown {
                    // Another round would type `e` expecting `got`.
                    let sensitive = self.unknowns != before;
                    self.set_func(f, got, sensitive);
                } else if rt == Ty::Unknown {
                    self.note_unknown_func(f);
                } else if rt != Ty::Unknown && got != Ty::Unknown && got != rt && e.is_none() {
                    self.error(Diagnostic::semantic(
                        format!("type mismatch: expected {} but found void", rt.name()),
                        s.span,
                    ));
                }
            }
            _ => {}
        }
    }
}

/// Infers types for `script`, reporting conflicts into `diags`.
pub fn run(script: &Script, res: &Resolved, diags: &mut Diags) -> Types {
    let mut ty = Typer {
        res,
        t: Types {
            exprs: vec![Ty::Unknown; script.nexprs as usize],
            locals: res
                .probes
                .iter()
                .map(|p| p.locals.len())
                .chain(res.funcs.iter().map(|f| f.locals.len()))
                .map(|n| vec![Ty::Unknown; n])
                .collect(),
            globals: vec![Ty::Unknown; res.globals.len()],
            funcs: vec![Ty::Unknown; res.funcs.len()],
            keys: vec![Vec::new(); res.globals.len()],
        },
        first_k: vec![Vec::new(); res.globals.len()],
        first_g: vec![None; res.globals.len()],
        first_l: res
            .probes
            .iter()
            .map(|p| p.locals.len())
            .chain(res.funcs.iter().map(|f| f.locals.len()))
            .map(|n| vec![None; n])
            .collect(),
        probe: 0,
        func: None,
        changed: false,
        formats: FxHashMap::default(),
        unknowns: 0,
        readers: FxHashMap::default(),
        func_readers: FxHashMap::default(),
        dirty: vec![true; res.probes.len() + res.funcs.len()],
        body_errors: vec![Vec::new(); res.probes.len() + res.funcs.len()],
    };
    // Initialisers fix the type of their global.
    for (g, info) in res.globals.iter().enumerate() {
        match &info.init {
            Some(Literal::Num(_, _)) => ty.set_var(Var::Global(g), Ty::Long, info.span),
            Some(Literal::Str(_, _)) => ty.set_var(Var::Global(g), Ty::Str, info.span),
            None => {}
        }
    }
    // Declared parameter and result types.
    let np = res.probes.len();
    for (f, rf) in res.funcs.iter().enumerate() {
        let Some(Item::Function(decl)) = script.items.get(rf.item) else {
            continue;
        };
        let ann = |a: &TypeAnn| match a {
            TypeAnn::Long => Ty::Long,
            TypeAnn::Str => Ty::Str,
        };
        for (k, prm) in decl.params.iter().enumerate() {
            if let Some(t) = &prm.ty {
                ty.set_var(Var::Local(np + f, k), ann(t), prm.span);
            }
        }
        if let Some(t) = &decl.ret {
            ty.t.funcs[f] = ann(t);
        }
    }
    // Iterate to a fixed point, then once more to collect the errors of the
    // final state only. A round walks only the bodies whose walk could
    // differ from their last (`Typer::dirty`): the others would repeat it.
    for _ in 0..64 {
        ty.changed = false;
        for (p, rp) in res.probes.iter().enumerate() {
            if !ty.begin_walk(p) {
                continue;
            }
            ty.func = None;
            if let Some(Item::Probe(decl)) = script.items.get(rp.item) {
                ty.stmt(&decl.body);
            }
        }
        for (f, rf) in res.funcs.iter().enumerate() {
            if !rf.used || !ty.begin_walk(np + f) {
                continue;
            }
            ty.func = Some(f);
            if let Some(Item::Function(decl)) = script.items.get(rf.item) {
                if let Some(body) = &decl.body {
                    ty.stmt(body);
                }
            }
        }
        if !ty.changed {
            break;
        }
    }
    // A used function that never returns a value returns nothing.
    for (f, rf) in res.funcs.iter().enumerate() {
        if ty.t.funcs[f] == Ty::Unknown {
            ty.t.funcs[f] = Ty::Void;
        }
        if rf.used {
            for (k, (_, span)) in rf.locals.iter().enumerate() {
                if ty.t.locals[np + f][k] == Ty::Unknown {
                    diags.push(Diagnostic::semantic("unresolved type ", *span));
                }
            }
        }
    }
    // The errors of the last round: each body's last walk, in walk order,
    // each once.
    let mut errors: Vec<Diagnostic> = Vec::new();
    for d in std::mem::take(&mut ty.body_errors).into_iter().flatten() {
        if !errors.contains(&d) {
            errors.push(d);
        }
    }
    for d in errors {
        diags.push(d);
    }
    for (p, rp) in res.probes.iter().enumerate() {
        for (l, (_, span)) in rp.locals.iter().enumerate() {
            if ty.t.locals[p][l] == Ty::Unknown {
                diags.push(Diagnostic::semantic("unresolved type ", *span));
            }
        }
    }
    for (g, info) in res.globals.iter().enumerate() {
        if info.array {
            if ty.t.keys[g].contains(&Ty::Unknown) {
                diags.push(Diagnostic::semantic("unresolved type ", info.span));
            }
            if ty.t.globals[g] == Ty::Unknown {
                ty.t.globals[g] = Ty::Long;
            }
            continue;
        }
        if ty.t.globals[g] == Ty::Unknown {
            // Referenced but never given a type; unreferenced ones are
            // elided with a warning by `resolve`.
            let referenced =
                res.refs.contains(&Ref::Global(g)) && !res.stats.iter().any(|s| s.global == g);
            if referenced {
                diags.push(Diagnostic::semantic("unresolved type ", info.span));
            }
            ty.t.globals[g] = Ty::Long;
        }
    }
    ty.t
}

impl Typer<'_> {
    /// The type of a two-sided operation whose sides have types `ta` and
    /// `tb` (either may still be unknown): stap's "left and right sides
    /// don't agree" at `op` when both are known and differ.
    fn sides_agree(&mut self, ta: Ty, tb: Ty, op: Span) -> Ty {
        if ta != Ty::Unknown && tb != Ty::Unknown && ta != tb {
            self.error(Diagnostic::semantic(
                format!(
                    "type mismatch: left and right sides don't agree ({} vs {})",
                    ta.name(),
                    tb.name()
                ),
                op,
            ));
        }
        if ta == Ty::Unknown {
            tb
        } else {
            ta
        }
    }
}

#[cfg(test)]
mod tests {
    /// Compiles `src`: `Ok` or the rendered errors.
    fn compile(src: &str) -> Result<(), String> {
        crate::compile("x.stp", src, &crate::Options::default())
            .map(|_| ())
            .map_err(|f| f.rendered)
    }

    #[test]
    fn types_learnt_late_reach_the_bodies_that_read_them_early() {
        // A local read before its type is known, in the same body.
        assert_eq!(compile("probe begin { y = x; x = 1; print(y) }"), Ok(()));
        // A function's result known only from a function walked later.
        let src = "function f() { return g() }\nfunction g() { return \"s\" }\n\
                   probe begin { print(f() . \"\") }";
        assert_eq!(compile(src), Ok(()));
        // A global typed by a later probe.
        let src = "global a\nprobe begin { b = a; print(b . \"\") }\nprobe end { a = \"x\" }";
        assert_eq!(compile(src), Ok(()));
    }

    #[test]
    fn conflicts_found_once_a_later_body_types_a_variable() {
        let src = "global a\nprobe begin { x = a; x = \"s\" }\nprobe end { a = 1 }";
        let e = compile(src).unwrap_err();
        assert!(e.contains("type mismatch"), "{e}");
    }
}
