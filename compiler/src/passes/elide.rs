//! stap's probe elision, as far as it decides whether a script does
//! anything: its optimizer drops statements without side effects and
//! `if`s with constant conditions (`@defined($x)` in a probe without
//! target variables is a constant 0), and a script left with no probe
//! that does something is `semantic error: no probes found`
//! (semko/probe_elision.stp).
//!
//! Narrower than stap on purpose: a probe written empty (`probe
//! kernel.function("f") {}`, the usual way to check that a point
//! resolves) is kept, and the error needs at least one probe whose
//! statements all reduced to nothing. The probes themselves are kept: an
//! empty handler costs one instruction.
use super::resolve::Resolved;
use crate::ast::*;
use crate::diag::{Diagnostic, Diags};

/// Reports `no probes found` when every probe of `script` is empty.
pub fn check(script: &Script, res: &Resolved, diags: &mut Diags) {
    let mut first = None;
    let mut reduced = false;
    for it in &script.items {
        if let Item::Probe(p) = it {
            first.get_or_insert(p.span);
            if !empty(&p.body, res) {
                return;
            }
            reduced |= !blocks_only(&p.body);
        }
    }
    if let (Some(span), true) = (first, reduced) {
        diags.push(Diagnostic {
            span: None,
            ..Diagnostic::semantic("no probes found", span)
        });
    }
}

/// Nothing but (nested) blocks and `;`: written empty, or empty bodies of
/// aliases expanded around an empty body.
fn blocks_only(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Block(b) => b.iter().all(blocks_only),
        StmtKind::Null => true,
        _ => false,
    }
}

/// The statement does nothing (stap would reduce it to nothing).
fn empty(s: &Stmt, res: &Resolved) -> bool {
    match &s.kind {
        StmtKind::Null => true,
        StmtKind::Block(b) => b.iter().all(|x| empty(x, res)),
        StmtKind::Expr(e) => matches!(e.kind, ExprKind::Num(_) | ExprKind::Str(_)),
        StmtKind::If { cond, then, els } => match constant(cond, res) {
            Some(true) => empty(then, res),
            Some(false) => els.as_ref().is_none_or(|e| empty(e, res)),
            None => false,
        },
        _ => false,
    }
}

/// The value of a condition known at compile time: a literal, or an
/// `@defined` resolve decided.
fn constant(e: &Expr, res: &Resolved) -> Option<bool> {
    match &e.kind {
        ExprKind::Num(n) => Some(*n != 0),
        ExprKind::AtOp { op, .. } if op == "@defined" => res.defined_consts.get(&e.id).copied(),
        ExprKind::Unary(UnOp::Not, a) => constant(a, res).map(|v| !v),
        _ => None,
    }
}
