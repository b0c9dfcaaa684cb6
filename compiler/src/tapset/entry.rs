//! `@entry(e)` and `$param` in `.return` probes (docs/design.md §8.1).
//!
//! stap evaluates `@entry(e)` (and a bare `$param`, which it rewrites to
//! `@entry($param)`) at function entry and reads the saved value at
//! return. Here, for a `.return` probe with `K` such expressions:
//! - a generated entry probe on the same points minus `.return` stores
//!   each one in a global wrap-around array keyed by thread:
//!   `__entry_N_k[tid()] = e_k` (`%`: bounded by MAXMAPENTRIES, the
//!   oldest entry goes when it is full);
//! - the return body starts with `__entry_k = __entry_N_k[tid()]; delete
//!   __entry_N_k[tid()]` for each `k` and reads the local instead.
//!
//! `@defined($param)` and `@defined(@entry(x))` in such a probe are
//! hoisted whole (`@defined(x)` at entry), as whether the parameter exists
//! is a question about the function's entry.
//!
//! A return with no saved entry (the probe was armed while the call was
//! running, or the entry was pushed out of a full array) reads stap's
//! default value: 0 or "". Keyed by thread, a function that recurses
//! (calls itself before returning) sees its innermost entry's values;
//! system calls never nest, so syscall probes are exact.
use super::Gen;
use crate::ast::*;
use crate::diag::Diags;

/// The entry point of a `.return` point, or `None` if `pp` is not one.
fn entry_point(pp: &ProbePoint) -> Option<ProbePoint> {
    let c = &pp.components;
    let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
    let ri = names.iter().position(|n| *n == "return")?;
    let func = names.contains(&"function") && ri > names.iter().position(|n| *n == "function")?;
    let sys = matches!(names.first(), Some(&"syscall" | &"nd_syscall")) && ri == 2;
    if !(func || sys) || c[ri].arg.is_some() {
        return None;
    }
    // `.return.maxactive(N)`: what follows `.return` is about the return.
    let mut q = pp.clone();
    q.components.truncate(ri);
    Some(q)
}

/// Is `e` a `$param` (or `$param->a...`) other than `$return`?
fn is_param(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Target(n) => n != "$return" && !n.starts_with("$$"),
        ExprKind::Deref { base, .. } => is_param(base),
        _ => false,
    }
}

/// `@defined($param)` or `@defined(@entry(x))` (`&` allowed inside):
/// whether the parameter exists is a question about the function's entry,
/// so the whole `@defined(x)` (without the `@entry`) is evaluated there.
fn defined_at_entry(e: &Expr) -> Option<Expr> {
    let ExprKind::AtOp { op, args } = &e.kind else {
        return None;
    };
    let [a] = args.as_slice() else { return None };
    if op != "@defined" {
        return None;
    }
    let x = match &a.kind {
        ExprKind::AtOp { op, args } if op == "@entry" && args.len() == 1 => args[0].clone(),
        ExprKind::AddrOf(inner) if is_param(inner) => a.clone(),
        _ if is_param(a) => a.clone(),
        _ => return None,
    };
    let mut d = e.clone();
    d.kind = ExprKind::AtOp {
        op: op.clone(),
        args: vec![x],
    };
    Some(d)
}

/// Rewrites the `.return` probes of `s` that use `@entry` or `$param`.
pub(crate) fn rewrite(s: &mut Script, g: &mut Gen, _diags: &mut Diags) {
    let items = std::mem::take(&mut s.items);
    let mut out = Vec::with_capacity(items.len());
    let mut globals = Vec::new();
    let mut n = 0usize;
    for it in items {
        let Item::Probe(mut p) = it else {
            out.push(it);
            continue;
        };
        let entries: Vec<Option<ProbePoint>> = p.points.iter().map(entry_point).collect();
        if entries.is_empty() || entries.iter().any(Option::is_none) {
            out.push(Item::Probe(p));
            continue;
        }
        // Hoist the entry expressions, parents first (an @entry inside an
        // @entry is evaluated at entry with its parent).
        let mut hoisted: Vec<Expr> = Vec::new();
        let mut work: Vec<&mut Stmt> = vec![&mut p.body];
        while let Some(x) = work.pop() {
            let (es, ss) = x.children_mut();
            for e in es {
                let mut w: Vec<&mut Expr> = vec![e];
                while let Some(y) = w.pop() {
                    let inner = if is_param(y) {
                        Some(y.clone())
                    } else if let Some(d) = defined_at_entry(y) {
                        Some(d)
                    } else {
                        match &mut y.kind {
                            ExprKind::AtOp { op, args } if op == "@entry" && args.len() == 1 => {
                                args.pop()
                            }
                            _ => None,
                        }
                    };
                    if let Some(inner) = inner {
                        y.kind = ExprKind::Var(format!("__entry_{}", hoisted.len()));
                        hoisted.push(inner);
                        continue;
                    }
                    y.push_children_mut(&mut w);
                }
            }
            work.extend(ss);
        }
        if hoisted.is_empty() {
            out.push(Item::Probe(p));
            continue;
        }
        // The `@defined` each hoisted value runs under in the return
        // body, kept at entry: a fallback for an older kernel's parameter
        // is only read where the newer one is missing.
        let is_defined: Vec<bool> = hoisted
            .iter()
            .map(|e| matches!(&e.kind, ExprKind::AtOp { op, .. } if op == "@defined"))
            .collect();
        let mut guards: Vec<Option<Vec<(usize, bool)>>> = vec![None; hoisted.len()];
        guards_in_stmt(&mut p.body, &is_defined, &mut Vec::new(), &mut guards);
        let span = p.points.first().map_or(p.span, |pp| pp.span());
        let mut entry_body = Vec::new();
        let mut pro = Vec::new();
        let defined_exprs = hoisted.clone();
        for (k, mut e) in hoisted.into_iter().enumerate() {
            let arr = format!("__entry_{n}_{k}");
            globals.extend(g.items(&format!("global {arr}%"), span));
            let guard = guards[k].clone().unwrap_or_default();
            // `if (@defined(x)) ; else` for each guard, around the store.
            let mut text = String::new();
            for (_, holds) in &guard {
                text.push_str(if *holds { "if (0) " } else { "if (0) ; else " });
            }
            text.push_str(&format!("{arr}[tid()] = 0"));
            let mut st = g.stmts(&text, span);
            let mut cur = st.first_mut();
            for (i, _) in &guard {
                let Some(Stmt {
                    kind: StmtKind::If { cond, then, els },
                    ..
                }) = cur
                else {
                    break;
                };
                let mut d = defined_exprs[*i].clone();
                let at = d.span;
                g.relabel_expr(&mut d, at);
                *cond = d;
                cur = match els {
                    Some(e) => Some(&mut **e),
                    None => Some(&mut **then),
                };
            }
            let store = match cur {
                Some(s) => s,
                None => continue,
            };
            let at = e.span;
            g.relabel_expr(&mut e, at);
            if let Stmt {
                kind:
                    StmtKind::Expr(Expr {
                        kind: ExprKind::Assign(_, _, rhs),
                        ..
                    }),
                ..
            } = store
            {
                **rhs = e;
            }
            entry_body.extend(st);
            pro.extend(g.stmts(
                &format!("__entry_{k} = {arr}[tid()]\ndelete {arr}[tid()]"),
                span,
            ));
        }
        n += 1;
        out.push(Item::Probe(ProbeDecl {
            span: p.span,
            points: entries.into_iter().flatten().collect(),
            body: Stmt {
                kind: StmtKind::Block(entry_body),
                span: p.body.span,
            },
        }));
        pro.push(p.body.clone());
        p.body = Stmt {
            kind: StmtKind::Block(pro),
            span: p.body.span,
        };
        out.push(Item::Probe(p));
    }
    // Globals first, as declarations usually are.
    globals.extend(out);
    s.items = globals;
}

/// `__entry_i` or `!__entry_i` where hoisted value `i` is a `@defined`:
/// (i, the answer under which the condition holds).
fn hoisted_cond(e: &Expr, is_defined: &[bool]) -> Option<(usize, bool)> {
    match &e.kind {
        ExprKind::Unary(UnOp::Not, x) => hoisted_cond(x, is_defined).map(|(i, p)| (i, !p)),
        ExprKind::Var(v) => {
            let i: usize = v.strip_prefix("__entry_")?.parse().ok()?;
            is_defined
                .get(i)
                .copied()
                .unwrap_or(false)
                .then_some((i, true))
        }
        _ => None,
    }
}

/// Records in `out[k]` the hoisted `@defined` answers (`cur`) under which
/// each `__entry_k` of `e` is read; one read outside them all makes it
/// unconditional (an empty guard).
fn guards_in_expr(
    e: &mut Expr,
    is_defined: &[bool],
    cur: &mut Vec<(usize, bool)>,
    out: &mut [Option<Vec<(usize, bool)>>],
) {
    let branches = match &mut e.kind {
        ExprKind::Ternary(c, a, b) => Some((&mut **c, &mut **a, Some(&mut **b), true)),
        ExprKind::And(a, b) => Some((&mut **a, &mut **b, None, true)),
        ExprKind::Or(a, b) => Some((&mut **a, &mut **b, None, false)),
        _ => None,
    };
    if let Some((c, a, b, pol)) = branches {
        guards_in_expr(c, is_defined, cur, out);
        let hc = hoisted_cond(c, is_defined);
        let mut walk = |x: &mut Expr, holds: bool, cur: &mut Vec<(usize, bool)>| {
            if let Some((i, p)) = hc {
                cur.push((i, p == holds));
                guards_in_expr(x, is_defined, cur, out);
                cur.pop();
            } else {
                guards_in_expr(x, is_defined, cur, out);
            }
        };
        walk(a, pol, cur);
        if let Some(b) = b {
            walk(b, false, cur);
        }
        return;
    }
    if let ExprKind::Var(v) = &e.kind {
        if let Some(k) = v
            .strip_prefix("__entry_")
            .and_then(|d| d.parse::<usize>().ok())
        {
            if let Some(slot) = out.get_mut(k) {
                *slot = Some(match slot.take() {
                    None => cur.clone(),
                    Some(g) if g == *cur => g,
                    Some(_) => Vec::new(),
                });
            }
            return;
        }
    }
    for c in e.children_mut() {
        guards_in_expr(c, is_defined, cur, out);
    }
}

/// `guards_in_expr` over a statement, with `if` conditions as branches.
fn guards_in_stmt(
    s: &mut Stmt,
    is_defined: &[bool],
    cur: &mut Vec<(usize, bool)>,
    out: &mut [Option<Vec<(usize, bool)>>],
) {
    if let StmtKind::If { cond, then, els } = &mut s.kind {
        guards_in_expr(cond, is_defined, cur, out);
        let hc = hoisted_cond(cond, is_defined);
        for (branch, holds) in [(Some(&mut **then), true), (els.as_deref_mut(), false)] {
            let Some(b) = branch else { continue };
            if let Some((i, p)) = hc {
                cur.push((i, p == holds));
            }
            guards_in_stmt(b, is_defined, cur, out);
            if hc.is_some() {
                cur.pop();
            }
        }
        return;
    }
    let (es, ss) = s.children_mut();
    for e in es {
        guards_in_expr(e, is_defined, cur, out);
    }
    for c in ss {
        guards_in_stmt(c, is_defined, cur, out);
    }
}
