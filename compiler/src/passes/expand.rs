//! Probe alias expansion, run between parsing and `resolve`.
//!
//! `probe a.b = P1, P2 { prologue } [, { epilogue }]` and
//! `probe a.b += P1 { epilogue }` define aliases; a probe on a point that
//! matches an alias's name (component by component, `*` globs in the use,
//! equal literal arguments) becomes a probe on the alias's points with the
//! body `{ prologue; body; epilogue }`. Components after the alias's name
//! are appended to each of its points (`probe a.b.return` through
//! `probe a.b = kernel.function("f")` is `kernel.function("f").return`).
//! `?` / `!` / `if (cond)` of the use carry over to the expansion. Aliases
//! may use other aliases (bounded depth). A wildcard use matching no alias
//! is stap's "no match" unless it is optional.
//!
//! Every copied statement gets fresh expression ids, so that the side
//! tables of later passes (indexed by `ExprId`) see each copy separately.
use crate::ast::*;
use crate::diag::{Diagnostic, Diags};

/// Nesting of aliases using aliases, at most.
const MAX_DEPTH: u32 = 16;
/// Probes one declaration may expand to, at most.
const MAX_DERIVED: usize = 4096;

/// `pat` matches `s` (fnmatch(3), as stap matches probe point components).
fn glob(pat: &str, s: &str) -> bool {
    crate::glob::fnmatch(pat.as_bytes(), s.as_bytes())
}

fn lit_eq(a: &Option<Literal>, b: &Option<Literal>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(Literal::Num(x, _)), Some(Literal::Num(y, _))) => x == y,
        (Some(Literal::Str(x, _)), Some(Literal::Str(y, _))) => x == y,
        _ => false,
    }
}

/// Does `use_` name the alias `name` (a prefix of its components)?
fn matches(name: &ProbePoint, use_: &ProbePoint) -> bool {
    name.components.len() <= use_.components.len()
        && name
            .components
            .iter()
            .zip(&use_.components)
            .all(|(a, u)| glob(&u.name, &a.name) && lit_eq(&a.arg, &u.arg))
}

/// `pat` matches the dotted name `s`, where `**` matches any text, dots
/// included, and `*` / `?` any text / character but a dot (stapprobes:
/// "`**` to match multiple sequential components at once", `sys**open`).
/// Dynamic programming over (pattern, name) positions: no backtracking
/// blow-up on many stars.
fn dotted_glob(pat: &[u8], s: &[u8]) -> bool {
    // ok[j]: pat[i..] matches s[j..], for the current i (from the end).
    let mut ok = vec![false; s.len() + 1];
    ok[s.len()] = true;
    let mut i = pat.len();
    while i > 0 {
        i -= 1;
        let star2 = pat[i] == b'*' && i > 0 && pat[i - 1] == b'*';
        let mut next = vec![false; s.len() + 1];
        for j in (0..=s.len()).rev() {
            next[j] = match pat[i] {
                b'*' if star2 => ok[j] || (j < s.len() && next[j + 1]),
                b'*' => ok[j] || (j < s.len() && s[j] != b'.' && next[j + 1]),
                b'?' => j < s.len() && s[j] != b'.' && ok[j + 1],
                c => j < s.len() && s[j] == c && ok[j + 1],
            };
        }
        if star2 {
            // `**` is one token: its first `*` adds nothing.
            i -= 1;
        }
        ok = next;
    }
    ok[0]
}

/// The uses a point with `**` in a component stands for: one per alias
/// name (without arguments) whose dotted text it matches, with the use's
/// span and modifiers; `None` when it has no `**` or matches no alias
/// (then it is looked up as it is, and a wildcard matching nothing is
/// stap's "no match").
fn double_star_uses(aliases: &[&AliasDecl], u: &ProbePoint) -> Option<Vec<ProbePoint>> {
    if !u.components.iter().any(|c| c.name.contains("**"))
        || u.components.iter().any(|c| c.arg.is_some())
    {
        return None;
    }
    let pat: Vec<&str> = u.components.iter().map(|c| c.name.as_str()).collect();
    let pat = pat.join(".");
    let span = u.span();
    let mut out: Vec<ProbePoint> = Vec::new();
    for n in aliases.iter().flat_map(|a| a.names.iter()) {
        if n.components.iter().any(|c| c.arg.is_some()) {
            continue;
        }
        let name: Vec<&str> = n.components.iter().map(|c| c.name.as_str()).collect();
        if !dotted_glob(pat.as_bytes(), name.join(".").as_bytes()) {
            continue;
        }
        let same = |q: &ProbePoint| {
            q.components.len() == n.components.len()
                && q.components
                    .iter()
                    .zip(&n.components)
                    .all(|(a, b)| a.name == b.name)
        };
        if out.iter().any(same) {
            continue;
        }
        let mut q = u.clone();
        q.components = n
            .components
            .iter()
            .map(|c| Component {
                name: c.name.clone(),
                arg: None,
                span,
            })
            .collect();
        out.push(q);
    }
    (!out.is_empty()).then_some(out)
}

/// `long` is `short` with more components (same names and arguments).
fn extends(long: &ProbePoint, short: &ProbePoint) -> bool {
    long.components.len() > short.components.len()
        && short
            .components
            .iter()
            .zip(&long.components)
            .all(|(a, b)| a.name == b.name && lit_eq(&a.arg, &b.arg))
}

struct Expander<'d> {
    diags: &'d mut Diags,
    next_id: ExprId,
}

impl Expander<'_> {
    fn fresh_expr(&mut self, e: &mut Expr) {
        let mut work: Vec<&mut Expr> = vec![e];
        while let Some(x) = work.pop() {
            x.id = self.next_id;
            self.next_id += 1;
            x.push_children_mut(&mut work);
        }
    }

    /// A copy of `s` with fresh expression ids.
    fn fresh(&mut self, s: &Stmt) -> Stmt {
        let mut s = s.clone();
        let mut work: Vec<&mut Stmt> = vec![&mut s];
        while let Some(x) = work.pop() {
            let (es, ss) = x.children_mut();
            for e in es {
                self.fresh_expr(e);
            }
            work.extend(ss);
        }
        s
    }

    fn fresh_point(&mut self, p: &ProbePoint) -> ProbePoint {
        let mut p = p.clone();
        if let Some(c) = p.cond.as_mut() {
            self.fresh_expr(c);
        }
        p
    }

    /// stap's "probe point mismatch" for a use of an alias family that
    /// names no alias: at the first component no alias name continues
    /// with, suggesting those that do.
    fn alias_mismatch(&mut self, aliases: &[&AliasDecl], u: &ProbePoint) {
        let names: Vec<&ProbePoint> = aliases.iter().flat_map(|a| a.names.iter()).collect();
        let mut pos = 0;
        while pos + 1 < u.components.len()
            && names.iter().any(|n| {
                n.components.len() > pos + 1
                    && n.components[..=pos]
                        .iter()
                        .zip(&u.components)
                        .all(|(a, b)| glob(&b.name, &a.name))
            })
        {
            pos += 1;
        }
        let here: Vec<&str> = names
            .iter()
            .filter(|n| {
                n.components.len() > pos
                    && n.components[..pos]
                        .iter()
                        .zip(&u.components)
                        .all(|(a, b)| glob(&b.name, &a.name))
            })
            .map(|n| n.components[pos].name.as_str())
            .collect();
        let at = &u.components[pos];
        let sugs = crate::suggest::similar(&at.name, here);
        self.diags.push(Diagnostic::semantic(
            format!("probe point mismatch{sugs}"),
            at.span,
        ));
    }

    /// Expands one probe declaration into `out`.
    fn probe(&mut self, aliases: &[&AliasDecl], p: &ProbeDecl, out: &mut Vec<ProbeDecl>) {
        // (points, body, depth): a worklist, each entry's points not yet
        // looked up.
        let mut points = Vec::with_capacity(p.points.len());
        // The points after a `!` are alternatives (they may end up in
        // other declarations than the `!` point once aliases expand).
        let mut after_sufficient = false;
        for u in &p.points {
            let mut u = u.clone();
            u.alternative |= after_sufficient;
            after_sufficient |= u.sufficient;
            match double_star_uses(aliases, &u) {
                Some(uses) => points.extend(uses),
                None => points.push(u),
            }
        }
        let mut work = vec![(points, p.body.clone(), 0u32, true)];
        let mut produced = 0usize;
        while let Some((points, body, depth, original)) = work.pop() {
            let mut plain = Vec::new();
            let mut derived = Vec::new();
            for u in &points {
                // The most specific aliases win: `vfs.read.return` is the
                // alias of that name, not `vfs.read` with a suffix. Per
                // path, as stap's match tree: under `tcp.*.return`, an
                // alias `tcp.x` without a `tcp.x.return` still expands
                // (with the suffix) next to `tcp.y.return`.
                let all_names: Vec<&ProbePoint> = aliases
                    .iter()
                    .flat_map(|a| a.names.iter())
                    .filter(|n| matches(n, u))
                    .collect();
                // A wildcard past an alias's name matches nothing under it
                // (stap's match tree: `nfsd.*.*` does not take the leaf
                // alias `nfsd.return` with a `*` suffix).
                let len = |a: &AliasDecl| {
                    a.names
                        .iter()
                        .filter(|n| matches(n, u))
                        .filter(|n| !all_names.iter().any(|m| extends(m, n)))
                        .filter(|n| {
                            u.components[n.components.len()..]
                                .iter()
                                .all(|c| !c.name.contains('*'))
                        })
                        .map(|n| n.components.len())
                        .max()
                };
                let hits: Vec<&AliasDecl> = aliases
                    .iter()
                    .copied()
                    .filter(|a| len(a).is_some())
                    .collect();
                if hits.is_empty() {
                    let wild = u.components.iter().any(|c| c.name.contains('*'));
                    let alias_head = aliases.iter().any(|a| {
                        a.names.iter().any(|n| {
                            n.components.first().map(|c| &c.name)
                                == u.components.first().map(|c| &c.name)
                        })
                    });
                    let builtin_head = u.components.first().is_some_and(|c| {
                        crate::suggest::probe_functors(&[]).contains(&c.name.as_str())
                    });
                    if wild && alias_head {
                        if !u.optional {
                            self.diags.push(
                                Diagnostic::semantic("while resolving probe point", u.span())
                                    .with_note("no match", None),
                            );
                        }
                    } else if alias_head && !builtin_head {
                        // `vfs.reed`: a family of aliases, none of this name.
                        if !u.optional {
                            self.alias_mismatch(aliases, u);
                        }
                    } else {
                        plain.push(u.clone());
                    }
                    continue;
                }
                if depth >= MAX_DEPTH {
                    self.diags.push(Diagnostic::semantic(
                        "recursive loop in alias expansion",
                        u.span(),
                    ));
                    return;
                }
                let wild_use = u.components.iter().any(|c| c.name.contains('*'));
                for a in hits {
                    let n = len(a).unwrap_or(0);
                    let suffix = &u.components[n.min(u.components.len())..];
                    // The use with the alias's own name for its first n
                    // components (wildcards expanded), for pn().
                    let script = u.script.clone().or_else(|| {
                        let name = a
                            .names
                            .iter()
                            .find(|m| m.components.len() == n && matches(m, u))?;
                        let mut shown = u.clone();
                        shown.components = name.components.clone();
                        shown.components.extend(suffix.iter().cloned());
                        shown.optional = false;
                        shown.sufficient = false;
                        Some(shown.display())
                    });
                    let mut pts = Vec::new();
                    // The alias's own points after one of its `!` points
                    // are alternatives; all of them are when the use is.
                    let mut after_sufficient = u.alternative;
                    for ap in &a.points {
                        let mut q = self.fresh_point(ap);
                        q.alternative |= after_sufficient;
                        after_sufficient |= ap.sufficient;
                        q.components.extend(suffix.iter().cloned());
                        q.tentative = u
                            .tentative
                            .or((!suffix.is_empty() || wild_use).then(|| u.span()));
                        q.script = script.clone();
                        q.optional |= u.optional;
                        q.sufficient |= u.sufficient;
                        if u.condition.is_some() {
                            q.condition = u.condition;
                            q.cond = self.fresh_point(u).cond;
                        }
                        pts.push(q);
                    }
                    let mut stmts = Vec::new();
                    let (pro, epi) = if a.epilogue_style {
                        (None, Some(&a.body))
                    } else {
                        (Some(&a.body), a.epilogue.as_ref())
                    };
                    if let Some(s) = pro {
                        stmts.push(self.fresh(s));
                    }
                    stmts.push(self.fresh(&body));
                    if let Some(s) = epi {
                        stmts.push(self.fresh(s));
                    }
                    let b = Stmt {
                        kind: StmtKind::Block(stmts),
                        span: body.span,
                    };
                    derived.push((pts, b, depth + 1, false));
                }
            }
            if !plain.is_empty() {
                produced += 1;
                let body = if original { body.clone() } else { body };
                out.push(ProbeDecl {
                    span: p.span,
                    points: plain,
                    body,
                });
            }
            produced += derived.len();
            if produced > MAX_DERIVED {
                self.diags.push(Diagnostic::semantic(
                    format!("probe expands to more than {MAX_DERIVED} probes"),
                    p.span,
                ));
                return;
            }
            // Keep source order: the worklist pops from the end.
            work.extend(derived.into_iter().rev());
        }
    }
}

impl Expander<'_> {
    /// stap's probe conditions: `probe P if (cond) { body }` becomes
    /// `probe P { if (!(cond)) next; body }`. Points with a condition get a
    /// probe each (with a fresh copy of the body); the points without one
    /// share the original. The condition may read only globals and must
    /// not modify anything or call functions (stap's errors).
    fn inline_conditions(&mut self, p: ProbeDecl, globals: &[String], out: &mut Vec<Item>) {
        if p.points.iter().all(|q| q.cond.is_none()) {
            out.push(Item::Probe(p));
            return;
        }
        let ProbeDecl { span, points, body } = p;
        let (conditional, plain): (Vec<ProbePoint>, Vec<ProbePoint>) =
            points.into_iter().partition(|q| q.cond.is_some());
        for mut q in conditional {
            let Some(cond) = q.cond.take() else { continue };
            let at = q.condition.take().unwrap_or(cond.span);
            self.check_condition(&cond, globals);
            let not = Expr {
                kind: ExprKind::Unary(UnOp::Not, cond),
                span: at,
                id: self.next_id,
            };
            self.next_id += 1;
            let guard = Stmt {
                kind: StmtKind::If {
                    cond: not,
                    then: Box::new(Stmt {
                        kind: StmtKind::Next,
                        span: at,
                    }),
                    els: None,
                },
                span: at,
            };
            let b = Stmt {
                kind: StmtKind::Block(vec![guard, self.fresh(&body)]),
                span: body.span,
            };
            out.push(Item::Probe(ProbeDecl {
                span,
                points: vec![q],
                body: b,
            }));
        }
        if !plain.is_empty() {
            out.push(Item::Probe(ProbeDecl {
                span,
                points: plain,
                body,
            }));
        }
    }

    /// Reports what stap refuses in a probe condition.
    fn check_condition(&mut self, cond: &Expr, globals: &[String]) {
        let mut copy = cond.clone();
        let mut work: Vec<&mut Expr> = vec![&mut copy];
        while let Some(e) = work.pop() {
            let msg = match &e.kind {
                ExprKind::Assign(..)
                | ExprKind::PreIncr(..)
                | ExprKind::PostIncr(..)
                | ExprKind::Append(..) => Some("probe condition must not modify any variables"),
                ExprKind::Call { .. } | ExprKind::Print { .. } => {
                    Some("probe condition must not reference function")
                }
                ExprKind::Var(v) if !globals.contains(v) => {
                    if let Some(what) = crate::tapset::globals::livepatch_refusal(v) {
                        self.diags.push(Diagnostic::unsupported(&what, e.span));
                        return;
                    }
                    Some("probe condition must not reference undeclared global")
                }
                _ => None,
            };
            if let Some(m) = msg {
                self.diags.push(Diagnostic::semantic(m, e.span));
                return;
            }
            e.push_children_mut(&mut work);
        }
    }
}

/// Expands the aliases of `script`: the result has no `Item::Alias`, and
/// every probe on an alias replaced by probes on its points.
pub fn run(script: Script, diags: &mut Diags) -> Script {
    // Taken by value: the items that are not probes move through uncopied.
    let Script { items: all, nexprs } = script;
    let (alias_items, rest): (Vec<Item>, Vec<Item>) =
        all.into_iter().partition(|it| matches!(it, Item::Alias(_)));
    let aliases: Vec<&AliasDecl> = alias_items
        .iter()
        .filter_map(|it| match it {
            Item::Alias(a) => Some(&**a),
            _ => None,
        })
        .collect();
    let mut x = Expander {
        diags,
        next_id: nexprs,
    };
    for a in &aliases {
        for n in &a.names {
            if let Some(c) = n.components.iter().find(|c| c.name.contains('*')) {
                x.diags.push(Diagnostic::semantic(
                    "wildcard not allowed in probe alias name",
                    c.span,
                ));
            }
        }
    }
    let globals: Vec<String> = rest
        .iter()
        .filter_map(|it| match it {
            Item::Global(g) => Some(g.name.clone()),
            _ => None,
        })
        .collect();
    let mut items = Vec::with_capacity(rest.len());
    for it in rest {
        match it {
            Item::Probe(p) => {
                let mut out = Vec::new();
                if aliases.is_empty() {
                    out.push(p);
                } else {
                    x.probe(&aliases, &p, &mut out);
                }
                for d in out {
                    x.inline_conditions(d, &globals, &mut items);
                }
            }
            other => items.push(other),
        }
    }
    Script {
        items,
        nexprs: x.next_id,
    }
}

#[cfg(test)]
mod tests {
    use super::{dotted_glob, glob};

    #[test]
    fn globs() {
        assert!(glob("*", "abc"));
        assert!(glob("a*", "abc"));
        assert!(glob("*c", "abc"));
        assert!(glob("a*b*c", "aXbYc"));
        assert!(!glob("a*d", "abc"));
        assert!(glob("abc", "abc"));
        assert!(!glob("ab", "abc"));
        assert!(glob("**", ""));
        // `**` spans dots, `*` and `?` do not.
        assert!(dotted_glob(b"netfilter.**", b"netfilter.ipv4.local_in"));
        assert!(dotted_glob(b"sys**open", b"syscall.open"));
        assert!(dotted_glob(b"sys**open", b"syscall.x.open"));
        assert!(!dotted_glob(b"sys*open", b"syscall.open"));
        assert!(!dotted_glob(b"netfilter.*", b"netfilter.ipv4.local_in"));
        assert!(dotted_glob(b"netfilter.*", b"netfilter.hook"));
        assert!(!dotted_glob(b"n?tfilter.**", b"net.filter.x"));
        assert!(dotted_glob(b"**", b"a.b.c"));
        assert!(!dotted_glob(b"a.**.d", b"a.d"));
        assert!(dotted_glob(b"a.**d", b"a.d"));
    }
}
