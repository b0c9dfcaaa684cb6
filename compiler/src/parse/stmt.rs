//! Statements (stap's `parse_statement`): blocks, `if`, `while`, `for`,
//! `foreach` (tuples, value, slice, sorting, `limit`), `try`/`catch`,
//! `return`, `delete`, `break`, `continue`, `next` and expression
//! statements.
use super::expr::{indexable, key_list, STAT_EXTRACTORS};
use super::*;

fn stmt(kind: StmtKind, span: Span) -> Stmt {
    Stmt { kind, span }
}

/// `{ statement* }`
pub(super) fn block(i: In) -> PResult<Stmt> {
    let (mut i, span) = op("{")(i)?;
    let mut body = Vec::new();
    loop {
        if peek_op(i, "}") {
            return Ok((&i[1..], stmt(StmtKind::Block(body), span)));
        }
        let (r, s) = statement(i)?;
        body.push(s);
        i = r;
    }
}

/// `( expr )` after `if` / `while`.
fn paren_cond(i: In) -> PResult<Expr> {
    let (i, _) = op("(")(i)?;
    let (i, c) = expr(i)?;
    let (i, _) = op(")")(i)?;
    Ok((i, c))
}

/// A `for` header's optional expression, then `close` (`;` or `)`).
fn opt_expr_then<'a>(i: In<'a>, close: &'static str) -> PResult<'a, Option<Expr>> {
    if peek_op(i, close) {
        return Ok((&i[1..], None));
    }
    let (r, e) = expr(i)?;
    let (r, _) = op(close)(r)?;
    Ok((r, Some(e)))
}

/// A `+`/`-` sort marker: `Some(ascending)`.
fn sort_marker(i: In) -> (In, Option<bool>) {
    match i.first() {
        Some(t) if t.is_op("+") => (&i[1..], Some(true)),
        Some(t) if t.is_op("-") => (&i[1..], Some(false)),
        _ => (i, None),
    }
}

/// stap's `parse_foreach_loop`, after the keyword.
fn foreach(i: In, span: Span) -> PResult<Stmt> {
    let (mut i, _) = op("(")(i)?;
    let mut sort: Option<(SortBy, bool)> = None;
    let mut set_sort = |i: In, by: SortBy, asc: Option<bool>| -> Result<(), nom::Err<PErr>> {
        if let Some(asc) = asc {
            if sort.is_some() {
                return Err(fail_at(i, "multiple sort directives"));
            }
            sort = Some((by, asc));
        }
        Ok(())
    };
    let mut value = None;
    let mut keys = Vec::new();
    // `v [+-] =` or a single key.
    if let Some(t) = i.first().filter(|t| t.kind == TokKind::Ident) {
        let (r, asc) = sort_marker(&i[1..]);
        if peek_op(r, "=") {
            set_sort(&i[1..], SortBy::Value, asc)?;
            value = Some((t.text.owned(), t.span));
            i = &r[1..];
        }
    }
    match i.first() {
        Some(t) if t.is_op("[") => {
            let mut r = &i[1..];
            loop {
                let (r2, k) = ident(r)?;
                let (r3, asc) = sort_marker(r2);
                set_sort(r2, SortBy::Key(keys.len()), asc)?;
                keys.push(k);
                r = r3;
                match r.first() {
                    Some(t) if t.is_op(",") => r = &r[1..],
                    Some(t) if t.is_op("]") => {
                        r = &r[1..];
                        break;
                    }
                    _ => return Err(fail_next(r, "expected ',' or ']'")),
                }
            }
            i = r;
        }
        _ => {
            let (r, k) = ident(i)?;
            let (r2, asc) = sort_marker(r);
            set_sort(r, SortBy::Key(0), asc)?;
            keys.push(k);
            i = r2;
        }
    }
    let (r, _) = kw("in")(i)?;
    let (mut r, array) = indexable(r)?;
    let mut slice = None;
    if peek_op(r, "[") {
        let (r2, keys) = key_list(&r[1..], true)?;
        slice = Some(keys);
        r = r2;
    }
    let mut stat = None;
    if let Some(t) = r
        .first()
        .filter(|t| STAT_EXTRACTORS.contains(&t.text.as_str()))
    {
        stat = Some((t.text.owned(), t.span));
        r = &r[1..];
        if !(peek_op(r, "+") || peek_op(r, "-")) {
            return Err(fail_next(r, "expected sort directive"));
        }
    }
    let (r2, asc) = sort_marker(r);
    set_sort(r, SortBy::Value, asc)?;
    let mut r = r2;
    let mut limit = None;
    if peek_kw(r, "limit") {
        let (r2, e) = expr(&r[1..])?;
        limit = Some(e);
        r = r2;
    }
    let (r, _) = op(")")(r)?;
    let (r, body) = statement(r)?;
    let f = Foreach {
        value,
        keys,
        array,
        slice,
        stat,
        sort,
        limit,
        body: Box::new(body),
    };
    Ok((r, stmt(StmtKind::Foreach(Box::new(f)), span)))
}

/// A statement (stap's `parse_statement`), with a trailing `;` eaten after
/// non-block statements.
pub fn statement(i: In) -> PResult<Stmt> {
    let _g = DepthGuard::enter(i)?;
    let Some(t) = i.first() else {
        return Err(fail_at(i, "expected statement"));
    };
    let span = t.span;
    let rest = &i[1..];
    let (i, s) = match (&t.kind, t.text.as_bytes()) {
        (TokKind::Op, b";") => return Ok((rest, stmt(StmtKind::Null, span))),
        (TokKind::Op, b"{") => return block(i),
        (TokKind::Keyword, b"try") => {
            let (r, body) = block(rest)?;
            let (mut r, _) = kw("catch")(r)?;
            let mut var = None;
            if peek_op(r, "(") {
                let (r2, v) = ident(&r[1..])?;
                let (r2, _) = op(")")(r2)?;
                var = Some(v);
                r = r2;
            }
            let (r, handler) = block(r)?;
            let kind = StmtKind::Try {
                body: Box::new(body),
                var,
                handler: Box::new(handler),
            };
            return Ok((r, stmt(kind, span)));
        }
        (TokKind::Keyword, b"if") => {
            let (r, cond) = paren_cond(rest)?;
            let (r, then) = statement(r)?;
            let (r, els) = if peek_kw(r, "else") {
                let (r, e) = statement(&r[1..])?;
                (r, Some(Box::new(e)))
            } else {
                (r, None)
            };
            let kind = StmtKind::If {
                cond,
                then: Box::new(then),
                els,
            };
            return Ok((r, stmt(kind, span)));
        }
        (TokKind::Keyword, b"while") => {
            let (r, cond) = paren_cond(rest)?;
            let (r, body) = statement(r)?;
            let kind = StmtKind::Loop(Box::new(LoopStmt {
                init: None,
                cond,
                incr: None,
                body,
            }));
            return Ok((r, stmt(kind, span)));
        }
        (TokKind::Keyword, b"for") => {
            let (r, _) = op("(")(rest)?;
            let (r, init) = opt_expr_then(r, ";")?;
            let (r, cond) = match r.first() {
                Some(t) if t.is_op(";") => (&r[1..], mk(ExprKind::Num(1), t.span)),
                _ => {
                    let (r, e) = expr(r)?;
                    let (r, _) = op(";")(r)?;
                    (r, e)
                }
            };
            let (r, incr) = opt_expr_then(r, ")")?;
            let (r, body) = statement(r)?;
            let kind = StmtKind::Loop(Box::new(LoopStmt {
                init,
                cond,
                incr,
                body,
            }));
            return Ok((r, stmt(kind, span)));
        }
        (TokKind::Keyword, b"foreach") => return foreach(rest, span),
        (TokKind::Keyword, b"return") => {
            if !IN_FUNCTION.with(|f| f.get()) {
                return Err(fail_at(i, "found 'return' not in function context"));
            }
            let (r, e) = match rest.first() {
                None => {
                    return Err(fail_at(
                        rest,
                        "expected ';', '}' or an expression statement",
                    ))
                }
                Some(t) if t.is_op(";") || t.is_op("}") => (rest, None),
                _ => {
                    let (r, e) = expr(rest)?;
                    (r, Some(e))
                }
            };
            (r, stmt(StmtKind::Return(e), span))
        }
        (TokKind::Keyword, b"delete") => {
            let (r, e) = expr(rest)?;
            (r, stmt(StmtKind::Delete(e), span))
        }
        (TokKind::Keyword, b"break") => (rest, stmt(StmtKind::Break, span)),
        (TokKind::Keyword, b"continue") => (rest, stmt(StmtKind::Continue, span)),
        (TokKind::Keyword, b"next") => (rest, stmt(StmtKind::Next, span)),
        (TokKind::Op | TokKind::Ident | TokKind::Number | TokKind::Str | TokKind::Embedded, _) => {
            let (r, e) = expr(i)?;
            (r, stmt(StmtKind::Expr(e), span))
        }
        _ => return Err(fail_at(i, "expected statement")),
    };
    let i = if peek_op(i, ";") { &i[1..] } else { i };
    Ok((i, s))
}
