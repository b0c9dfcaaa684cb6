//! The lexer: script text to tokens with byte spans, following stap's
//! `lexer::scan` (parse.cxx) rule by rule, written with nom combinators.
//!
//! Needs: the source text and the command-line arguments (`$1`/`@1` are
//! pasted here, at lexing time, as stap does). Produces a `Vec<Token>`;
//! malformed input becomes `Junk` tokens, never an error, so the parser (which
//! runs next, over the tokens) reports every problem at a token.
//!
//! Why a lexer before nom instead of combinators straight on `&str`: stap's
//! grammar is defined on tokens (its error messages name tokens: `saw:
//! identifier 'foo' at x.stp:3:5`), probe-point names are glued from adjacent
//! tokens depending on the whitespace between them, and arguments are pasted
//! into the token stream. One token stream gives the parser all of that and
//! keeps whitespace and comments out of every grammar rule.
use crate::ast::Span;
use nom::{
    branch::alt,
    bytes::complete::{tag, take_until, take_while, take_while1},
    character::complete::{anychar, char, not_line_ending},
    combinator::{recognize, rest},
    sequence::pair,
    IResult,
};

/// The kind of a token (stap's `token_type`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokKind {
    /// Name (also `$var`).
    Ident,
    /// One of stap's keywords.
    Keyword,
    /// Number text, validated by the parser.
    Number,
    /// String literal; `text` is the raw content between the quotes.
    Str,
    /// Operator or punctuation (also `@word`s).
    Op,
    /// `%{ ... %}`; `text` is the code.
    Embedded,
    /// Something the lexer could not make sense of.
    Junk(Junk),
}

/// Why a token is junk (stap's `token_junk_type`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Junk {
    /// A character outside the language.
    Unknown,
    /// `"...` without the closing quote on the same line.
    UnclosedQuote,
    /// `%{` without `%}`.
    UnclosedEmbedded,
    /// `$N` / `@N` with N out of range; holds the number of arguments.
    InvalidArg(usize),
    /// `$N` inside a pasted argument.
    NestedArg,
}

/// One token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// Kind.
    pub kind: TokKind,
    /// Content as stap keeps it (string contents raw, escapes undecoded).
    pub text: String,
    /// Where it is in the source (for pasted arguments: the `$N`).
    pub span: Span,
    /// Whitespace or a comment precedes it.
    pub ws_before: bool,
}

impl Token {
    /// True when this is the operator `s`.
    pub fn is_op(&self, s: &str) -> bool {
        self.kind == TokKind::Op && self.text == s
    }

    /// True when this is the keyword `s`.
    pub fn is_kw(&self, s: &str) -> bool {
        self.kind == TokKind::Keyword && self.text == s
    }

    /// The token as stap describes it: `identifier 'foo'`, `keyword`,
    /// `string 'abc'` (without the location).
    pub fn describe(&self) -> String {
        let kind = match self.kind {
            TokKind::Ident => "identifier",
            TokKind::Keyword => return "keyword".into(),
            TokKind::Number => "number",
            TokKind::Str => "string",
            TokKind::Op => "operator",
            TokKind::Embedded => return "embedded-code".into(),
            TokKind::Junk(_) => "junk",
        };
        let text: String = self
            .text
            .chars()
            .map(|c| if (' '..='~').contains(&c) { c } else { '?' })
            .collect();
        format!("{kind} '{text}'")
    }
}

/// stap's keywords (parse.cxx `keywords`).
pub const KEYWORDS: &[&str] = &[
    "probe", "global", "private", "function", "if", "else", "for", "foreach", "in", "limit",
    "return", "delete", "while", "break", "continue", "next", "string", "long", "try", "catch",
];

/// Operators longer than one character, longest first (`lexer::scan`).
const LONG_OPS: &[&str] = &[
    "<<<", ">>>", "<<=", ">>=", "==", "!=", "<=", ">=", "=~", "!~", "+=", "-=", "*=", "/=", "%=",
    "&=", "^=", "|=", ".=", "&&", "||", "++", "--", "->", "<<", ">>", "%(", "%?", "%:", "%)",
];

/// Whether `kw` is one of `KEYWORDS` (a `match`: no string compared
/// with every keyword).
fn is_keyword(kw: &str) -> bool {
    matches!(
        kw,
        "probe"
            | "global"
            | "private"
            | "function"
            | "if"
            | "else"
            | "for"
            | "foreach"
            | "in"
            | "limit"
            | "return"
            | "delete"
            | "while"
            | "break"
            | "continue"
            | "next"
            | "string"
            | "long"
            | "try"
            | "catch"
    )
}

/// Skips whitespace and comments; true when anything was skipped.
fn skip_trivia(mut i: &str) -> (&str, bool) {
    let mut ate = false;
    loop {
        // Most tokens follow no trivia, or blanks only.
        let blanks = i.bytes().take_while(u8::is_ascii_whitespace).count();
        if blanks > 0 {
            ate = true;
            i = &i[blanks..];
        }
        if !i.starts_with(['#', '/']) {
            return (i, ate);
        }
        let r: IResult<&str, &str> = alt((
            take_while1(|c: char| c.is_ascii_whitespace()),
            recognize(pair(char('#'), not_line_ending)),
            recognize(pair(tag("//"), not_line_ending)),
            recognize(pair(tag("/*"), alt((take_until("*/"), rest)))),
        ))(i);
        match r {
            Ok((rest_i, skipped)) => {
                ate = true;
                // A block comment: also eat its "*/" if present.
                i = if skipped.starts_with("/*") {
                    rest_i.strip_prefix("*/").unwrap_or(rest_i)
                } else {
                    rest_i
                };
            }
            Err(_) => return (i, ate),
        }
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '$' || c == '@'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// A word: identifier, keyword, `$var` or `@word`.
fn word(i: &str) -> IResult<&str, (TokKind, String)> {
    let (rest, w) = recognize(pair(
        take_while_m_n_first(is_ident_start),
        take_while(is_ident_char),
    ))(i)?;
    let kind = if w.starts_with('@') {
        TokKind::Op
    } else if is_keyword(w) {
        TokKind::Keyword
    } else {
        TokKind::Ident
    };
    Ok((rest, (kind, w.to_string())))
}

/// Exactly one character satisfying `f` (nom's `take_while_m_n` would
/// scan the whole run of such characters first: quadratic on `((((`).
fn take_while_m_n_first(f: fn(char) -> bool) -> impl Fn(&str) -> IResult<&str, &str> {
    move |i: &str| match i.chars().next() {
        Some(c) if f(c) => Ok((&i[c.len_utf8()..], &i[..c.len_utf8()])),
        _ => Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::TakeWhileMN,
        ))),
    }
}

/// A number: a digit, then letters and digits (checked by the parser).
fn number(i: &str) -> IResult<&str, (TokKind, String)> {
    let (rest, n) = recognize(pair(
        take_while_m_n_first(|c| c.is_ascii_digit()),
        take_while(|c: char| c.is_ascii_alphanumeric()),
    ))(i)?;
    Ok((rest, (TokKind::Number, n.to_string())))
}

/// A string literal on one line; backslash escapes kept as written.
fn string(i: &str) -> IResult<&str, (TokKind, String)> {
    let (mut rest, _) = char('"')(i)?;
    let mut content = String::new();
    loop {
        match rest.chars().next() {
            None | Some('\n') => {
                return Ok((
                    rest,
                    (TokKind::Junk(Junk::UnclosedQuote), format!("\"{content}")),
                ))
            }
            Some('"') => return Ok((&rest[1..], (TokKind::Str, content))),
            Some('\\') => {
                // Escapes C understands stay as written; any other escaped
                // character stands for itself (stap's lexer).
                rest = &rest[1..];
                if let Some(c) = rest.chars().next() {
                    if "xabtnvfr01234567\\".contains(c) {
                        content.push('\\');
                    }
                    content.push(c);
                    rest = &rest[c.len_utf8()..];
                }
            }
            Some(c) => {
                content.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
}

/// `%{ ... %}` embedded C (always refused by the parser).
fn embedded(i: &str) -> IResult<&str, (TokKind, String)> {
    let (i, _) = tag("%{")(i)?;
    match take_until::<_, _, nom::error::Error<&str>>("%}")(i) {
        Ok((rest, code)) => Ok((&rest[2..], (TokKind::Embedded, code.to_string()))),
        Err(_) => Ok((
            "",
            (TokKind::Junk(Junk::UnclosedEmbedded), format!("%{{{i}")),
        )),
    }
}

/// An operator: the longest of `LONG_OPS`, else one punctuation character.
fn operator(i: &str) -> IResult<&str, (TokKind, String)> {
    let first = i.as_bytes().first().copied();
    for op in LONG_OPS {
        if op.as_bytes().first().copied() != first {
            continue;
        }
        if let Some(rest) = i.strip_prefix(op) {
            return Ok((rest, (TokKind::Op, (*op).to_string())));
        }
    }
    let (rest, c) = take_while_m_n_first(|c| c.is_ascii_punctuation())(i)?;
    Ok((rest, (TokKind::Op, c.to_string())))
}

/// Anything else: one junk character.
fn junk(i: &str) -> IResult<&str, (TokKind, String)> {
    let (rest, c) = anychar(i)?;
    Ok((
        rest,
        (TokKind::Junk(Junk::Unknown), format!("\\x{:02x}", c as u32)),
    ))
}

/// `$N` / `@N` / `$#` / `@#`: the argument index (0 for `#`) and the quote flag.
fn arg_ref(i: &str) -> IResult<&str, (bool, Option<&str>)> {
    let (rest, sigil) = alt((char('$'), char('@')))(i)?;
    let (rest, what) = alt((tag("#"), take_while1(|c: char| c.is_ascii_digit())))(rest)?;
    Ok((
        rest,
        (sigil == '@', if what == "#" { None } else { Some(what) }),
    ))
}

/// Quotes `s` as stap's `lex_cast_qstring` does (content only, no quotes).
fn quote_arg(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out
}

/// Splits `source` into tokens; `args` are the script arguments for `$N`
/// and `@N`.
pub fn lex(source: &str, args: &[String]) -> Vec<Token> {
    let mut out = Vec::new();
    lex_into(source, args, None, &mut out);
    out
}

/// Lexes `source`; when `pasted` is set, every token gets that span (the
/// `$N` it came from) and `$N` inside is junk.
fn lex_into(source: &str, args: &[String], pasted: Option<Span>, out: &mut Vec<Token>) {
    let mut i = source;
    loop {
        let (rest, ws) = skip_trivia(i);
        i = rest;
        if i.is_empty() {
            return;
        }
        let lo = source.len() - i.len();
        // Command-line arguments are pasted into the token stream.
        let sigil = i.starts_with(['$', '@']);
        if let Some(Ok((rest, (quoted, idx)))) = sigil.then(|| arg_ref(i)) {
            let here = Span::new(lo, source.len() - rest.len());
            let span = pasted.unwrap_or(here);
            let text = &source[lo..source.len() - rest.len()];
            if pasted.is_some() {
                out.push(Token {
                    kind: TokKind::Junk(Junk::NestedArg),
                    text: text.to_string(),
                    span,
                    ws_before: ws,
                });
                i = rest;
                continue;
            }
            let value = match idx {
                None => Some(args.len().to_string()),
                Some(d) => d
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n >= 1 && *n <= args.len())
                    .map(|n| args[n - 1].clone()),
            };
            i = rest;
            match value {
                None => out.push(Token {
                    kind: TokKind::Junk(Junk::InvalidArg(args.len())),
                    text: text.to_string(),
                    span,
                    ws_before: ws,
                }),
                Some(v) if quoted => out.push(Token {
                    kind: TokKind::Str,
                    text: quote_arg(&v),
                    span,
                    ws_before: ws,
                }),
                Some(v) => {
                    let first = out.len();
                    lex_into(&v, args, Some(span), out);
                    if let Some(t) = out.get_mut(first) {
                        t.ws_before = ws;
                    }
                }
            }
            continue;
        }
        // `alt((word, number, string, embedded, operator, junk))`, the
        // first that can match picked by the first character.
        let c = i.chars().next().unwrap_or(' ');
        let r = if is_ident_start(c) {
            word(i)
        } else if c.is_ascii_digit() {
            number(i)
        } else if c == '"' {
            string(i)
        } else if i.starts_with("%{") {
            embedded(i)
        } else {
            alt((operator, junk))(i)
        };
        let Ok((rest, (kind, text))) = r else {
            return;
        };
        let hi = source.len() - rest.len();
        out.push(Token {
            kind,
            text,
            span: pasted.unwrap_or(Span::new(lo, hi)),
            ws_before: ws,
        });
        i = rest;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(TokKind, String)> {
        lex(src, &[])
            .into_iter()
            .map(|t| (t.kind, t.text))
            .collect()
    }

    #[test]
    fn words_numbers_strings_operators() {
        use TokKind::*;
        assert_eq!(
            kinds("probe x$y 0x1F \"a\\n\" <<< >>= .= @count $r"),
            vec![
                (Keyword, "probe".into()),
                (Ident, "x$y".into()),
                (Number, "0x1F".into()),
                (Str, "a\\n".into()),
                (Op, "<<<".into()),
                (Op, ">>=".into()),
                (Op, ".=".into()),
                (Op, "@count".into()),
                (Ident, "$r".into()),
            ]
        );
    }

    #[test]
    fn comments_are_skipped_and_mark_whitespace() {
        let t = lex("a# c\nb//x\n/* y */c/* open", &[]);
        assert_eq!(t.len(), 3);
        assert!(t[1].ws_before && t[2].ws_before && !t[0].ws_before);
        assert_eq!(t[2].span, Span::new(17, 18));
    }

    #[test]
    fn junk_tokens() {
        let t = lex("\"abc\n%{ x", &[]);
        assert_eq!(t[0].kind, TokKind::Junk(Junk::UnclosedQuote));
        assert_eq!(t[1].kind, TokKind::Junk(Junk::UnclosedEmbedded));
        assert_eq!(lex("\u{1}", &[])[0].text, "\\x01");
    }

    #[test]
    fn arguments_are_pasted() {
        let args = vec!["1 + 2".to_string(), "a\"b".to_string()];
        let t = lex("$1 @2 $# $3", &args);
        let k: Vec<_> = t.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(k, vec!["1", "+", "2", "a\"b", "2", "$3"]);
        assert_eq!(t[1].span, Span::new(0, 2));
        assert_eq!(t[5].kind, TokKind::Junk(Junk::InvalidArg(2)));
    }

    #[test]
    fn keywords_are_the_listed_ones() {
        for k in KEYWORDS {
            assert!(is_keyword(k), "{k}");
            assert_eq!(lex(k, &[])[0].kind, TokKind::Keyword);
        }
        for w in ["probes", "Global", "fo", "catchall", "@if", "x"] {
            assert!(!is_keyword(w), "{w}");
        }
    }

    #[test]
    fn trivia_and_first_characters() {
        use TokKind::*;
        assert_eq!(
            kinds("  a #c\r\n\t// d\n/* e */ 1 \"s\" %{ x %} $y @z ; \u{e9}"),
            vec![
                (Ident, "a".into()),
                (Number, "1".into()),
                (Str, "s".into()),
                (Embedded, " x ".into()),
                (Ident, "$y".into()),
                (Op, "@z".into()),
                (Op, ";".into()),
                (Junk(super::Junk::Unknown), "\\xe9".into()),
            ]
        );
        // A `#` comment with a lone CR is no comment for nom's
        // not_line_ending: `#` is an operator, as before.
        assert_eq!(lex("#a\rb\n", &[])[0].text, "#");
    }

    #[test]
    fn longest_operator_match() {
        let t: Vec<_> = lex("a<<=b>>c", &[]).into_iter().map(|t| t.text).collect();
        assert_eq!(t, vec!["a", "<<=", "b", ">>", "c"]);
    }
}
