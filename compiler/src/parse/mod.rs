//! The parser: tokens to the syntax tree (`ast`), with nom combinators over
//! the token slice, following stap's recursive-descent grammar (parse.cxx)
//! and its error messages — the whole language: probes and probe aliases
//! (`=`, `+=`, `, { epilogue }`), probe-point wildcards, brace expansion,
//! `?`/`!`/`if (...)`, globals (`[N]`, `%`, initialisers, `private`),
//! functions (types, priorities), every statement (`foreach` with tuples,
//! values, slices, sorting and `limit`; `delete`, `try`/`catch`, `return`
//! ...) and every operator at stap's precedence (`in` between `&` and the
//! comparisons, `.` between shifts and `+`), target values (`$v->f[i]$$`,
//! `@cast`, `@var`, autocast), statistics and the `@` operators.
//!
//! Needs: the tokens from `lexer::lex`; `parse_for` first runs
//! `preprocess` (macros and `%( %)` conditionals) for a `Target`. Produces a
//! `Script` and parse errors; like stap, after an error it skips to the next
//! `probe`, `global`, `function` or `private` keyword and goes on, so one
//! run reports every broken declaration. Embedded C is a parse error unless
//! `Target::guru`. Runs next: `passes::resolve`, which rejects what the
//! later passes cannot handle yet.
//!
//! Every parser is a nom parser `fn(In) -> PResult<T>` over `In = &[Token]`
//! with the error type `PErr`, which remembers how far the parser got and
//! stap's message. Choice points look at the next token (as stap's parser
//! does) instead of backtracking, so each error lands on the token stap
//! names. Nesting depth is bounded so no input can exhaust the stack.
pub mod lexer;
pub mod preprocess;

use crate::ast::*;
use crate::diag::{Diagnostic, Diags};
use lexer::{Junk, TokKind, Token};
use nom::error::{ErrorKind, ParseError};
use std::cell::Cell;

/// The parser input: the tokens not consumed yet.
pub type In<'a> = &'a [Token];

/// A parse error: how many tokens were left when it happened, stap's
/// message, and whether the message names that token (`at:`) rather than
/// the parser having stopped there (`saw:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PErr {
    /// Tokens left at the error.
    pub rem: usize,
    /// Message.
    pub msg: String,
    /// `at:` instead of `saw:`.
    pub at: bool,
}

impl<'a> ParseError<In<'a>> for PErr {
    fn from_error_kind(input: In<'a>, _kind: ErrorKind) -> Self {
        PErr {
            rem: input.len(),
            msg: "syntax error".into(),
            at: false,
        }
    }

    fn append(_input: In<'a>, _kind: ErrorKind, other: Self) -> Self {
        other
    }

    fn or(self, other: Self) -> Self {
        // Keep the alternative that got further.
        if other.rem <= self.rem {
            other
        } else {
            self
        }
    }
}

/// A parser result.
pub type PResult<'a, T> = nom::IResult<In<'a>, T, PErr>;

/// Deepest nesting of statements and expressions accepted.
pub const MAX_DEPTH: u32 = 100;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static IN_FUNCTION: Cell<bool> = const { Cell::new(false) };
    static GURU: Cell<bool> = const { Cell::new(false) };
}

/// Counts one level of nesting while alive.
struct DepthGuard;

impl DepthGuard {
    fn enter(i: In) -> Result<DepthGuard, nom::Err<PErr>> {
        let d = DEPTH.with(|d| {
            d.set(d.get() + 1);
            d.get()
        });
        let g = DepthGuard;
        if d > MAX_DEPTH {
            return Err(fail_at(i, "statement or expression nested too deeply"));
        }
        Ok(g)
    }
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// A committed error at the first token of `i`: `saw:` that token.
fn fail_at(i: In, msg: impl Into<String>) -> nom::Err<PErr> {
    nom::Err::Failure(PErr {
        rem: i.len(),
        msg: msg.into(),
        at: false,
    })
}

/// An error for a token the parser takes (stap's `next()`): at the end of
/// the input it is stap's "unexpected end-of-file".
fn fail_next(i: In, msg: impl Into<String>) -> nom::Err<PErr> {
    if i.is_empty() {
        fail_at(i, "unexpected end-of-file")
    } else {
        fail_at(i, msg)
    }
}

fn peek_op(i: In, s: &str) -> bool {
    i.first().is_some_and(|t| t.is_op(s))
}

fn peek_kw(i: In, s: &str) -> bool {
    i.first().is_some_and(|t| t.is_kw(s))
}

/// The operator `s`, or stap's "expected 's'".
fn op<'a>(s: &'static str) -> impl Fn(In<'a>) -> PResult<'a, Span> {
    move |i: In<'a>| match i.first() {
        Some(t) if t.is_op(s) => Ok((&i[1..], t.span)),
        _ => Err(fail_next(i, format!("expected '{s}'"))),
    }
}

/// The keyword `s`.
fn kw<'a>(s: &'static str) -> impl Fn(In<'a>) -> PResult<'a, Span> {
    move |i: In<'a>| match i.first() {
        Some(t) if t.is_kw(s) => Ok((&i[1..], t.span)),
        _ => Err(fail_next(i, format!("expected '{s}'"))),
    }
}

/// An identifier.
fn ident(i: In) -> PResult<(String, Span)> {
    match i.first() {
        Some(t) if t.kind == TokKind::Ident => Ok((&i[1..], (t.text.clone(), t.span))),
        _ => Err(fail_next(i, "expected identifier")),
    }
}

/// Decodes the escapes stap's lexer kept in a string token (`\n`, `\t`,
/// `\\`, octal `\ooo`, hex `\xHH` ...) to raw bytes, as the C compiler
/// would: `"\377"` is the one byte 0xff.
pub fn decode_string(raw: &str) -> Vec<u8> {
    let b = raw.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut k = 0;
    while k < b.len() {
        if b[k] != b'\\' || k + 1 >= b.len() {
            out.push(b[k]);
            k += 1;
            continue;
        }
        k += 1;
        let c = b[k];
        k += 1;
        match c {
            b'a' => out.push(7),
            b'b' => out.push(8),
            b't' => out.push(b'\t'),
            b'n' => out.push(b'\n'),
            b'v' => out.push(11),
            b'f' => out.push(12),
            b'r' => out.push(b'\r'),
            b'0'..=b'7' => {
                let mut v: u32 = u32::from(c - b'0');
                let mut n = 1;
                while n < 3 && k < b.len() && (b'0'..=b'7').contains(&b[k]) {
                    v = v * 8 + u32::from(b[k] - b'0');
                    k += 1;
                    n += 1;
                }
                out.push((v & 0xff) as u8);
            }
            b'x' => {
                let mut v: u32 = 0;
                let mut n = 0;
                while n < 2 && k < b.len() && b[k].is_ascii_hexdigit() {
                    v = v * 16 + (b[k] as char).to_digit(16).unwrap_or(0);
                    k += 1;
                    n += 1;
                }
                if n == 0 {
                    out.push(b'x');
                } else {
                    out.push(v as u8);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// A string literal, adjacent literals glued (stap's
/// `consume_string_literals`).
fn string_lit(i: In) -> PResult<(Vec<u8>, Span)> {
    match i.first() {
        Some(t) if t.kind == TokKind::Str => {
            let mut raw = t.text.clone();
            let mut rest = &i[1..];
            while let Some(n) = rest.first().filter(|n| n.kind == TokKind::Str) {
                raw.push_str(&n.text);
                rest = &rest[1..];
            }
            Ok((rest, (decode_string(&raw), t.span)))
        }
        _ => Err(fail_next(i, "expected literal string")),
    }
}

/// Parses number text as stap does (`strtoull(s, 0)`): decimal, `0x` hex,
/// leading-0 octal, at most 2^64-1, wrapping to negative above 2^63-1.
pub fn parse_number(s: &str, neg: bool) -> Option<i64> {
    let v: u64 = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()?
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()?
    } else {
        s.parse::<u64>().ok()?
    };
    if neg {
        if v > 1u64 << 63 {
            return None;
        }
        Some((v as i64).wrapping_neg())
    } else {
        Some(v as i64)
    }
}

/// A number token, or stap's error.
fn number_tok(i: In, neg: bool) -> PResult<(i64, Span)> {
    match i.first() {
        Some(t) if t.kind == TokKind::Number => match parse_number(&t.text, neg) {
            Some(v) => Ok((&i[1..], (v, t.span))),
            None => Err(fail_at(i, "number invalid or out of range")),
        },
        _ => Err(fail_next(i, "expected number")),
    }
}

/// stap's `parse_literal`: a string, or a number with an optional `-`.
fn literal(i: In) -> PResult<Literal> {
    match i.first() {
        Some(t) if t.kind == TokKind::Str => {
            let (i, (s, span)) = string_lit(i)?;
            Ok((i, Literal::Str(s, span)))
        }
        Some(t) if t.is_op("-") => {
            let span = t.span;
            let (i, (v, _)) = match i.get(1) {
                Some(n) if n.kind == TokKind::Number => number_tok(&i[1..], true)?,
                _ => return Err(fail_next(&i[1..], "expected literal string or number")),
            };
            Ok((i, Literal::Num(v, span)))
        }
        Some(t) if t.kind == TokKind::Number => {
            let (i, (v, span)) = number_tok(i, false)?;
            Ok((i, Literal::Num(v, span)))
        }
        _ => Err(fail_next(i, "expected literal string or number")),
    }
}

fn mk(kind: ExprKind, span: Span) -> Expr {
    Expr { kind, span, id: 0 }
}

fn unsupported_expr(feature: &str, span: Span) -> Expr {
    mk(ExprKind::Unsupported(feature.to_string()), span)
}

// ---------------------------------------------------------------- expressions

/// A committed error at the first token of `i` naming it (`at:`).
fn fail_tok(i: In, msg: impl Into<String>) -> nom::Err<PErr> {
    nom::Err::Failure(PErr {
        rem: i.len(),
        msg: msg.into(),
        at: true,
    })
}

/// An expression (stap's `parse_expression`).
pub fn expr(i: In) -> PResult<Expr> {
    let _g = DepthGuard::enter(i)?;
    assignment(i)
}

fn assign_op(t: &Token) -> Option<Option<AssignOp>> {
    if t.kind != TokKind::Op {
        return None;
    }
    Some(Some(match t.text.as_str() {
        "=" => AssignOp::Set,
        "+=" => AssignOp::Bin(BinOp::Add),
        "-=" => AssignOp::Bin(BinOp::Sub),
        "*=" => AssignOp::Bin(BinOp::Mul),
        "/=" => AssignOp::Bin(BinOp::Div),
        "%=" => AssignOp::Bin(BinOp::Mod),
        "<<=" => AssignOp::Bin(BinOp::Shl),
        ">>=" => AssignOp::Bin(BinOp::Shr),
        "&=" => AssignOp::Bin(BinOp::And),
        "|=" => AssignOp::Bin(BinOp::Or),
        "^=" => AssignOp::Bin(BinOp::Xor),
        ".=" => AssignOp::Concat,
        "<<<" => return Some(None),
        _ => return None,
    }))
}

/// Assignments (right-associative), `<<<` among them.
fn assignment(i: In) -> PResult<Expr> {
    let (i, lhs) = ternary(i)?;
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
fn binary_level(t: &Token) -> Option<u8> {
    if t.kind != TokKind::Op {
        return None;
    }
    Some(match t.text.as_str() {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "<" | ">" | "<=" | ">=" | "==" | "!=" | "=~" | "!~" => 7,
        "<<" | ">>" | ">>>" => 8,
        "." => 9,
        "+" | "-" => 10,
        "*" | "/" | "%" => 11,
        _ => return None,
    })
}

/// Operators at levels >= `min`, left-associative (precedence climbing);
/// levels up to 6 start from `array_in`.
fn binary(i: In, min: u8) -> PResult<Expr> {
    let (mut i, mut lhs) = if min <= 6 { array_in(i)? } else { unary(i)? };
    // After a regex match (whose right side is a literal) only further
    // comparisons may follow, as in stap's comparison loop.
    let mut max = if min <= 6 { 5 } else { u8::MAX };
    while let Some(t) = i.first() {
        let Some(level) = binary_level(t).filter(|l| *l >= min && *l <= max) else {
            break;
        };
        let span = t.span;
        let text = t.text.clone();
        let rest = &i[1..];
        if text == "=~" || text == "!~" {
            let (r, (re, _)) = string_lit(rest)?;
            i = r;
            max = 7;
            lhs = mk(
                ExprKind::Regex {
                    negate: text == "!~",
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
        let kind = match text.as_str() {
            "||" => ExprKind::Or(l, r),
            "&&" => ExprKind::And(l, r),
            "|" => ExprKind::Binary(BinOp::Or, l, r),
            "^" => ExprKind::Binary(BinOp::Xor, l, r),
            "&" => ExprKind::Binary(BinOp::And, l, r),
            "<" => ExprKind::Cmp(CmpOp::Lt, l, r),
            ">" => ExprKind::Cmp(CmpOp::Gt, l, r),
            "<=" => ExprKind::Cmp(CmpOp::Le, l, r),
            ">=" => ExprKind::Cmp(CmpOp::Ge, l, r),
            "==" => ExprKind::Cmp(CmpOp::Eq, l, r),
            "!=" => ExprKind::Cmp(CmpOp::Ne, l, r),
            "<<" => ExprKind::Binary(BinOp::Shl, l, r),
            ">>" => ExprKind::Binary(BinOp::Shr, l, r),
            ">>>" => ExprKind::Ushr(l, r),
            "." => ExprKind::Concat(l, r),
            "+" => ExprKind::Binary(BinOp::Add, l, r),
            "-" => ExprKind::Binary(BinOp::Sub, l, r),
            "*" => ExprKind::Binary(BinOp::Mul, l, r),
            "/" => ExprKind::Binary(BinOp::Div, l, r),
            _ => ExprKind::Binary(BinOp::Mod, l, r),
        };
        lhs = mk(kind, span);
    }
    Ok((i, lhs))
}

/// Keys `[e, *, e]` (the `[` already taken) up to `]`; each key a
/// comparison-level expression (`inner`) or `*`.
fn key_list(mut i: In, full: bool) -> PResult<Vec<Option<Expr>>> {
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
    let (r, keys, bracket) = match i.first() {
        Some(t) if t.is_op("[") => {
            let (r, keys) = key_list(&i[1..], false)?;
            (r, keys, Some(t.span))
        }
        _ => {
            let (r, e) = binary(i, 7)?;
            (r, vec![Some(e)], None)
        }
    };
    match r.first() {
        Some(t) if t.is_kw("in") => {
            let span = bracket.unwrap_or(t.span);
            let (r, array) = indexable(&r[1..])?;
            Ok((
                r,
                mk(
                    ExprKind::In {
                        keys,
                        array: Box::new(array),
                    },
                    span,
                ),
            ))
        }
        _ if bracket.is_some() => Err(fail_next(r, "expected 'in'")),
        _ => match keys.into_iter().next().flatten() {
            Some(e) => Ok((r, e)),
            None => Err(fail_at(i, "expected value")),
        },
    }
}

/// Prefix `+ - ! ~` (any number of them), then `++`/`--` forms.
fn unary(mut i: In) -> PResult<Expr> {
    let mut ops = Vec::new();
    while let Some(t) = i.first() {
        let op = match t.text.as_str() {
            "+" => UnOp::Plus,
            "-" => UnOp::Neg,
            "!" => UnOp::Not,
            "~" => UnOp::BitNot,
            _ => break,
        };
        if t.kind != TokKind::Op {
            break;
        }
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
    t.kind == TokKind::Ident && !t.text.is_empty() && t.text.bytes().all(|c| c == b'$')
}

/// Target-symbol suffixes `->name`, `[expr]`, then `$`/`$$`.
fn target_components(mut i: In) -> PResult<Vec<TargetComp>> {
    let mut comps = Vec::new();
    loop {
        if peek_op(i, "->") {
            match i.get(1) {
                Some(t) if t.kind == TokKind::Ident || t.kind == TokKind::Keyword => {
                    comps.push(TargetComp::Field(t.text.clone(), t.span));
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
        if t.text.len() > 2 {
            return Err(fail_at(i, "expected '$' or '$$'"));
        }
        comps.push(TargetComp::Pretty(t.text.len() == 2, t.span));
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
    let (i, e, tsym) = if t.kind == TokKind::Ident && t.text.starts_with('$') {
        (&i[1..], mk(ExprKind::Target(t.text.clone()), t.span), true)
    } else if t.is_op("@cast") {
        let (r, _) = op("(")(&i[1..])?;
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
        let e = mk(
            ExprKind::AtOp {
                op: t.text.clone(),
                args,
            },
            t.span,
        );
        (r, e, true)
    } else if t.is_op("@var") {
        let (r, args) = string_args(&i[1..], 1, 2)?;
        let e = mk(
            ExprKind::AtOp {
                op: t.text.clone(),
                args,
            },
            t.span,
        );
        (r, e, true)
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
        TokKind::Embedded => {
            if GURU.with(|g| g.get()) {
                Ok((&i[1..], unsupported_expr("embedded C", t.span)))
            } else {
                Err(fail_at(
                    i,
                    "embedded expression code in unprivileged script; need stap -g",
                ))
            }
        }
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
            let name = t.text.clone();
            Ok((r, mk(ExprKind::Call { name, args }, t.span)))
        }
        TokKind::Op if t.text.starts_with('@') && t.text.len() > 1 => symbol(i),
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
fn indexable(i: In) -> PResult<Expr> {
    match i.first() {
        Some(t) if t.is_op("@hist_linear") || t.is_op("@hist_log") => hist_op(i),
        Some(t) if t.kind == TokKind::Ident => {
            Ok((&i[1..], mk(ExprKind::Var(t.text.clone()), t.span)))
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
                op: t.text.clone(),
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

const PRINT_FAMILY: &[&str] = &[
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

/// The statistics extractors.
pub const STAT_OPS: &[&str] = &["@avg", "@count", "@sum", "@min", "@max", "@variance"];

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
                op: t.text.clone(),
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
    let name = t.text.clone();
    let span = t.span;
    let rest = &i[1..];
    let guru = GURU.with(|g| g.get());
    let (i, e) = if name == "@hist_linear" || name == "@hist_log" {
        hist_op(i)?
    } else if STAT_OPS.contains(&name.as_str()) {
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
                return Err(fail_tok(i, format!("{name} requires guru mode (-g)")));
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
                let kind = ExprKind::Ternary(Box::new(defined), Box::new(act), Box::new(alt));
                (r, mk(kind, span))
            }
            // Macros of stap's tapset library (.stpm files) this compiler
            // does not provide: parsed as calls, refused by `resolve`.
            "@prometheus_dump_array1" | "@prometheus_dump_array2" | "@prometheus_dump_array3"
                if peek_op(rest, "(") =>
            {
                let (r, _) = op("(")(rest)?;
                let (r, _) = call_args(r)?;
                let what = format!("tapset macro {name}");
                (r, mk(ExprKind::Unsupported(what), span))
            }
            _ => return Err(fail_tok(i, format!("unknown operator {name}"))),
        }
    } else if PRINT_FAMILY.contains(&name.as_str()) {
        print_call(rest, &name, span)?
    } else if peek_op(rest, "(") {
        let (r, args) = call_args(&rest[1..])?;
        (r, mk(ExprKind::Call { name, args }, span))
    } else {
        (rest, mk(ExprKind::Var(name), span))
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

// ----------------------------------------------------------------- statements

fn stmt(kind: StmtKind, span: Span) -> Stmt {
    Stmt { kind, span }
}

/// `{ statement* }`
fn block(i: In) -> PResult<Stmt> {
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
            value = Some((t.text.clone(), t.span));
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
    if let Some(t) = r.first().filter(|t| STAT_OPS.contains(&t.text.as_str())) {
        stat = Some((t.text.clone(), t.span));
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
    let (i, s) = match (&t.kind, t.text.as_str()) {
        (TokKind::Op, ";") => return Ok((rest, stmt(StmtKind::Null, span))),
        (TokKind::Op, "{") => return block(i),
        (TokKind::Keyword, "try") => {
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
        (TokKind::Keyword, "if") => {
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
        (TokKind::Keyword, "while") => {
            let (r, cond) = paren_cond(rest)?;
            let (r, body) = statement(r)?;
            let kind = StmtKind::Loop {
                init: None,
                cond,
                incr: None,
                body: Box::new(body),
            };
            return Ok((r, stmt(kind, span)));
        }
        (TokKind::Keyword, "for") => {
            let (r, _) = op("(")(rest)?;
            let (r, init) = if peek_op(r, ";") {
                (&r[1..], None)
            } else {
                let (r, e) = expr(r)?;
                let (r, _) = op(";")(r)?;
                (r, Some(e))
            };
            let (r, cond) = match r.first() {
                Some(t) if t.is_op(";") => (&r[1..], mk(ExprKind::Num(1), t.span)),
                _ => {
                    let (r, e) = expr(r)?;
                    let (r, _) = op(";")(r)?;
                    (r, e)
                }
            };
            let (r, incr) = if peek_op(r, ")") {
                (&r[1..], None)
            } else {
                let (r, e) = expr(r)?;
                let (r, _) = op(")")(r)?;
                (r, Some(e))
            };
            let (r, body) = statement(r)?;
            let kind = StmtKind::Loop {
                init,
                cond,
                incr,
                body: Box::new(body),
            };
            return Ok((r, stmt(kind, span)));
        }
        (TokKind::Keyword, "foreach") => return foreach(rest, span),
        (TokKind::Keyword, "return") => {
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
        (TokKind::Keyword, "delete") => {
            let (r, e) = expr(rest)?;
            (r, stmt(StmtKind::Delete(e), span))
        }
        (TokKind::Keyword, "break") => (rest, stmt(StmtKind::Break, span)),
        (TokKind::Keyword, "continue") => (rest, stmt(StmtKind::Continue, span)),
        (TokKind::Keyword, "next") => (rest, stmt(StmtKind::Next, span)),
        (TokKind::Op | TokKind::Ident | TokKind::Number | TokKind::Str | TokKind::Embedded, _) => {
            let (r, e) = expr(i)?;
            (r, stmt(StmtKind::Expr(e), span))
        }
        _ => return Err(fail_at(i, "expected statement")),
    };
    let i = if peek_op(i, ";") { &i[1..] } else { i };
    Ok((i, s))
}

// --------------------------------------------------------------- declarations

fn point(components: Vec<Component>) -> ProbePoint {
    ProbePoint {
        components,
        optional: false,
        sufficient: false,
        condition: None,
        cond: None,
    }
}

/// One component, or a `{a, b}` group of probe points.
fn component(i: In) -> PResult<Vec<ProbePoint>> {
    let Some(t) = i.first() else {
        return Err(fail_at(i, "unexpected end-of-file"));
    };
    if t.is_op("{") {
        let (r, pps) = probe_points(&i[1..])?;
        let (r, _) = match r.first() {
            Some(t) if t.is_op("}") => (&r[1..], ()),
            _ => return Err(fail_at(r, "expected '}'")),
        };
        return Ok((r, pps));
    }
    if !(t.kind == TokKind::Ident || t.kind == TokKind::Keyword || t.is_op("*")) {
        return Err(fail_at(i, "expected identifier or '*' or '{'"));
    }
    // Glue adjacent pieces of a wildcard name (`sys_*_at`).
    let mut name = t.text.clone();
    let mut r = &i[1..];
    while let Some(u) = r.first() {
        if u.ws_before || !(u.kind == TokKind::Ident || u.kind == TokKind::Keyword || u.is_op("*"))
        {
            break;
        }
        name.push_str(&u.text);
        r = &r[1..];
    }
    let mut comp = Component {
        name,
        arg: None,
        span: t.span,
    };
    if peek_op(r, "(") {
        let (r2, lit) = literal(&r[1..])?;
        let (r2, _) = op(")")(r2)?;
        comp.arg = Some(lit);
        r = r2;
    }
    Ok((r, vec![point(vec![comp])]))
}

/// Dotted components with the optional `?`/`!`/`if (...)` suffix, brace
/// groups multiplied out (stap's `parse_components`).
fn components(mut i: In) -> PResult<Vec<ProbePoint>> {
    let mut pps: Vec<ProbePoint> = Vec::new();
    loop {
        let (r, suffix) = component(i)?;
        if pps.is_empty() {
            pps = suffix;
        } else {
            if pps
                .iter()
                .any(|p| p.optional || p.sufficient || p.condition.is_some())
            {
                return Err(fail_at(
                    r,
                    "'?', '!' or condition must only be specified in suffix",
                ));
            }
            let mut product = Vec::new();
            for p in &pps {
                for s in &suffix {
                    let mut c = p.components.clone();
                    c.extend(s.components.iter().cloned());
                    product.push(ProbePoint {
                        components: c,
                        optional: s.optional,
                        sufficient: s.sufficient,
                        condition: s.condition,
                        cond: s.cond.clone(),
                    });
                }
                if product.len() > 4096 {
                    return Err(fail_at(r, "too many probe points"));
                }
            }
            pps = product;
        }
        i = r;
        if peek_op(i, ".") {
            i = &i[1..];
            continue;
        }
        if let Some(t) = i.first().filter(|t| t.is_op("?") || t.is_op("!")) {
            for p in &mut pps {
                if p.optional || p.sufficient {
                    return Err(fail_at(i, "'?' or '!' respecified"));
                }
                p.optional = true;
                p.sufficient = t.text == "!";
            }
            i = &i[1..];
        }
        if let Some(t) = i.first().filter(|t| t.is_kw("if")) {
            let span = t.span;
            if !peek_op(&i[1..], "(") {
                return Err(fail_next(&i[1..], "expected '('"));
            }
            let (r, e) = expr(&i[2..])?;
            let (r, _) = match r.first() {
                Some(t) if t.is_op(")") => (&r[1..], ()),
                _ => return Err(fail_next(r, "expected ')'")),
            };
            for p in &mut pps {
                if p.condition.is_some() {
                    return Err(fail_at(r, "condition respecified"));
                }
                p.condition = Some(span);
                p.cond = Some(Box::new(e.clone()));
            }
            i = r;
        }
        return Ok((i, pps));
    }
}

/// A comma list of probe points (stap's `parse_probe_points`).
fn probe_points(mut i: In) -> PResult<Vec<ProbePoint>> {
    let mut pps = Vec::new();
    loop {
        let (r, mut tail) = components(i)?;
        pps.append(&mut tail);
        if pps.len() > 4096 {
            return Err(fail_at(r, "too many probe points"));
        }
        i = r;
        match i.first() {
            Some(t) if t.is_op(",") => i = &i[1..],
            Some(t) if t.is_op("{") || t.is_op("=") || t.is_op("+=") || t.is_op("}") => {
                return Ok((i, pps))
            }
            _ => return Err(fail_next(i, "expected one of ', { } = +='")),
        }
    }
}

/// `probe POINTS BODY`, or an alias definition `probe NAMES = POINTS BODY
/// [, EPILOGUE]` / `probe NAMES += POINTS BODY`.
fn probe(i: In) -> PResult<Item> {
    let (i, span) = kw("probe")(i)?;
    let (i, points) = probe_points(i)?;
    if let Some(t) = i.first().filter(|t| t.is_op("=") || t.is_op("+=")) {
        let epilogue_style = t.text == "+=";
        if points.iter().any(|p| p.optional || p.sufficient) {
            return Err(fail_at(
                i,
                "probe point alias name cannot be optional nor sufficient",
            ));
        }
        if points.iter().any(|p| p.condition.is_some()) {
            return Err(fail_at(i, "probe point alias name cannot have a condition"));
        }
        let (r, targets) = probe_points(&i[1..])?;
        if !peek_op(r, "{") {
            return Err(fail_next(r, "expected '{'"));
        }
        let (mut r, body) = block(r)?;
        let mut epilogue = None;
        if !epilogue_style && peek_op(r, ",") {
            let (r2, e) = block(&r[1..])?;
            epilogue = Some(e);
            r = r2;
        }
        let a = AliasDecl {
            span,
            names: points,
            epilogue_style,
            points: targets,
            body,
            epilogue,
        };
        return Ok((r, Item::Alias(Box::new(a))));
    }
    if !peek_op(i, "{") {
        return Err(fail_next(i, "expected probe point specifier"));
    }
    let (i, body) = block(i)?;
    Ok((i, Item::Probe(ProbeDecl { span, points, body })))
}

/// `global a [= lit], b[N], c% ...` (stap's `do_parse_global`); after
/// `private`, one name without the `global` keyword is allowed.
fn global<'a>(i: In<'a>, seen: &mut Vec<String>, private: Option<Span>) -> PResult<'a, Vec<Item>> {
    let (mut i, one) = if private.is_some() && !peek_kw(i, "global") {
        (i, true)
    } else {
        (kw("global")(i)?.0, false)
    };
    let mut out = Vec::new();
    loop {
        let (r, (name, span)) = ident(i)?;
        if seen.contains(&name) {
            return Err(fail_at(&i[1..], "duplicate global name"));
        }
        seen.push(name.clone());
        let mut g = GlobalDecl {
            name,
            span,
            init: None,
            array: false,
            size: None,
            wrap: false,
            private,
        };
        i = r;
        if peek_op(i, "%") {
            g.array = true;
            g.wrap = true;
            i = &i[1..];
        }
        if peek_op(i, "[") {
            let (r, (size, _)) = number_tok(&i[1..], false)?;
            if size <= 0 || size > i64::from(i32::MAX) {
                return Err(fail_at(r, "array size out of range"));
            }
            let (r, _) = op("]")(r)?;
            g.array = true;
            g.size = Some(size);
            i = r;
        }
        if peek_op(i, "%") && !g.wrap {
            g.array = true;
            g.wrap = true;
            i = &i[1..];
        }
        if peek_op(i, "=") {
            if g.array {
                return Err(fail_at(&i[1..], "only scalar globals can be initialized"));
            }
            let (r, lit) = literal(&i[1..])?;
            g.init = Some(lit);
            i = r;
        }
        out.push(Item::Global(g));
        match i.first() {
            Some(t) if t.is_op(";") => return Ok((&i[1..], out)),
            Some(t) if t.is_op(",") && !one => i = &i[1..],
            _ => return Ok((i, out)),
        }
    }
}

/// `function name[:type](args)[:prio] body`.
fn function(i: In, private: Option<Span>) -> PResult<Item> {
    let (i, _) = kw("function")(i)?;
    let (mut i, (name, span)) = match i.first() {
        Some(t) if t.kind == TokKind::Ident => (&i[1..], (t.text.clone(), t.span)),
        _ => return Err(fail_next(i, "expected identifier")),
    };
    let type_ann = |i: In<'_>| -> Result<(usize, Option<TypeAnn>), nom::Err<PErr>> {
        if peek_op(i, ":") {
            match i.get(1) {
                Some(t) if t.is_kw("long") => Ok((2, Some(TypeAnn::Long))),
                Some(t) if t.is_kw("string") => Ok((2, Some(TypeAnn::Str))),
                _ => Err(fail_next(&i[1..], "expected 'string' or 'long'")),
            }
        } else {
            Ok((0, None))
        }
    };
    let (n, ret) = type_ann(i)?;
    i = &i[n..];
    let (mut r, _) = op("(")(i)?;
    let mut params: Vec<Param> = Vec::new();
    if peek_op(r, ")") {
        r = &r[1..];
    } else {
        loop {
            let (r2, (pname, pspan)) = ident(r)?;
            if params.iter().any(|p| p.name == pname) {
                return Err(fail_tok(r, "duplicate argument name"));
            }
            let (n, ty) = type_ann(r2)?;
            params.push(Param {
                name: pname,
                span: pspan,
                ty,
            });
            r = &r2[n..];
            match r.first() {
                Some(t) if t.is_op(")") => {
                    r = &r[1..];
                    break;
                }
                Some(t) if t.is_op(",") => r = &r[1..],
                _ => return Err(fail_next(r, "expected ',' or ')'")),
            }
        }
    }
    let mut priority = None;
    if peek_op(r, ":") {
        let (r2, (p, _)) = number_tok(&r[1..], false)?;
        if p < 1 {
            return Err(fail_at(&r[1..], "specified priority must be >= 1"));
        }
        priority = Some(p);
        r = r2;
    }
    let (r, body) = match r.first() {
        Some(t) if t.kind == TokKind::Embedded => {
            if !GURU.with(|g| g.get()) {
                return Err(fail_at(
                    r,
                    "embedded code in unprivileged script; need stap -g",
                ));
            }
            (&r[1..], None)
        }
        _ => {
            IN_FUNCTION.with(|f| f.set(true));
            let res = block(r);
            IN_FUNCTION.with(|f| f.set(false));
            let (r, b) = res?;
            (r, Some(b))
        }
    };
    let f = FunctionDecl {
        name,
        span,
        ret,
        params,
        priority,
        body,
        private,
    };
    Ok((r, Item::Function(Box::new(f))))
}

/// One top-level declaration.
fn item<'a>(i: In<'a>, globals: &mut Vec<String>) -> PResult<'a, Vec<Item>> {
    let Some(t) = i.first() else {
        return Ok((i, Vec::new()));
    };
    match (&t.kind, t.text.as_str()) {
        (TokKind::Keyword, "probe") => probe(i).map(|(r, p)| (r, vec![p])),
        (TokKind::Keyword, "global") => global(i, globals, None),
        (TokKind::Keyword, "function") => function(i, None).map(|(r, f)| (r, vec![f])),
        (TokKind::Keyword, "private") => {
            let rest = &i[1..];
            if peek_kw(rest, "function") {
                function(rest, Some(t.span)).map(|(r, f)| (r, vec![f]))
            } else if peek_kw(rest, "global")
                || rest.first().is_some_and(|u| u.kind == TokKind::Ident)
            {
                global(rest, globals, Some(t.span))
            } else {
                Err(fail_next(rest, "expected 'function' or identifier"))
            }
        }
        (TokKind::Embedded, _) => {
            if GURU.with(|g| g.get()) {
                Ok((&i[1..], vec![Item::Embedded(t.span)]))
            } else {
                Err(fail_at(
                    i,
                    "embedded code in unprivileged script; need stap -g",
                ))
            }
        }
        _ => Err(fail_at(
            i,
            "expected 'probe', 'global', 'private', 'function', or '%{'",
        )),
    }
}

/// The message stap prints instead of the parser's when the offending
/// token is junk with a known cause.
fn junk_message(t: &Token) -> Option<String> {
    match &t.kind {
        TokKind::Junk(Junk::UnclosedQuote) => Some("Could not find matching closing quote".into()),
        TokKind::Junk(Junk::UnclosedEmbedded) => {
            Some("Could not find matching '%}' to close embedded function block".into())
        }
        TokKind::Junk(Junk::InvalidArg(n)) => {
            Some(format!("command line argument out of range [1-{n}]"))
        }
        TokKind::Junk(Junk::NestedArg) => {
            Some("invalid nested substitution of command line arguments".into())
        }
        _ => None,
    }
}

fn to_diagnostic(tokens: &[Token], e: PErr) -> Diagnostic {
    let idx = tokens.len().saturating_sub(e.rem);
    match tokens.get(idx) {
        None => Diagnostic::parse(e.msg, None),
        Some(t) => match junk_message(t) {
            Some(m) => Diagnostic {
                at: true,
                ..Diagnostic::parse(m, Some(t.span))
            },
            None => Diagnostic {
                at: e.at,
                ..Diagnostic::parse(e.msg, Some(t.span))
            },
        },
    }
}

/// Gives every expression its `ExprId`, in source order; returns the count.
fn number_exprs(script: &mut Script) -> u32 {
    fn e(x: &mut Expr, n: &mut u32) {
        x.id = *n;
        *n = n.saturating_add(1);
        for c in x.children_mut() {
            e(c, n);
        }
    }
    fn s(x: &mut Stmt, n: &mut u32) {
        let (exprs, stmts) = x.children_mut();
        for x in exprs {
            e(x, n);
        }
        for x in stmts {
            s(x, n);
        }
    }
    fn points(pps: &mut [ProbePoint], n: &mut u32) {
        for p in pps {
            if let Some(c) = &mut p.cond {
                e(c, n);
            }
        }
    }
    let mut n = 0;
    // Probe handlers first, so their ids do not depend on the other
    // declarations.
    for it in &mut script.items {
        if let Item::Probe(p) = it {
            s(&mut p.body, &mut n);
        }
    }
    for it in &mut script.items {
        match it {
            Item::Probe(p) => points(&mut p.points, &mut n),
            Item::Function(f) => {
                if let Some(b) = &mut f.body {
                    s(b, &mut n);
                }
            }
            Item::Alias(a) => {
                points(&mut a.points, &mut n);
                s(&mut a.body, &mut n);
                if let Some(b) = &mut a.epilogue {
                    s(b, &mut n);
                }
            }
            Item::Global(_) | Item::Embedded(_) | Item::Unsupported(_) => {}
        }
    }
    n
}

/// Parses `tokens` into a script, reporting parse errors into `diags`,
/// with the default `preprocess::Target`.
pub fn parse(tokens: &[Token], diags: &mut Diags) -> Script {
    parse_for(tokens, &preprocess::Target::default(), diags)
}

/// Preprocesses `tokens` for `target` (macros, `%( %)` conditionals), then
/// parses them into a script, reporting errors into `diags`. An empty
/// result after preprocessing is not an error here (see `lib.rs`).
pub fn parse_for(tokens: &[Token], target: &preprocess::Target, diags: &mut Diags) -> Script {
    if preprocess::is_plain(tokens) {
        return parse_tokens(tokens, target.guru, diags);
    }
    let (tokens, warnings, error) = preprocess::preprocess(tokens, target);
    for w in warnings {
        diags.push(w);
    }
    if let Some(e) = error {
        diags.push(e);
        return Script::default();
    }
    parse_tokens(&tokens, target.guru, diags)
}

/// The parser proper, over preprocessed tokens.
fn parse_tokens(tokens: &[Token], guru: bool, diags: &mut Diags) -> Script {
    DEPTH.with(|d| d.set(0));
    IN_FUNCTION.with(|f| f.set(false));
    GURU.with(|g| g.set(guru));
    let mut script = Script::default();
    let mut globals = Vec::new();
    let mut i: In = tokens;
    while !i.is_empty() {
        match item(i, &mut globals) {
            Ok((r, mut items)) => {
                script.items.append(&mut items);
                i = r;
            }
            Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => {
                let start = tokens.len() - i.len();
                let at = tokens.len().saturating_sub(e.rem).max(start + 1);
                diags.push(to_diagnostic(tokens, e));
                // Recover: skip to the next declaration keyword.
                let mut k = at.min(tokens.len());
                while let Some(t) = tokens.get(k) {
                    if t.is_kw("probe")
                        || t.is_kw("global")
                        || t.is_kw("function")
                        || t.is_kw("private")
                        || t.kind == TokKind::Embedded
                    {
                        break;
                    }
                    k += 1;
                }
                i = &tokens[k..];
            }
            Err(nom::Err::Incomplete(_)) => break,
        }
        DEPTH.with(|d| d.set(0));
        IN_FUNCTION.with(|f| f.set(false));
    }
    script.nexprs = number_exprs(&mut script);
    script
}

#[cfg(test)]
mod tests;
