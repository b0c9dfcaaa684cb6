//! Expressions (stap's `parse_expression` and below): assignments, `?:`,
//! the binary operators by precedence climbing, `in`, the prefix and
//! `++`/`--` forms, target values (`$v->f[i]$$`, `@cast`, `@var`,
//! autocast), literals, calls, the print family, the statistics and
//! histogram operators and the other `@` operators.
use super::*;

/// An expression (stap's `parse_expression`).
pub fn expr(i: In) -> PResult<Expr> {
    let _g = DepthGuard::enter(i)?;
    // A lone operand (`f(x, 1)`): what the levels below would make of
    // it, without going through them. They would enter one more level
    // (`array_in`), so only while that is allowed.
    if let Some(n) = leaf_len(i) {
        let ends = match i.get(n) {
            None => true,
            Some(t) if t.kind == TokKind::Op => {
                matches!(t.text.as_bytes(), b"," | b")" | b";" | b"]" | b"}" | b":")
            }
            Some(t) => t.kind == TokKind::Keyword && !t.is_kw("in"),
        };
        if ends && DEPTH.with(|d| d.get()) < MAX_DEPTH {
            return leaf(i);
        }
    }
    assignment(i)
}

/// The number of tokens of a plain operand at `i` that nothing after it
/// extends (no call, index, `->`, `$` or `++`/`--` suffix): a name that is
/// not a print function, a `$target`, a number or glued strings.
#[inline(always)]
fn leaf_len(i: In) -> Option<usize> {
    let t = i.first()?;
    let n = match t.kind {
        TokKind::Ident | TokKind::Number => 1,
        TokKind::Str => 1 + i[1..].iter().take_while(|t| t.kind == TokKind::Str).count(),
        _ => return None,
    };
    let extended = match i.get(n) {
        Some(u) if u.kind == TokKind::Op => {
            matches!(u.text.as_bytes(), b"(" | b"[" | b"->" | b"++" | b"--")
        }
        Some(u) => is_pretty(u),
        None => false,
    };
    // A print function not called is an error `symbol` reports.
    let print = t.kind == TokKind::Ident && is_print_family(t.text.as_bytes());
    (!extended && !print).then_some(n)
}

/// The operand `leaf_len` found, as `dwarf_value` makes it.
fn leaf(i: In) -> PResult<Expr> {
    let Some(t) = i.first() else {
        return Err(fail_at(i, "expected value"));
    };
    match t.kind {
        TokKind::Ident => {
            let name = t.text.owned();
            let kind = if name.starts_with('$') {
                ExprKind::Target(name)
            } else {
                ExprKind::Var(name)
            };
            Ok((&i[1..], mk(kind, t.span)))
        }
        TokKind::Str => {
            let (i, (s, span)) = string_lit(i)?;
            Ok((i, mk(ExprKind::Str(s), span)))
        }
        _ => {
            let (i, (v, span)) = number_tok(i, false)?;
            Ok((i, mk(ExprKind::Num(v), span)))
        }
    }
}

fn assign_op(t: &Token) -> Option<Option<AssignOp>> {
    if t.kind != TokKind::Op {
        return None;
    }
    Some(Some(match t.text.as_bytes() {
        b"=" => AssignOp::Set,
        b"+=" => AssignOp::Bin(BinOp::Add),
        b"-=" => AssignOp::Bin(BinOp::Sub),
        b"*=" => AssignOp::Bin(BinOp::Mul),
        b"/=" => AssignOp::Bin(BinOp::Div),
        b"%=" => AssignOp::Bin(BinOp::Mod),
        b"<<=" => AssignOp::Bin(BinOp::Shl),
        b">>=" => AssignOp::Bin(BinOp::Shr),
        b"&=" => AssignOp::Bin(BinOp::And),
        b"|=" => AssignOp::Bin(BinOp::Or),
        b"^=" => AssignOp::Bin(BinOp::Xor),
        b".=" => AssignOp::Concat,
        b"<<<" => return Some(None),
        _ => return None,
    }))
}

/// Assignments (right-associative), `<<<` among them.
fn assignment(i: In) -> PResult<Expr> {
    // `ternary`, its common case (no `?`) without the extra call.
    let (i, c) = binary(i, 1)?;
    let (i, lhs) = if peek_op(i, "?") {
        ternary_rest(i, c)?
    } else {
        (i, c)
    };
    let Some(t) = i.first() else {
        return Ok((i, lhs));
    };
    match assign_op(t) {
        None => Ok((i, lhs)),
        Some(aop) => {
            let span = t.span;
            let (i, rhs) = expr(&i[1..])?;
            let (l, r) = (Box::new(lhs), Box::new(rhs));
            let kind = match aop {
                Some(aop) => ExprKind::Assign(aop, l, r),
                None => ExprKind::Append(l, r),
            };
            Ok((i, mk(kind, span)))
        }
    }
}

/// `c ? a : b`; the false arm is a ternary (stap >= 4.0).
fn ternary(i: In) -> PResult<Expr> {
    let (i, c) = binary(i, 1)?;
    ternary_rest(i, c)
}

/// `ternary` after its condition `c`.
fn ternary_rest(i: In, c: Expr) -> PResult<Expr> {
    match i.first() {
        Some(t) if t.is_op("?") => {
            let span = t.span;
            let (i, a) = expr(&i[1..])?;
            let (i, _) = op(":")(i)?;
            let _g = DepthGuard::enter(i)?;
            let (i, b) = ternary(i)?;
            Ok((
                i,
                mk(
                    ExprKind::Ternary(Box::new(c), Box::new(a), Box::new(b)),
                    span,
                ),
            ))
        }
        _ => Ok((i, c)),
    }
}

/// Binary operator levels, loosest first (systemtap.md §1.4): 1 `||`,
/// 2 `&&`, 3 `|`, 4 `^`, 5 `&`, (6 `in`, see `array_in`), 7 comparisons
/// and regex matches, 8 shifts, 9 `.`, 10 `+ -`, 11 `* / %`.
#[inline(always)]
fn binary_level(t: &Token) -> Option<u8> {
    if t.kind != TokKind::Op {
        return None;
    }
    Some(match t.text.as_bytes() {
        b"||" => 1,
        b"&&" => 2,
        b"|" => 3,
        b"^" => 4,
        b"&" => 5,
        b"<" | b">" | b"<=" | b">=" | b"==" | b"!=" | b"=~" | b"!~" => 7,
        b"<<" | b">>" | b">>>" => 8,
        b"." => 9,
        b"+" | b"-" => 10,
        b"*" | b"/" | b"%" => 11,
        _ => return None,
    })
}

/// Operators at levels >= `min`, left-associative (precedence climbing);
/// levels up to 6 start from `array_in`.
fn binary(i: In, min: u8) -> PResult<Expr> {
    if min <= 6 {
        let (i, lhs) = array_in(i)?;
        climb(i, lhs, min, 5)
    } else {
        let (i, lhs) = unary(i)?;
        climb(i, lhs, min, u8::MAX)
    }
}

/// Whether `i` starts with an operator of a level in `min..=max`.
#[inline(always)]
fn operator_at(i: In, min: u8, max: u8) -> bool {
    i.first()
        .and_then(binary_level)
        .is_some_and(|l| l >= min && l <= max)
}

/// The operator loop of `binary` after the first operand `lhs`, for the
/// levels `min..=max`.
#[inline(always)]
fn climb(i: In, lhs: Expr, min: u8, max: u8) -> PResult<Expr> {
    if !operator_at(i, min, max) {
        return Ok((i, lhs));
    }
    climb_loop(i, lhs, min, max)
}

/// `climb` when an operator follows.
fn climb_loop(mut i: In, mut lhs: Expr, min: u8, mut max: u8) -> PResult<Expr> {
    // After a regex match (whose right side is a literal) only further
    // comparisons may follow, as in stap's comparison loop.
    while let Some(t) = i.first() {
        let Some(level) = binary_level(t).filter(|l| *l >= min && *l <= max) else {
            break;
        };
        let span = t.span;
        let text = t.text.as_bytes();
        let rest = &i[1..];
        if text == b"=~" || text == b"!~" {
            let (r, (re, _)) = string_lit(rest)?;
            i = r;
            max = 7;
            lhs = mk(
                ExprKind::Regex {
                    negate: text == b"!~",
                    lhs: Box::new(lhs),
                    re,
                },
                span,
            );
            continue;
        }
        let _g = DepthGuard::enter(rest)?;
        let (r, rhs) = binary(rest, level + 1)?;
        i = r;
        let (l, r) = (Box::new(lhs), Box::new(rhs));
        let kind = match text {
            b"||" => ExprKind::Or(l, r),
            b"&&" => ExprKind::And(l, r),
            b"|" => ExprKind::Binary(BinOp::Or, l, r),
            b"^" => ExprKind::Binary(BinOp::Xor, l, r),
            b"&" => ExprKind::Binary(BinOp::And, l, r),
            b"<" => ExprKind::Cmp(CmpOp::Lt, l, r),
            b">" => ExprKind::Cmp(CmpOp::Gt, l, r),
            b"<=" => ExprKind::Cmp(CmpOp::Le, l, r),
            b">=" => ExprKind::Cmp(CmpOp::Ge, l, r),
            b"==" => ExprKind::Cmp(CmpOp::Eq, l, r),
            b"!=" => ExprKind::Cmp(CmpOp::Ne, l, r),
            b"<<" => ExprKind::Binary(BinOp::Shl, l, r),
            b">>" => ExprKind::Binary(BinOp::Shr, l, r),
            b">>>" => ExprKind::Ushr(l, r),
            b"." => ExprKind::Concat(l, r),
            b"+" => ExprKind::Binary(BinOp::Add, l, r),
            b"-" => ExprKind::Binary(BinOp::Sub, l, r),
            b"*" => ExprKind::Binary(BinOp::Mul, l, r),
            b"/" => ExprKind::Binary(BinOp::Div, l, r),
            _ => ExprKind::Binary(BinOp::Mod, l, r),
        };
        lhs = mk(kind, span);
    }
    Ok((i, lhs))
}

/// Keys `[e, *, e]` (the `[` already taken) up to `]`; each key a
/// comparison-level expression (`inner`) or `*`.
pub(super) fn key_list(mut i: In, full: bool) -> PResult<Vec<Option<Expr>>> {
    let mut keys = Vec::new();
    loop {
        if peek_op(i, "*") {
            keys.push(None);
            i = &i[1..];
        } else {
            let (r, e) = if full { expr(i)? } else { binary(i, 7)? };
            keys.push(Some(e));
            i = r;
        }
        match i.first() {
            Some(t) if t.is_op(",") => i = &i[1..],
            Some(t) if t.is_op("]") => return Ok((&i[1..], keys)),
            _ => return Err(fail_next(i, "expected ',' or ']'")),
        }
    }
}

/// stap's `parse_array_in`: `e in A`, `[e1, *] in A`, or just `e`.
fn array_in(i: In) -> PResult<Expr> {
    let _g = DepthGuard::enter(i)?;
    let Some(t) = i.first().filter(|t| t.is_op("[")) else {
        // `e in A`, or just `e` (`binary(i, 7)`).
        let (r, e) = unary(i)?;
        let (r, e) = if operator_at(r, 7, u8::MAX) {
            climb_loop(r, e, 7, u8::MAX)?
        } else {
            (r, e)
        };
        return match r.first() {
            Some(t) if t.is_kw("in") => {
                let span = t.span;
                let (r, array) = indexable(&r[1..])?;
                let keys = vec![Some(e)];
                let array = Box::new(array);
                Ok((r, mk(ExprKind::In { keys, array }, span)))
            }
            _ => Ok((r, e)),
        };
    };
    let (r, keys) = key_list(&i[1..], false)?;
    match r.first() {
        Some(u) if u.is_kw("in") => {
            let (r, array) = indexable(&r[1..])?;
            let array = Box::new(array);
            Ok((r, mk(ExprKind::In { keys, array }, t.span)))
        }
        _ => Err(fail_next(r, "expected 'in'")),
    }
}

/// Prefix `+ - ! ~` (any number of them), then `++`/`--` forms.
fn unary(mut i: In) -> PResult<Expr> {
    let mut ops = Vec::new();
    while let Some(t) = i.first() {
        if t.kind != TokKind::Op {
            break;
        }
        let op = match t.text.as_bytes() {
            b"+" => UnOp::Plus,
            b"-" => UnOp::Neg,
            b"!" => UnOp::Not,
            b"~" => UnOp::BitNot,
            _ => break,
        };
        if ops.len() as u32 >= MAX_DEPTH {
            return Err(fail_at(i, "statement or expression nested too deeply"));
        }
        ops.push((op, t.span));
        i = &i[1..];
    }
    let (i, mut e) = crement(i)?;
    for (op, span) in ops.into_iter().rev() {
        e = mk(ExprKind::Unary(op, Box::new(e)), span);
    }
    Ok((i, e))
}

fn crement(i: In) -> PResult<Expr> {
    if leaf_len(i).is_some() {
        return leaf(i);
    }
    if let Some(t) = i.first().filter(|t| t.is_op("++") || t.is_op("--")) {
        let inc = t.text == "++";
        let (i, e) = dwarf_value(&i[1..])?;
        return Ok((i, mk(ExprKind::PreIncr(inc, Box::new(e)), t.span)));
    }
    let (i, e) = dwarf_value(i)?;
    match i.first() {
        Some(t) if t.is_op("++") || t.is_op("--") => Ok((
            &i[1..],
            mk(ExprKind::PostIncr(t.text == "++", Box::new(e)), t.span),
        )),
        _ => Ok((i, e)),
    }
}

/// True when the token is a `$`/`$$` pretty-print suffix.
fn is_pretty(t: &Token) -> bool {
    t.kind == TokKind::Ident
        && !t.text.as_bytes().is_empty()
        && t.text.as_bytes().iter().all(|&c| c == b'$')
}

/// Target-symbol suffixes `->name`, `[expr]`, then `$`/`$$`.
fn target_components(mut i: In) -> PResult<Vec<TargetComp>> {
    let mut comps = Vec::new();
    loop {
        if peek_op(i, "->") {
            match i.get(1) {
                Some(t) if t.kind == TokKind::Ident || t.kind == TokKind::Keyword => {
                    comps.push(TargetComp::Field(t.text.owned(), t.span));
                    i = &i[2..];
                }
                _ => return Err(fail_next(&i[1..], "expected identifier or keyword")),
            }
        } else if peek_op(i, "[") {
            let (r, e) = expr(&i[1..])?;
            let (r, _) = op("]")(r)?;
            comps.push(TargetComp::Index(Box::new(e)));
            i = r;
        } else {
            break;
        }
    }
    if let Some(t) = i.first().filter(|t| is_pretty(t)) {
        if t.text.as_bytes().len() > 2 {
            return Err(fail_at(i, "expected '$' or '$$'"));
        }
        comps.push(TargetComp::Pretty(t.text.as_bytes().len() == 2, t.span));
        i = &i[1..];
    }
    Ok((i, comps))
}

/// `( "str" [, "str"] )` operands of `@var`/`@const`/`@perf`/`@enum`:
/// between `min` and `max` glued string literals.
fn string_args<'a>(i: In<'a>, min: usize, max: usize) -> PResult<'a, Vec<Expr>> {
    let (mut i, _) = op("(")(i)?;
    let mut out = Vec::new();
    loop {
        let (r, (s, span)) = string_lit(i)?;
        out.push(mk(ExprKind::Str(s), span));
        i = r;
        match i.first() {
            Some(t) if t.is_op(",") && out.len() < max => i = &i[1..],
            Some(t) if t.is_op(")") && out.len() >= min => return Ok((&i[1..], out)),
            _ if out.len() < min => return Err(fail_next(i, "expected ','")),
            _ => return Err(fail_next(i, "expected ')'")),
        }
    }
}

/// `( operand, "type" [, "module"] )` operands of `@cast`.
fn cast_args(i: In) -> PResult<Vec<Expr>> {
    let (r, _) = op("(")(i)?;
    let (r, operand) = expr(r)?;
    let (r, _) = op(",")(r)?;
    let (mut r, (ty, tspan)) = string_lit(r)?;
    let mut args = vec![operand, mk(ExprKind::Str(ty), tspan)];
    if peek_op(r, ",") {
        let (r2, (m, mspan)) = string_lit(&r[1..])?;
        args.push(mk(ExprKind::Str(m), mspan));
        r = r2;
    }
    let (r, _) = op(")")(r)?;
    Ok((r, args))
}

/// stap's `parse_dwarf_value`: `&`, `$var`, `@cast`, `@var`, or a value,
/// with target suffixes (`->f`, `[i]`, `$`) making an autocast.
fn dwarf_value(i: In) -> PResult<Expr> {
    let (i, addr) = match i.first() {
        Some(t) if t.is_op("&") => (&i[1..], Some(t.span)),
        _ => (i, None),
    };
    let Some(t) = i.first() else {
        return Err(fail_at(i, "expected value"));
    };
    let (i, e, tsym) = if t.kind == TokKind::Ident && t.text.as_bytes().first() == Some(&b'$') {
        (&i[1..], mk(ExprKind::Target(t.text.owned()), t.span), true)
    } else if t.is_op("@cast") || t.is_op("@var") {
        let (r, args) = if t.is_op("@cast") {
            cast_args(&i[1..])?
        } else {
            string_args(&i[1..], 1, 2)?
        };
        let op = t.text.owned();
        (r, mk(ExprKind::AtOp { op, args }, t.span), true)
    } else {
        let (r, e) = value(i)?;
        (r, e, false)
    };
    let (r, comps) = target_components(i)?;
    let e = if comps.is_empty() {
        e
    } else {
        let span = if tsym {
            e.span
        } else {
            i.first().map_or(e.span, |t| t.span)
        };
        mk(
            ExprKind::Deref {
                base: Box::new(e),
                comps,
            },
            span,
        )
    };
    let e = match addr {
        Some(span) => mk(ExprKind::AddrOf(Box::new(e)), span),
        None => e,
    };
    Ok((r, e))
}

/// stap's `parse_value`: `( expr )`, a symbol, or a literal.
fn value(i: In) -> PResult<Expr> {
    let Some(t) = i.first() else {
        return Err(fail_at(i, "expected value"));
    };
    match &t.kind {
        // Refused once per script by `parse_tokens` outside guru mode.
        TokKind::Embedded => Ok((&i[1..], unsupported_expr("embedded C", t.span))),
        TokKind::Op if t.text == "(" => {
            let (i, e) = expr(&i[1..])?;
            let (i, _) = op(")")(i)?;
            Ok((i, e))
        }
        TokKind::Ident => symbol(i),
        // `string(x)`: the 2006-era tapset function (now a deprecated
        // library function), not the type keyword.
        TokKind::Keyword if t.text == "string" && peek_op(&i[1..], "(") => {
            let (r, args) = call_args(&i[2..])?;
            let name = t.text.owned();
            Ok((r, mk(ExprKind::Call { name, args }, t.span)))
        }
        TokKind::Op if t.text.as_bytes().len() > 1 && t.text.as_bytes()[0] == b'@' => symbol(i),
        TokKind::Str => {
            let (i, (s, span)) = string_lit(i)?;
            Ok((i, mk(ExprKind::Str(s), span)))
        }
        _ => match literal(i)? {
            (i, Literal::Num(v, span)) => Ok((i, mk(ExprKind::Num(v), span))),
            (i, Literal::Str(s, span)) => Ok((i, mk(ExprKind::Str(s), span))),
        },
    }
}

/// An array name or a histogram operator (`foreach`, `in`): stap's
/// `parse_indexable`.
pub(super) fn indexable(i: In) -> PResult<Expr> {
    match i.first() {
        Some(t) if t.is_op("@hist_linear") || t.is_op("@hist_log") => hist_op(i),
        Some(t) if t.kind == TokKind::Ident => {
            Ok((&i[1..], mk(ExprKind::Var(t.text.owned()), t.span)))
        }
        _ => Err(fail_next(i, "expected identifier or statistical operation")),
    }
}

/// A number literal with an optional `-` (histogram parameters).
fn signed_number(i: In) -> PResult<(i64, Span)> {
    match i.first() {
        Some(t) if t.is_op("-") => {
            let (r, (v, _)) = number_tok(&i[1..], true)?;
            Ok((r, (v, t.span)))
        }
        _ => number_tok(i, false),
    }
}

/// `@hist_log(x)` / `@hist_linear(x, lo, hi, width)` (number literals).
fn hist_op(i: In) -> PResult<Expr> {
    let Some(t) = i.first() else {
        return Err(fail_at(i, "expected statistical operation"));
    };
    let (r, _) = op("(")(&i[1..])?;
    let (mut r, x) = expr(r)?;
    let mut args = vec![x];
    if t.text == "@hist_linear" {
        for _ in 0..3 {
            let (r2, _) = op(",")(r)?;
            let (r2, (v, span)) = signed_number(r2)?;
            args.push(mk(ExprKind::Num(v), span));
            r = r2;
        }
    }
    let (r, _) = op(")")(r)?;
    Ok((
        r,
        mk(
            ExprKind::Stat {
                op: t.text.owned(),
                args,
            },
            t.span,
        ),
    ))
}

/// Comma-separated arguments up to `)` (the `(` already taken).
fn call_args(mut i: In) -> PResult<Vec<Expr>> {
    let mut args = Vec::new();
    if peek_op(i, ")") {
        return Ok((&i[1..], args));
    }
    loop {
        let (r, e) = expr(i)?;
        args.push(e);
        match r.first() {
            Some(t) if t.is_op(")") => return Ok((&r[1..], args)),
            Some(t) if t.is_op(",") => i = &r[1..],
            _ => return Err(fail_next(r, "expected one of ', )'")),
        }
    }
}

/// The print functions, parsed as `ExprKind::Print` / `Format`
/// (`is_print_family`).
pub(crate) const PRINT_FAMILY: &[&str] = &[
    "print",
    "println",
    "printf",
    "printd",
    "printdln",
    "sprint",
    "sprintln",
    "sprintf",
    "sprintd",
    "sprintdln",
];

/// The names of the statistics extractors (`@count(s)` ...): parsed as
/// `ExprKind::Stat`, and the extractors a `foreach` may sort by. The
/// histogram operators (`@hist_log`, `@hist_linear`) are `hist_op`'s.
pub(crate) const STAT_EXTRACTORS: &[&str] =
    &["@avg", "@count", "@sum", "@min", "@max", "@variance"];

/// `(` expr `)` of a one-operand `@` operator, as an `AtOp`.
fn at_op1(i: In) -> PResult<Expr> {
    let Some(t) = i.first() else {
        return Err(fail_at(i, "expected value"));
    };
    let (r, _) = op("(")(&i[1..])?;
    let (r, e) = expr(r)?;
    let (r, _) = op(")")(r)?;
    Ok((
        r,
        mk(
            ExprKind::AtOp {
                op: t.text.owned(),
                args: vec![e],
            },
            t.span,
        ),
    ))
}

/// The print family: literal format/delimiter checks and argument counts.
fn print_call<'a>(i: In<'a>, name: &str, span: Span) -> PResult<'a, Expr> {
    let (mut r, _) = op("(")(i)?;
    let mut format = None;
    let with_format = name == "printf" || name == "sprintf";
    let with_delim = name.starts_with("printd") || name.starts_with("sprintd");
    if with_format || with_delim {
        let (r2, (f, _)) = string_lit(r)?;
        if with_format {
            if let Err(msg) = crate::printf::parse(&String::from_utf8_lossy(&f)) {
                return Err(fail_at(r2, msg));
            }
        }
        format = Some(f);
        r = r2;
    }
    let mut args = Vec::new();
    let mut consumed = format.is_some();
    let mut min_args: u32 = if with_delim {
        2
    } else if !with_format && !name.ends_with("ln") {
        1
    } else {
        0
    };
    while min_args > 0 || !peek_op(r, ")") {
        if consumed {
            match r.first() {
                Some(t) if t.is_op(",") || t.is_op(")") => r = &r[1..],
                _ => return Err(fail_next(r, "expected one of ', )'")),
            }
        }
        let (r2, e) = expr(r)?;
        args.push(e);
        r = r2;
        consumed = true;
        min_args = min_args.saturating_sub(1);
    }
    let (r, _) = op(")")(r)?;
    let kind = match name {
        "print" => PrintKind::Print,
        "println" => PrintKind::Println,
        "printf" => PrintKind::Printf,
        other => {
            let kind = ExprKind::Format {
                name: other.to_string(),
                format,
                args,
            };
            return Ok((r, mk(kind, span)));
        }
    };
    Ok((r, mk(ExprKind::Print { kind, format, args }, span)))
}

/// stap's `parse_symbol`: variables, calls, the print family, `@` operators,
/// array elements.
fn symbol(i: In) -> PResult<Expr> {
    let Some(t) = i.first() else {
        return Err(fail_at(i, "expected identifier"));
    };
    let span = t.span;
    let rest = &i[1..];
    let (i, e) = if t.text.as_bytes().first() != Some(&b'@') {
        // A name: no string made before it is known to be needed.
        if is_print_family(t.text.as_bytes()) {
            print_call(rest, t.text.as_str(), span)?
        } else if peek_op(rest, "(") {
            let name = t.text.owned();
            let (r, args) = call_args(&rest[1..])?;
            (r, mk(ExprKind::Call { name, args }, span))
        } else {
            (rest, mk(ExprKind::Var(t.text.owned()), span))
        }
    } else {
        at_symbol(i)?
    };
    let indexable = matches!(&e.kind, ExprKind::Var(_))
        || matches!(&e.kind, ExprKind::Stat { op, .. } if op.starts_with("@hist"));
    if indexable && peek_op(i, "[") {
        let (r, keys) = key_list(&i[1..], true)?;
        let span = e.span;
        let e = mk(
            ExprKind::Index {
                base: Box::new(e),
                keys,
            },
            span,
        );
        return Ok((r, e));
    }
    Ok((i, e))
}

/// Whether `name` is one of `PRINT_FAMILY` (a `match`).
pub(super) fn is_print_family(name: &[u8]) -> bool {
    matches!(
        name,
        b"print"
            | b"println"
            | b"printf"
            | b"printd"
            | b"printdln"
            | b"sprint"
            | b"sprintln"
            | b"sprintf"
            | b"sprintd"
            | b"sprintdln"
    )
}

/// `symbol` for an `@` operator (`i` starts with its token).
fn at_symbol(i: In) -> PResult<Expr> {
    let Some(t) = i.first() else {
        return Err(fail_at(i, "expected identifier"));
    };
    let name = t.text.owned();
    let span = t.span;
    let rest = &i[1..];
    let guru = GURU.with(|g| g.get());
    Ok(if name == "@hist_linear" || name == "@hist_log" {
        hist_op(i)?
    } else if STAT_EXTRACTORS.contains(&name.as_str()) {
        let (r, _) = op("(")(rest)?;
        let (mut r, x) = expr(r)?;
        let mut args = vec![x];
        if name == "@variance" && peek_op(r, ",") {
            let (r2, (v, vspan)) = number_tok(&r[1..], false)?;
            args.push(mk(ExprKind::Num(v), vspan));
            r = r2;
        }
        let (r, _) = op(")")(r)?;
        (r, mk(ExprKind::Stat { op: name, args }, span))
    } else if name.starts_with('@') {
        match name.as_str() {
            "@defined" | "@entry" => at_op1(i)?,
            "@probewrite" => {
                let (r, _) = op("(")(rest)?;
                let (r, (v, vspan)) = ident(r)?;
                let (r, _) = op(")")(r)?;
                let args = vec![mk(ExprKind::Var(v), vspan)];
                (r, mk(ExprKind::AtOp { op: name, args }, span))
            }
            "@const" | "@perf" | "@enum" | "@enumname" => {
                let max = if name == "@const" || name == "@perf" {
                    1
                } else {
                    2
                };
                let (r, args) = string_args(rest, 1, max)?;
                if name == "@perf" && matches!(&args[0].kind, ExprKind::Str(s) if s.is_empty()) {
                    return Err(fail_tok(&rest[1..], "expected non-empty string"));
                }
                (r, mk(ExprKind::AtOp { op: name, args }, span))
            }
            "@kregister" | "@uregister" | "@kderef" | "@uderef" if !guru => {
                return Err(fail_tok(
                    i,
                    format!("{name} is guru-only: {}", super::NO_GURU),
                ));
            }
            "@kregister" | "@uregister" | "@kderef" | "@uderef" => {
                let (r, _) = op("(")(rest)?;
                let (r, args) = call_args(r)?;
                (r, mk(ExprKind::AtOp { op: name, args }, span))
            }
            // tapset/linux/*.stpm: `@choose_defined(act, alt)` is
            // `%( @defined(act) %? act %: alt %)`, i.e. a conditional on
            // whether the kernel has `act` (decided at load time here).
            "@choose_defined" if peek_op(rest, "(") => {
                let (r, _) = op("(")(rest)?;
                let (r, args) = call_args(r)?;
                let [act, alt]: [Expr; 2] = args
                    .try_into()
                    .map_err(|_| fail_tok(i, "@choose_defined takes two arguments".to_string()))?;
                let defined = mk(
                    ExprKind::AtOp {
                        op: "@defined".into(),
                        args: vec![act.clone()],
                    },
                    span,
                );
                // `alt` runs only where `act` is missing, so the loader
                // must not require it where `act` exists: a target `alt`
                // is asked about too (`@defined(alt) ? alt : 0`; where
                // neither exists the value is 0, not a load error).
                let is_target = |e: &Expr| match &e.kind {
                    ExprKind::Target(n) => n != "$return",
                    ExprKind::Deref { base, .. } => match &base.kind {
                        ExprKind::Target(_) => true,
                        ExprKind::AtOp { op, .. } => op == "@cast",
                        _ => false,
                    },
                    _ => false,
                };
                let alt = if is_target(&alt) {
                    let alt_defined = mk(
                        ExprKind::AtOp {
                            op: "@defined".into(),
                            args: vec![alt.clone()],
                        },
                        span,
                    );
                    let zero = mk(ExprKind::Num(0), span);
                    mk(
                        ExprKind::Ternary(Box::new(alt_defined), Box::new(alt), Box::new(zero)),
                        span,
                    )
                } else {
                    alt
                };
                let kind = ExprKind::Ternary(Box::new(defined), Box::new(act), Box::new(alt));
                (r, mk(kind, span))
            }
            _ => return Err(fail_tok(i, format!("unknown operator {name}"))),
        }
    } else {
        return Err(fail_tok(i, format!("unknown operator {name}")));
    })
}
