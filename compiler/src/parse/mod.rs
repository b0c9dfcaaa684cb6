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
//! `Target::guru` (kept for stap's parse-only test suites): one error per
//! script, at its first block (`NO_GURU_EMBEDDED`), since stapvm runs only
//! verified bytecode and has no guru mode. Runs next: `passes::resolve`, which rejects what the
//! later passes cannot handle yet.
//!
//! Every parser is a nom parser `fn(In) -> PResult<T>` over `In = &[Token]`
//! with the error type `PErr`, which remembers how far the parser got and
//! stap's message. Choice points look at the next token (as stap's parser
//! does) instead of backtracking, so each error lands on the token stap
//! names. Nesting depth is bounded so no input can exhaust the stack.
//!
//! This file holds the entry points (`parse`, `parse_for`), the error type,
//! the nesting bound, the token-cursor helpers every parser shares (`op`,
//! `kw`, `ident`, literals) and the error recovery between declarations;
//! the grammar itself is in `expr.rs`, `stmt.rs` and `decl.rs`.
pub mod lexer;
pub mod preprocess;

mod decl;
pub(crate) mod expr;
mod stmt;

use crate::ast::*;
use crate::diag::{Diagnostic, Diags};
use lexer::{Junk, TokKind, Token};
use nom::error::{ErrorKind, ParseError};
use std::cell::Cell;

pub use expr::expr;
pub(crate) use expr::STAT_EXTRACTORS;
pub use stmt::statement;

use decl::item;

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

/// Why guru-only constructs are refused, and the embedded-C refusal
/// (defined once, in `crate::guru`).
pub use crate::guru::{NO_GURU, NO_GURU_EMBEDDED};

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
        Some(t) if t.kind == TokKind::Ident => Ok((&i[1..], (t.text.owned(), t.span))),
        _ => Err(fail_next(i, "expected identifier")),
    }
}

/// Decodes the escapes stap's lexer kept in a string token (`\n`, `\t`,
/// `\\`, octal `\ooo`, hex `\xHH` ...) to raw bytes, as the C compiler
/// would: `"\377"` is the one byte 0xff.
pub fn decode_string(raw: &str) -> Vec<u8> {
    decode_bytes(raw.as_bytes())
}

/// `decode_string` of the bytes of a string token's text.
fn decode_bytes(b: &[u8]) -> Vec<u8> {
    if !b.contains(&b'\\') {
        return b.to_vec();
    }
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
            let rest = &i[1..];
            if !rest.first().is_some_and(|n| n.kind == TokKind::Str) {
                return Ok((rest, (decode_bytes(t.text.as_bytes()), t.span)));
            }
            let mut raw = t.text.as_bytes().to_vec();
            let mut rest = rest;
            while let Some(n) = rest.first().filter(|n| n.kind == TokKind::Str) {
                raw.extend_from_slice(n.text.as_bytes());
                rest = &rest[1..];
            }
            Ok((rest, (decode_bytes(&raw), t.span)))
        }
        _ => Err(fail_next(i, "expected literal string")),
    }
}

/// Parses number text as stap does (`strtoull(s, 0)`): decimal, `0x` hex,
/// leading-0 octal, at most 2^64-1, wrapping to negative above 2^63-1.
pub fn parse_number(s: &str, neg: bool) -> Option<i64> {
    parse_number_bytes(s.as_bytes(), neg)
}

/// `parse_number` of a number token's bytes (`from_str_radix`'s rules:
/// an optional `+`, then at least one digit of the radix).
fn parse_number_bytes(s: &[u8], neg: bool) -> Option<i64> {
    fn radix(d: &[u8], r: u32) -> Option<u64> {
        let d = d.strip_prefix(b"+").unwrap_or(d);
        if d.is_empty() {
            return None;
        }
        let mut v: u64 = 0;
        for &c in d {
            // `char::to_digit`.
            let x = match c {
                b'0'..=b'9' => u32::from(c - b'0'),
                b'a'..=b'z' => u32::from(c - b'a') + 10,
                b'A'..=b'Z' => u32::from(c - b'A') + 10,
                _ => return None,
            };
            if x >= r {
                return None;
            }
            v = v.checked_mul(u64::from(r))?.checked_add(u64::from(x))?;
        }
        Some(v)
    }
    let v: u64 = if let Some(h) = s.strip_prefix(b"0x").or_else(|| s.strip_prefix(b"0X")) {
        radix(h, 16)?
    } else if s.len() > 1 && s[0] == b'0' {
        radix(&s[1..], 8)?
    } else {
        radix(s, 10)?
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
        Some(t) if t.kind == TokKind::Number => match parse_number_bytes(t.text.as_bytes(), neg) {
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

/// A committed error at the first token of `i` naming it (`at:`).
fn fail_tok(i: In, msg: impl Into<String>) -> nom::Err<PErr> {
    nom::Err::Failure(PErr {
        rem: i.len(),
        msg: msg.into(),
        at: true,
    })
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
///
/// The walk visits what `Expr::children_mut` and `Stmt::children_mut`
/// list, in their order (a test checks it), without building their
/// vectors.
pub(crate) fn number_exprs(script: &mut Script) -> u32 {
    fn e(x: &mut Expr, n: &mut u32) {
        use ExprKind::*;
        x.id = *n;
        *n = n.saturating_add(1);
        match &mut x.kind {
            Num(_) | Str(_) | Var(_) | Target(_) | Unsupported(_) => {}
            Call { args, .. }
            | Print { args, .. }
            | Format { args, .. }
            | Stat { args, .. }
            | AtOp { args, .. } => {
                for a in args {
                    e(a, n);
                }
            }
            Unary(_, a) | PreIncr(_, a) | PostIncr(_, a) | AddrOf(a) => e(a, n),
            Regex { lhs, .. } => e(lhs, n),
            Binary(_, a, b)
            | Cmp(_, a, b)
            | And(a, b)
            | Or(a, b)
            | Concat(a, b)
            | Assign(_, a, b)
            | Append(a, b)
            | Ushr(a, b) => {
                e(a, n);
                e(b, n);
            }
            Ternary(a, b, c) => {
                e(a, n);
                e(b, n);
                e(c, n);
            }
            Index { base, keys } => {
                e(base, n);
                for k in keys.iter_mut().flatten() {
                    e(k, n);
                }
            }
            In { keys, array } => {
                for k in keys.iter_mut().flatten() {
                    e(k, n);
                }
                e(array, n);
            }
            Deref { base, comps } => {
                e(base, n);
                for c in comps {
                    if let TargetComp::Index(x) = c {
                        e(x, n);
                    }
                }
            }
        }
    }
    fn s(x: &mut Stmt, n: &mut u32) {
        match &mut x.kind {
            StmtKind::Null
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Next
            | StmtKind::Unsupported(_) => {}
            StmtKind::Block(b) => {
                for y in b {
                    s(y, n);
                }
            }
            StmtKind::Expr(x) | StmtKind::Delete(x) => e(x, n),
            StmtKind::Return(x) => {
                if let Some(x) = x {
                    e(x, n);
                }
            }
            StmtKind::If { cond, then, els } => {
                e(cond, n);
                s(then, n);
                if let Some(x) = els {
                    s(x, n);
                }
            }
            StmtKind::Loop(l) => {
                let (init, cond, incr, body) = (&mut l.init, &mut l.cond, &mut l.incr, &mut l.body);
                if let Some(x) = init {
                    e(x, n);
                }
                e(cond, n);
                if let Some(x) = incr {
                    e(x, n);
                }
                s(body, n);
            }
            StmtKind::Foreach(f) => {
                e(&mut f.array, n);
                if let Some(keys) = &mut f.slice {
                    for k in keys.iter_mut().flatten() {
                        e(k, n);
                    }
                }
                if let Some(x) = &mut f.limit {
                    e(x, n);
                }
                s(&mut f.body, n);
            }
            StmtKind::Try { body, handler, .. } => {
                s(body, n);
                s(handler, n);
            }
        }
    }
    let mut n = 0;
    number_roots(script, &mut n, s, e);
    n
}

/// The order `number_exprs` numbers a script's parts in, with `s` the walk
/// of a statement and `e` of an expression: the probe handlers first (so
/// their ids do not depend on the other declarations), then per item its
/// probe-point conditions, a function's body, an alias's points, body and
/// epilogue.
pub(crate) fn number_roots(
    script: &mut Script,
    n: &mut u32,
    s: fn(&mut Stmt, &mut u32),
    e: fn(&mut Expr, &mut u32),
) {
    let points = |pps: &mut [ProbePoint], n: &mut u32| {
        for p in pps {
            if let Some(c) = &mut p.cond {
                e(c, n);
            }
        }
    };
    for it in &mut script.items {
        if let Item::Probe(p) = it {
            s(&mut p.body, n);
        }
    }
    for it in &mut script.items {
        match it {
            Item::Probe(p) => points(&mut p.points, n),
            Item::Function(f) => {
                if let Some(b) = &mut f.body {
                    s(b, n);
                }
            }
            Item::Alias(a) => {
                points(&mut a.points, n);
                s(&mut a.body, n);
                if let Some(b) = &mut a.epilogue {
                    s(b, n);
                }
            }
            Item::Global(_) | Item::Embedded(_) | Item::Unsupported(_) => {}
        }
    }
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
    if let Some(embedded) = preprocess::plain(tokens) {
        return parse_tokens(tokens, embedded, target.guru, diags);
    }
    let (tokens, warnings, error) = preprocess::preprocess(tokens, target);
    for w in warnings {
        diags.push(w);
    }
    if let Some(e) = error {
        diags.push(e);
        return Script::default();
    }
    let embedded = tokens.iter().position(|t| t.kind == TokKind::Embedded);
    parse_tokens(&tokens, embedded, target.guru, diags)
}

/// The parser proper, over preprocessed tokens; `embedded` is the index
/// of the first embedded-C token.
fn parse_tokens(
    tokens: &[Token],
    embedded: Option<usize>,
    guru: bool,
    diags: &mut Diags,
) -> Script {
    DEPTH.with(|d| d.set(0));
    IN_FUNCTION.with(|f| f.set(false));
    GURU.with(|g| g.set(guru));
    if !guru {
        if let Some(t) = embedded.and_then(|k| tokens.get(k)) {
            diags.push(Diagnostic {
                at: true,
                ..Diagnostic::parse(NO_GURU_EMBEDDED, Some(t.span))
            });
        }
    }
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
