//! The parser: tokens to the syntax tree (`ast`), with nom combinators over
//! the token slice, following stap's recursive-descent grammar (parse.cxx)
//! and its error messages.
//!
//! Needs: the tokens from `lexer::lex`. Produces a `Script` and parse
//! errors; like stap, after an error it skips to the next `probe`, `global`,
//! `function` or `private` keyword and goes on, so one run reports every
//! broken declaration. Constructs of the full language that are not lowered
//! yet are parsed (so the rest of the file still parses) into `Unsupported`
//! nodes; `passes::resolve` reports them. Runs next: `passes::resolve`.
//!
//! Every parser is a nom parser `fn(In) -> PResult<T>` over `In = &[Token]`
//! with the error type `PErr`, which remembers how far the parser got and
//! stap's message. Choice points look at the next token (as stap's parser
//! does) instead of backtracking, so each error lands on the token stap
//! names. Nesting depth is bounded so no input can exhaust the stack.
pub mod lexer;

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
/// `\\`, octal `\ooo`, hex `\xHH` ...), as the C compiler would.
pub fn decode_string(raw: &str) -> String {
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
    String::from_utf8_lossy(&out).into_owned()
}

/// A string literal, adjacent literals glued (stap's
/// `consume_string_literals`).
fn string_lit(i: In) -> PResult<(String, Span)> {
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

/// Skips a balanced `( ... )` group starting at `i` (which must be `(`).
fn skip_parens(i: In) -> PResult<()> {
    let (mut i, _) = op("(")(i)?;
    let mut depth = 1usize;
    while depth > 0 {
        match i.first() {
            None => return Err(fail_at(i, "unexpected end-of-file")),
            Some(t) if t.is_op("(") => depth += 1,
            Some(t) if t.is_op(")") => depth -= 1,
            _ => {}
        }
        i = &i[1..];
    }
    Ok((i, ()))
}

// ---------------------------------------------------------------- expressions

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
            let e = match aop {
                Some(aop) => mk(ExprKind::Assign(aop, Box::new(lhs), Box::new(rhs)), span),
                None => unsupported_expr("statistics (<<<)", span),
            };
            Ok((i, e))
        }
    }
}

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
/// 2 `&&`, 3 `|`, 4 `^`, 5 `&`, 6 `in`, 7 comparisons, 8 shifts, 9 `.`,
/// 10 `+ -`, 11 `* / %`.
fn binary_level(t: &Token) -> Option<u8> {
    if t.is_kw("in") {
        return Some(6);
    }
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

/// Operators at levels >= `min`, left-associative (precedence climbing).
fn binary(i: In, min: u8) -> PResult<Expr> {
    let (mut i, mut lhs) = unary(i)?;
    while let Some(t) = i.first() {
        let Some(level) = binary_level(t).filter(|l| *l >= min) else {
            break;
        };
        let span = t.span;
        let text = t.text.clone();
        let rest = &i[1..];
        if level == 6 {
            // `e in ARRAY`
            let (r, _) = indexable(rest)?;
            i = r;
            lhs = unsupported_expr("arrays", span);
            continue;
        }
        if text == "=~" || text == "!~" {
            let (r, _) = string_lit(rest)?;
            i = r;
            lhs = unsupported_expr("regular expressions", span);
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
            ">>>" => ExprKind::Unsupported("operator '>>>'".into()),
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

/// Target-symbol suffixes `->name`, `[expr]`; true when any was present.
fn target_components(mut i: In) -> PResult<bool> {
    let mut any = false;
    loop {
        if peek_op(i, "->") {
            let (r, _) = ident(&i[1..])?;
            i = r;
        } else if peek_op(i, "[") {
            let (r, _) = expr(&i[1..])?;
            let (r, _) = op("]")(r)?;
            i = r;
        } else {
            return Ok((i, any));
        }
        any = true;
    }
}

/// stap's `parse_dwarf_value`: `&`, `$var`, `@cast`, `@var`, or a value.
fn dwarf_value(i: In) -> PResult<Expr> {
    let (i, addr) = match i.first() {
        Some(t) if t.is_op("&") => (&i[1..], Some(t.span)),
        _ => (i, None),
    };
    let Some(t) = i.first() else {
        return Err(fail_at(i, "expected value"));
    };
    let (i, e) = if t.kind == TokKind::Ident && t.text.starts_with('$') {
        (&i[1..], mk(ExprKind::Target(t.text.clone()), t.span))
    } else if t.is_op("@cast") || t.is_op("@var") {
        let (r, _) = skip_parens(&i[1..])?;
        (r, unsupported_expr(&t.text, t.span))
    } else {
        value(i)?
    };
    let (i, comps) = target_components(i)?;
    let e = match (addr, comps, &e.kind) {
        (Some(span), _, _) => unsupported_expr("address-of operator '&'", span),
        (None, true, ExprKind::Target(_)) => unsupported_expr("target variables", e.span),
        (None, true, _) => unsupported_expr("@cast", e.span),
        _ => e,
    };
    Ok((i, e))
}

/// stap's `parse_value`: `( expr )`, a symbol, or a literal.
fn value(i: In) -> PResult<Expr> {
    let Some(t) = i.first() else {
        return Err(fail_at(i, "expected value"));
    };
    match &t.kind {
        TokKind::Embedded => Err(nom::Err::Failure(PErr {
            rem: i.len(),
            msg: "embedded expression code in unprivileged script; need stap -g".into(),
            at: false,
        })),
        TokKind::Op if t.text == "(" => {
            let (i, e) = expr(&i[1..])?;
            let (i, _) = op(")")(i)?;
            Ok((i, e))
        }
        TokKind::Op if t.text == "[" => {
            // `[a, b] in ARRAY`
            let mut r = &i[1..];
            loop {
                if peek_op(r, "*") {
                    r = &r[1..];
                } else {
                    let (r2, _) = binary(r, 7)?;
                    r = r2;
                }
                match r.first() {
                    Some(t) if t.is_op(",") => r = &r[1..],
                    Some(t) if t.is_op("]") => {
                        r = &r[1..];
                        break;
                    }
                    _ => return Err(fail_next(r, "expected ',' or ']'")),
                }
            }
            let (r, _) = kw("in")(r)?;
            let (r, _) = indexable(r)?;
            Ok((r, unsupported_expr("arrays", t.span)))
        }
        TokKind::Ident => symbol(i),
        TokKind::Op if t.text.starts_with('@') => symbol(i),
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

/// An array name or a histogram operator (`foreach`, `in`).
fn indexable(i: In) -> PResult<()> {
    match i.first() {
        Some(t) if t.is_op("@hist_linear") || t.is_op("@hist_log") => {
            let (i, _) = skip_parens(&i[1..])?;
            Ok((i, ()))
        }
        Some(t) if t.kind == TokKind::Ident => Ok((&i[1..], ())),
        _ => Err(fail_next(i, "expected identifier or statistical operation")),
    }
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

const STAT_OPS: &[&str] = &["@avg", "@count", "@sum", "@min", "@max", "@variance"];

/// stap's `parse_symbol`: variables, calls, the print family, `@` operators,
/// array elements.
fn symbol(i: In) -> PResult<Expr> {
    let Some(t) = i.first() else {
        return Err(fail_at(i, "expected identifier"));
    };
    let name = t.text.clone();
    let span = t.span;
    let rest = &i[1..];
    let (i, e) = if name == "@hist_linear" || name == "@hist_log" {
        let (r, _) = skip_parens(rest)?;
        (r, unsupported_expr("histograms", span))
    } else if STAT_OPS.contains(&name.as_str()) {
        let (r, _) = skip_parens(rest)?;
        (r, unsupported_expr("statistics", span))
    } else if name.starts_with('@') {
        match name.as_str() {
            "@defined" | "@probewrite" | "@const" | "@entry" | "@perf" | "@kregister"
            | "@uregister" | "@kderef" | "@uderef" | "@enum" | "@enumname" => {
                let (r, _) = skip_parens(rest)?;
                (r, unsupported_expr(&name, span))
            }
            _ => {
                return Err(nom::Err::Failure(PErr {
                    rem: i.len(),
                    msg: format!("unknown operator {name}"),
                    at: false,
                }))
            }
        }
    } else if PRINT_FAMILY.contains(&name.as_str()) {
        let (mut r, _) = op("(")(rest)?;
        let mut format = None;
        let with_format = name == "printf" || name == "sprintf";
        let with_delim = name.starts_with("printd") || name.starts_with("sprintd");
        if with_format || with_delim {
            let (r2, (f, _)) = string_lit(r)?;
            if with_format {
                if let Err(msg) = crate::printf::parse(&f) {
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
        let kind = match name.as_str() {
            "print" => PrintKind::Print,
            "println" => PrintKind::Println,
            "printf" => PrintKind::Printf,
            other => return Ok((r, unsupported_expr(other, span))),
        };
        (r, mk(ExprKind::Print { kind, format, args }, span))
    } else if peek_op(rest, "(") {
        let (r, args) = call_args(&rest[1..])?;
        (r, mk(ExprKind::Call { name, args }, span))
    } else {
        (rest, mk(ExprKind::Var(name), span))
    };
    if peek_op(i, "[") && !matches!(e.kind, ExprKind::Call { .. } | ExprKind::Print { .. }) {
        // ARRAY[i, j, *]
        let mut r = &i[1..];
        loop {
            if peek_op(r, "*") {
                r = &r[1..];
            } else {
                let (r2, _) = expr(r)?;
                r = r2;
            }
            match r.first() {
                Some(t) if t.is_op("]") => {
                    r = &r[1..];
                    break;
                }
                Some(t) if t.is_op(",") => r = &r[1..],
                _ => return Err(fail_next(r, "expected one of '] ,'")),
            }
        }
        return Ok((r, unsupported_expr("arrays", span)));
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

/// A statement (stap's `parse_statement`), with a trailing `;` eaten after
/// non-block statements.
pub fn statement(i: In) -> PResult<Stmt> {
    let _g = DepthGuard::enter(i)?;
    let Some(t) = i.first() else {
        return Err(fail_at(i, "expected statement"));
    };
    let span = t.span;
    let rest = &i[1..];
    let unsupported = |feature: &str| {
        StmtKind::Unsupported(Unsupported {
            feature: feature.into(),
            span,
        })
    };
    let (i, s) = match (&t.kind, t.text.as_str()) {
        (TokKind::Op, ";") => return Ok((rest, stmt(StmtKind::Null, span))),
        (TokKind::Op, "{") => return block(i),
        (TokKind::Keyword, "try") => {
            let (r, _) = block(rest)?;
            let (mut r, _) = kw("catch")(r)?;
            if peek_op(r, "(") {
                let (r2, _) = ident(&r[1..])?;
                let (r2, _) = op(")")(r2)?;
                r = r2;
            }
            let (r, _) = block(r)?;
            return Ok((r, stmt(unsupported("try/catch"), span)));
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
        (TokKind::Keyword, "foreach") => {
            let (r, _) = skip_parens(rest)?;
            let (r, _) = statement(r)?;
            return Ok((r, stmt(unsupported("foreach"), span)));
        }
        (TokKind::Keyword, "return") => {
            if !IN_FUNCTION.with(|f| f.get()) {
                return Err(fail_at(i, "found 'return' not in function context"));
            }
            let r = match rest.first() {
                None => {
                    return Err(fail_at(
                        rest,
                        "expected ';', '}' or an expression statement",
                    ))
                }
                Some(t) if t.is_op(";") || t.is_op("}") => rest,
                _ => expr(rest)?.0,
            };
            (r, stmt(unsupported("return"), span))
        }
        (TokKind::Keyword, "delete") => {
            let (r, _) = expr(rest)?;
            (r, stmt(unsupported("delete"), span))
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
    Ok((
        r,
        vec![ProbePoint {
            components: vec![comp],
            optional: false,
            sufficient: false,
            condition: None,
        }],
    ))
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
            if let Some(p) = pps
                .iter()
                .find(|p| p.optional || p.sufficient || p.condition.is_some())
            {
                let _ = p;
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
                return Err(fail_at(&i[1..], "expected '('"));
            }
            let (r, _) = expr(&i[2..])?;
            let (r, _) = match r.first() {
                Some(t) if t.is_op(")") => (&r[1..], ()),
                _ => return Err(fail_at(r, "expected ')'")),
            };
            for p in &mut pps {
                if p.condition.is_some() {
                    return Err(fail_at(r, "condition respecified"));
                }
                p.condition = Some(span);
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
        i = r;
        match i.first() {
            Some(t) if t.is_op(",") => i = &i[1..],
            Some(t) if t.is_op("{") || t.is_op("=") || t.is_op("+=") || t.is_op("}") => {
                return Ok((i, pps))
            }
            _ => return Err(fail_at(i, "expected one of ', { } = +='")),
        }
    }
}

/// `probe POINTS BODY`, or an alias definition (not supported yet).
fn probe(i: In) -> PResult<Item> {
    let (i, span) = kw("probe")(i)?;
    let (mut i, points) = probe_points(i)?;
    let mut alias = None;
    while let Some(t) = i.first().filter(|t| t.is_op("=") || t.is_op("+=")) {
        alias.get_or_insert(t.span);
        let (r, _) = probe_points(&i[1..])?;
        i = r;
    }
    if !peek_op(i, "{") {
        return Err(fail_next(i, "expected probe point specifier"));
    }
    let (mut i, body) = block(i)?;
    if let Some(aspan) = alias {
        if peek_op(i, ",") {
            let (r, _) = block(&i[1..])?;
            i = r;
        }
        let _ = aspan;
        let at = points.first().map(|p| p.span()).unwrap_or(span);
        return Ok((
            i,
            Item::Unsupported(Unsupported {
                feature: "probe aliases".into(),
                span: at,
            }),
        ));
    }
    Ok((i, Item::Probe(ProbeDecl { span, points, body })))
}

/// `global a [= lit], b[N], c% ...` (stap's `do_parse_global`).
fn global<'a>(i: In<'a>, seen: &mut Vec<String>) -> PResult<'a, Vec<Item>> {
    let (mut i, _) = kw("global")(i)?;
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
        };
        i = r;
        if peek_op(i, "%") {
            g.array = true;
            i = &i[1..];
        }
        if peek_op(i, "[") {
            let (r, (size, _)) = number_tok(&i[1..], false)?;
            if size <= 0 || size > i64::from(i32::MAX) {
                return Err(fail_at(r, "array size out of range"));
            }
            let (r, _) = op("]")(r)?;
            g.array = true;
            i = r;
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
            Some(t) if t.is_op(",") => i = &i[1..],
            _ => return Ok((i, out)),
        }
    }
}

/// `function name[:type](args)[:prio] body` (not supported yet; parsed to
/// keep going).
fn function(i: In) -> PResult<Item> {
    let (i, _) = kw("function")(i)?;
    let (mut i, (_, span)) = match i.first() {
        Some(t) if t.kind == TokKind::Ident => (&i[1..], (t.text.clone(), t.span)),
        _ => return Err(fail_next(i, "expected identifier")),
    };
    let type_ann = |i: In<'_>| -> Result<usize, nom::Err<PErr>> {
        if peek_op(i, ":") {
            match i.get(1) {
                Some(t) if t.is_kw("long") || t.is_kw("string") => Ok(2),
                _ => Err(fail_next(&i[1..], "expected 'string' or 'long'")),
            }
        } else {
            Ok(0)
        }
    };
    i = &i[type_ann(i)?..];
    let (mut r, _) = op("(")(i)?;
    if peek_op(r, ")") {
        r = &r[1..];
    } else {
        loop {
            let (r2, _) = ident(r)?;
            r = &r2[type_ann(r2)?..];
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
    if peek_op(r, ":") {
        let (r2, _) = number_tok(&r[1..], false)?;
        r = r2;
    }
    let r = match r.first() {
        Some(t) if t.kind == TokKind::Embedded => {
            return Err(nom::Err::Failure(PErr {
                rem: r.len(),
                msg: "embedded code in unprivileged script; need stap -g".into(),
                at: false,
            }))
        }
        _ => {
            IN_FUNCTION.with(|f| f.set(true));
            let res = block(r);
            IN_FUNCTION.with(|f| f.set(false));
            res?.0
        }
    };
    Ok((
        r,
        Item::Unsupported(Unsupported {
            feature: "functions".into(),
            span,
        }),
    ))
}

/// One top-level declaration.
fn item<'a>(i: In<'a>, globals: &mut Vec<String>) -> PResult<'a, Vec<Item>> {
    let Some(t) = i.first() else {
        return Ok((i, Vec::new()));
    };
    match (&t.kind, t.text.as_str()) {
        (TokKind::Keyword, "probe") => probe(i).map(|(r, p)| (r, vec![p])),
        (TokKind::Keyword, "global") => global(i, globals),
        (TokKind::Keyword, "function") => function(i).map(|(r, f)| (r, vec![f])),
        (TokKind::Keyword, "private") => {
            let rest = &i[1..];
            let (r, mut items) = if peek_kw(rest, "function") {
                function(rest).map(|(r, f)| (r, vec![f]))?
            } else if peek_kw(rest, "global") {
                global(rest, globals)?
            } else {
                return Err(fail_next(rest, "expected 'function' or identifier"));
            };
            items.clear();
            items.push(Item::Unsupported(Unsupported {
                feature: "private".into(),
                span: t.span,
            }));
            Ok((r, items))
        }
        (TokKind::Embedded, _) => Err(nom::Err::Failure(PErr {
            rem: i.len(),
            msg: "embedded code in unprivileged script; need stap -g".into(),
            at: false,
        })),
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
        *n += 1;
        match &mut x.kind {
            ExprKind::Call { args, .. } | ExprKind::Print { args, .. } => {
                args.iter_mut().for_each(|a| e(a, n))
            }
            ExprKind::Unary(_, a) | ExprKind::PreIncr(_, a) | ExprKind::PostIncr(_, a) => e(a, n),
            ExprKind::Binary(_, a, b)
            | ExprKind::Cmp(_, a, b)
            | ExprKind::And(a, b)
            | ExprKind::Or(a, b)
            | ExprKind::Concat(a, b)
            | ExprKind::Assign(_, a, b) => {
                e(a, n);
                e(b, n);
            }
            ExprKind::Ternary(a, b, c) => {
                e(a, n);
                e(b, n);
                e(c, n);
            }
            ExprKind::Num(_)
            | ExprKind::Str(_)
            | ExprKind::Var(_)
            | ExprKind::Target(_)
            | ExprKind::Unsupported(_) => {}
        }
    }
    fn s(x: &mut Stmt, n: &mut u32) {
        match &mut x.kind {
            StmtKind::Block(b) => b.iter_mut().for_each(|x| s(x, n)),
            StmtKind::Expr(x) => e(x, n),
            StmtKind::If { cond, then, els } => {
                e(cond, n);
                s(then, n);
                if let Some(x) = els {
                    s(x, n);
                }
            }
            StmtKind::Loop {
                init,
                cond,
                incr,
                body,
            } => {
                if let Some(x) = init {
                    e(x, n);
                }
                e(cond, n);
                if let Some(x) = incr {
                    e(x, n);
                }
                s(body, n);
            }
            _ => {}
        }
    }
    let mut n = 0;
    for it in &mut script.items {
        if let Item::Probe(p) = it {
            s(&mut p.body, &mut n);
        }
    }
    n
}

/// Parses `tokens` into a script, reporting parse errors (and the
/// not-supported preprocessor features) into `diags`.
pub fn parse(tokens: &[Token], diags: &mut Diags) -> Script {
    DEPTH.with(|d| d.set(0));
    IN_FUNCTION.with(|f| f.set(false));
    let mut script = Script::default();
    // The preprocessor runs before the parser in stap; it is not here yet.
    // Macros expand before conditionals, so they are reported first.
    if let Some(t) = tokens.iter().find(|t| t.is_op("@define")) {
        diags.push(Diagnostic::unsupported("macros (@define)", t.span));
        return script;
    }
    if let Some(t) = tokens.iter().find(|t| t.is_op("%(")) {
        diags.push(Diagnostic::unsupported(
            "preprocessor conditionals (%( %))",
            t.span,
        ));
        return script;
    }
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
