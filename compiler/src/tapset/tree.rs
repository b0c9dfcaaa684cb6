//! Binary-search trees of `if` statements, built as AST: the dispatch on a
//! number in the generated tapset functions (`__sc_name`, `__sc_argstr`,
//! `errno_str`). They used to be generated as stap text and parsed; at a
//! few hundred leaves that text was most of the compile time of a script
//! that uses them. The tree built here is the one the parser makes of
//! `if (v < K) { LO } else { HI }` with leaves `if (v == K) { LEAF }`, so the
//! compiled code is the same; spans and expression ids are left to `Gen`,
//! which relabels the whole function afterwards.
use crate::ast::*;

/// An expression of `kind` (span and id are set by the relabelling).
fn expr(kind: ExprKind) -> Expr {
    Expr {
        kind,
        span: Span::default(),
        id: 0,
    }
}

/// A statement of `kind`.
fn stmt(kind: StmtKind) -> Stmt {
    Stmt {
        kind,
        span: Span::default(),
    }
}

/// `v OP k`.
fn cmp(op: CmpOp, var: &str, k: i64) -> Expr {
    expr(ExprKind::Cmp(
        op,
        Box::new(expr(ExprKind::Var(var.to_string()))),
        Box::new(expr(ExprKind::Num(k))),
    ))
}

/// `return "text"`.
pub(crate) fn return_str(text: &str) -> Stmt {
    stmt(StmtKind::Return(Some(expr(ExprKind::Str(
        text.as_bytes().to_vec(),
    )))))
}

/// `var = k` (an expression statement).
pub(crate) fn set_num(var: &str, k: i64) -> Stmt {
    stmt(StmtKind::Expr(expr(ExprKind::Assign(
        AssignOp::Set,
        Box::new(expr(ExprKind::Var(var.to_string()))),
        Box::new(expr(ExprKind::Num(k))),
    ))))
}

/// `{ s }`.
fn block(s: Stmt) -> Stmt {
    stmt(StmtKind::Block(vec![s]))
}

/// The binary search on `var` over `keys[lo..hi]` (sorted, `hi > lo`):
/// `if (var < keys[mid]) { lo half } else { hi half }`, and at a single
/// key `i`: `if (var == keys[i]) { leaf(i) }` (without the braces when
/// `braced_leaf` is false). Falls through when no key matches.
pub(crate) fn search(
    var: &str,
    keys: &[i64],
    lo: usize,
    hi: usize,
    braced_leaf: bool,
    leaf: &mut dyn FnMut(usize) -> Stmt,
) -> Stmt {
    if hi - lo == 1 {
        let body = leaf(lo);
        return stmt(StmtKind::If {
            cond: cmp(CmpOp::Eq, var, keys[lo]),
            then: Box::new(if braced_leaf { block(body) } else { body }),
            els: None,
        });
    }
    let mid = (lo + hi) / 2;
    let below = search(var, keys, lo, mid, braced_leaf, leaf);
    let above = search(var, keys, mid, hi, braced_leaf, leaf);
    stmt(StmtKind::If {
        cond: cmp(CmpOp::Lt, var, keys[mid]),
        then: Box::new(block(below)),
        els: Some(Box::new(block(above))),
    })
}

/// The statements of the body of the first declaration of `items` when it
/// is a function with a block body (where the generated functions keep
/// their `{ }` placeholders).
pub(crate) fn function_body(items: &mut [Item]) -> Option<&mut Vec<Stmt>> {
    let Some(Item::Function(f)) = items.first_mut() else {
        return None;
    };
    match &mut f.body.as_mut()?.kind {
        StmtKind::Block(b) => Some(b),
        _ => None,
    }
}

/// The statements of the block `s` (empty for another statement), taken
/// out of it.
pub(crate) fn take_block(s: &mut Stmt) -> Vec<Stmt> {
    match &mut s.kind {
        StmtKind::Block(b) => std::mem::take(b),
        _ => Vec::new(),
    }
}
