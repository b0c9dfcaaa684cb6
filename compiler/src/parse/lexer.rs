//! The lexer: script text to tokens with byte spans, following stap's
//! `lexer::scan` (parse.cxx) rule by rule.
//!
//! Needs: the source text and the command-line arguments (`$1`/`@1` are
//! pasted here, at lexing time, as stap does). Produces a `Vec<Token>`;
//! malformed input becomes `Junk` tokens, never an error, so the parser (which
//! runs next, over the tokens) reports every problem at a token.
//!
//! Why a lexer before the parser instead of combinators straight on `&str`:
//! stap's grammar is defined on tokens (its error messages name tokens: `saw:
//! identifier 'foo' at x.stp:3:5`), probe-point names are glued from adjacent
//! tokens depending on the whitespace between them, and arguments are pasted
//! into the token stream. One token stream gives the parser all of that and
//! keeps whitespace and comments out of every grammar rule.
//!
//! Why byte loops instead of nom combinators (which this lexer was first
//! written with): every token starts with an ASCII byte that decides its
//! kind, and every rule scans a run of ASCII classes, so indexing the bytes
//! does the same work in a fraction of the instructions (the lexer runs
//! over the script, the tapset library and the generated tapset text on
//! every compile). A token's text is a `Text`: operators and keywords are
//! static strings, short names and numbers are stored inline, so most
//! tokens allocate nothing.
//!
//! The rules, as stap's: blanks are ASCII whitespace; `#` and `//` comments
//! run to the end of the line (as before, a comment whose line ends in a
//! lone `\r` is not a comment: its `#` or `/` is an operator); `/* */` does
//! not nest and an open one runs to the end; a word is `[A-Za-z_$@]`
//! then `[A-Za-z0-9_$]*` (an `@word` is an operator); a number is a digit
//! then letters and digits (checked by the parser); a string is one line
//! (a backslash-newline continues it) with its escapes kept as written;
//! operators are the longest of `LONG_OPS`, else one ASCII punctuation
//! character; anything else is a junk character.
use crate::ast::Span;
use std::borrow::Cow;
use std::fmt;

/// Longest text a `Text` holds without a heap allocation.
const INLINE: usize = 22;

/// A token's text: a static string (operators, keywords), a short string
/// stored inline (names, numbers), or a heap string (the rest). Compares,
/// hashes and prints as its `str`.
#[derive(Clone)]
pub struct Text(Repr);

#[derive(Clone)]
enum Repr {
    Static(&'static str),
    Inline(u8, [u8; INLINE]),
    Heap(Box<str>),
}

impl Text {
    /// A static text.
    pub const fn from_static(s: &'static str) -> Text {
        Text(Repr::Static(s))
    }

    /// `s`, inline when short enough.
    pub fn new(s: &str) -> Text {
        let b = s.as_bytes();
        if b.len() <= INLINE {
            let mut buf = [0u8; INLINE];
            buf[..b.len()].copy_from_slice(b);
            Text(Repr::Inline(b.len() as u8, buf))
        } else {
            Text(Repr::Heap(s.into()))
        }
    }

    /// `source[lo..hi]` (on char boundaries); a short text is copied as a
    /// fixed-size block when the source has that many bytes left (the
    /// bytes past its length are never read).
    #[inline(always)]
    fn from_source(source: &str, lo: usize, hi: usize) -> Text {
        let b = source.as_bytes();
        match b.get(lo..lo + INLINE) {
            Some(block) if hi - lo <= INLINE => {
                let mut buf = [0u8; INLINE];
                buf.copy_from_slice(block);
                Text(Repr::Inline((hi - lo) as u8, buf))
            }
            _ => Text::new(&source[lo..hi]),
        }
    }

    /// The bytes of the text (no UTF-8 check: for comparisons).
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Static(s) => s.as_bytes(),
            Repr::Inline(n, buf) => &buf[..usize::from(*n)],
            Repr::Heap(s) => s.as_bytes(),
        }
    }

    /// The text as a new `String`.
    #[inline]
    pub fn owned(&self) -> String {
        self.as_str().to_owned()
    }

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Static(s) => s,
            // Inline text was copied whole from a `str`.
            Repr::Inline(n, buf) => std::str::from_utf8(&buf[..usize::from(*n)]).unwrap_or(""),
            Repr::Heap(s) => s,
        }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        if s.len() <= INLINE {
            Text::new(&s)
        } else {
            Text(Repr::Heap(s.into_boxed_str()))
        }
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text::new(s)
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    #[inline]
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for Text {
    #[inline]
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl std::hash::Hash for Text {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_str().hash(h);
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind of a token (stap's `token_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Junk {
    /// A character outside the language.
    Unknown,
    /// `"...` without the closing quote on the same line.
    UnclosedQuote,
    /// `%{` without `%}`.
    UnclosedEmbedded,
    /// `$N` / `@N` with N out of range; holds the number of arguments.
    InvalidArg(u32),
    /// `$N` inside a pasted argument.
    NestedArg,
}

/// One token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// Kind.
    pub kind: TokKind,
    /// Content as stap keeps it (string contents raw, escapes undecoded).
    pub text: Text,
    /// Where it is in the source (for pasted arguments: the `$N`).
    pub span: Span,
    /// Whitespace or a comment precedes it.
    pub ws_before: bool,
}

impl Token {
    /// True when this is the operator `s`.
    #[inline]
    pub fn is_op(&self, s: &str) -> bool {
        self.kind == TokKind::Op && self.text.as_bytes() == s.as_bytes()
    }

    /// True when this is the keyword `s`.
    #[inline]
    pub fn is_kw(&self, s: &str) -> bool {
        self.kind == TokKind::Keyword && self.text.as_bytes() == s.as_bytes()
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

/// Operators longer than one character, longest first (`lexer::scan`);
/// `operator` matches them.
pub const LONG_OPS: &[&str] = &[
    "<<<", ">>>", "<<=", ">>=", "==", "!=", "<=", ">=", "=~", "!~", "+=", "-=", "*=", "/=", "%=",
    "&=", "^=", "|=", ".=", "&&", "||", "++", "--", "->", "<<", ">>", "%(", "%?", "%:", "%)",
];

/// `kw` as the static keyword when it is one of `KEYWORDS` (a `match`: no
/// string compared with every keyword).
fn keyword(kw: &str) -> Option<&'static str> {
    Some(match kw {
        "probe" => "probe",
        "global" => "global",
        "private" => "private",
        "function" => "function",
        "if" => "if",
        "else" => "else",
        "for" => "for",
        "foreach" => "foreach",
        "in" => "in",
        "limit" => "limit",
        "return" => "return",
        "delete" => "delete",
        "while" => "while",
        "break" => "break",
        "continue" => "continue",
        "next" => "next",
        "string" => "string",
        "long" => "long",
        "try" => "try",
        "catch" => "catch",
        _ => return None,
    })
}

/// Whether `kw` is one of `KEYWORDS`.
#[cfg(test)]
fn is_keyword(kw: &str) -> bool {
    keyword(kw).is_some()
}

/// The end of a `#` or `//` comment whose text starts at `p`: the first
/// `\n` or `\r\n` (end of input: the end). `None` at a lone `\r`: nom's
/// `not_line_ending`, which this lexer was written with, refuses it, and
/// the comment is then no comment.
fn line_end(b: &[u8], p: usize) -> Option<usize> {
    match b[p..].iter().position(|&c| c == b'\n' || c == b'\r') {
        None => Some(b.len()),
        Some(k) if b[p + k] == b'\n' || b.get(p + k + 1) == Some(&b'\n') => Some(p + k),
        Some(_) => None,
    }
}

/// Skips whitespace and comments from `p`; the next position, and true
/// when anything was skipped.
fn skip_trivia(b: &[u8], start: usize) -> (usize, bool) {
    let mut p = start;
    loop {
        p = run(b, p, WS);
        let next = match (b.get(p), b.get(p + 1)) {
            (Some(b'#'), _) => line_end(b, p + 1),
            (Some(b'/'), Some(b'/')) => line_end(b, p + 2),
            (Some(b'/'), Some(b'*')) => {
                // Up to and with the first "*/" after the "/*", or the end.
                let mut q = p + 2;
                loop {
                    match b[q..].iter().position(|&c| c == b'*') {
                        None => break Some(b.len()),
                        Some(k) if b.get(q + k + 1) == Some(&b'/') => break Some(q + k + 2),
                        Some(k) => q += k + 1,
                    }
                }
            }
            _ => None,
        };
        match next {
            Some(q) => p = q,
            None => return (p, p != start),
        }
    }
}

/// `CLASS` bit: ASCII whitespace.
const WS: u8 = 1;
/// `CLASS` bit: a word's first character, `[A-Za-z_$@]`.
const WORD_START: u8 = 2;
/// `CLASS` bit: a word's other characters, `[A-Za-z0-9_$]`.
const WORD: u8 = 4;
/// `CLASS` bit: a number's characters after the first, `[A-Za-z0-9]`.
const ALNUM: u8 = 8;

/// The character classes of each byte (non-ASCII bytes: none).
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        let mut k = 0;
        if b.is_ascii_whitespace() {
            k |= WS;
        }
        if b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b == b'@' {
            k |= WORD_START;
        }
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'$' {
            k |= WORD;
        }
        if b.is_ascii_alphanumeric() {
            k |= ALNUM;
        }
        t[c] = k;
        c += 1;
    }
    t
};

/// Whether byte `c` is in class `k`.
#[inline(always)]
fn is(c: u8, k: u8) -> bool {
    CLASS[usize::from(c)] & k != 0
}

/// The end of the run of class-`k` bytes from `p`.
#[inline(always)]
fn run(b: &[u8], mut p: usize, k: u8) -> usize {
    while p < b.len() && is(b[p], k) {
        p += 1;
    }
    p
}

/// The operator at `b[p..]`: the longest of `LONG_OPS`, else one ASCII
/// punctuation character; `None` for anything else.
fn operator(b: &[u8], p: usize) -> Option<&'static str> {
    let c = b[p];
    let c1 = b.get(p + 1).copied().unwrap_or(0);
    let c2 = b.get(p + 2).copied().unwrap_or(0);
    Some(match (c, c1, c2) {
        (b'<', b'<', b'<') => "<<<",
        (b'>', b'>', b'>') => ">>>",
        (b'<', b'<', b'=') => "<<=",
        (b'>', b'>', b'=') => ">>=",
        (b'=', b'=', _) => "==",
        (b'!', b'=', _) => "!=",
        (b'<', b'=', _) => "<=",
        (b'>', b'=', _) => ">=",
        (b'=', b'~', _) => "=~",
        (b'!', b'~', _) => "!~",
        (b'+', b'=', _) => "+=",
        (b'-', b'=', _) => "-=",
        (b'*', b'=', _) => "*=",
        (b'/', b'=', _) => "/=",
        (b'%', b'=', _) => "%=",
        (b'&', b'=', _) => "&=",
        (b'^', b'=', _) => "^=",
        (b'|', b'=', _) => "|=",
        (b'.', b'=', _) => ".=",
        (b'&', b'&', _) => "&&",
        (b'|', b'|', _) => "||",
        (b'+', b'+', _) => "++",
        (b'-', b'-', _) => "--",
        (b'-', b'>', _) => "->",
        (b'<', b'<', _) => "<<",
        (b'>', b'>', _) => ">>",
        (b'%', b'(', _) => "%(",
        (b'%', b'?', _) => "%?",
        (b'%', b':', _) => "%:",
        (b'%', b')', _) => "%)",
        (b'!', ..) => "!",
        (b'"', ..) => "\"",
        (b'#', ..) => "#",
        (b'$', ..) => "$",
        (b'%', ..) => "%",
        (b'&', ..) => "&",
        (b'\'', ..) => "'",
        (b'(', ..) => "(",
        (b')', ..) => ")",
        (b'*', ..) => "*",
        (b'+', ..) => "+",
        (b',', ..) => ",",
        (b'-', ..) => "-",
        (b'.', ..) => ".",
        (b'/', ..) => "/",
        (b':', ..) => ":",
        (b';', ..) => ";",
        (b'<', ..) => "<",
        (b'=', ..) => "=",
        (b'>', ..) => ">",
        (b'?', ..) => "?",
        (b'@', ..) => "@",
        (b'[', ..) => "[",
        (b'\\', ..) => "\\",
        (b']', ..) => "]",
        (b'^', ..) => "^",
        (b'_', ..) => "_",
        (b'`', ..) => "`",
        (b'{', ..) => "{",
        (b'|', ..) => "|",
        (b'}', ..) => "}",
        (b'~', ..) => "~",
        _ => return None,
    })
}

/// The string literal whose `"` is at `p`, on one line, backslash escapes
/// kept as written: kind, text and the end.
fn string(source: &str, p: usize) -> (TokKind, Text, usize) {
    let b = source.as_bytes();
    let special = |c: u8| c == b'"' || c == b'\\' || c == b'\n';
    let start = p + 1;
    let mut q = start
        + b[start..]
            .iter()
            .position(|&c| special(c))
            .unwrap_or(b.len() - start);
    if b.get(q) == Some(&b'"') {
        return (TokKind::Str, Text::from_source(source, start, q), q + 1);
    }
    let mut content = String::new();
    let mut seg = start;
    loop {
        match b.get(q) {
            None | Some(b'\n') => {
                content.push_str(&source[seg..q]);
                let text = format!("\"{content}");
                return (TokKind::Junk(Junk::UnclosedQuote), text.into(), q);
            }
            Some(b'"') => {
                content.push_str(&source[seg..q]);
                return (TokKind::Str, content.into(), q + 1);
            }
            _ => {
                // A backslash. Escapes C understands stay as written; any
                // other escaped character stands for itself (stap's
                // lexer). The escaped character starts the next segment.
                content.push_str(&source[seg..q]);
                q += 1;
                if let Some(&c) = b.get(q) {
                    if b"xabtnvfr01234567\\".contains(&c) {
                        content.push('\\');
                    }
                    seg = q;
                    q += 1;
                } else {
                    seg = q;
                }
            }
        }
        q += b[q..]
            .iter()
            .position(|&c| special(c))
            .unwrap_or(b.len() - q);
    }
}

/// `$N` / `@N` / `$#` / `@#` at `p`: the end, the quote flag and the
/// argument digits (`None` for `#`).
fn arg_ref(b: &[u8], p: usize) -> Option<(usize, bool, Option<&[u8]>)> {
    let quoted = b[p] == b'@';
    match b.get(p + 1) {
        Some(b'#') => Some((p + 2, quoted, None)),
        Some(c) if c.is_ascii_digit() => {
            let n = b[p + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            Some((p + 1 + n, quoted, Some(&b[p + 1..p + 1 + n])))
        }
        _ => None,
    }
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
    // Scripts have about one token per five bytes, the generated tapset
    // text one per three or four: rarely a reallocation.
    let mut out = Vec::with_capacity(source.len() / 3 + 8);
    lex_into(source, args, None, &mut out);
    out
}

/// Lexes `source`; when `pasted` is set, every token gets that span (the
/// `$N` it came from) and `$N` inside is junk.
fn lex_into(source: &str, args: &[String], pasted: Option<Span>, out: &mut Vec<Token>) {
    let b = source.as_bytes();
    let mut p = 0;
    loop {
        let (q, ws) = skip_trivia(b, p);
        p = q;
        let Some(&c) = b.get(p) else {
            return;
        };
        let lo = p;
        // Command-line arguments are pasted into the token stream.
        if c == b'$' || c == b'@' {
            if let Some((end, quoted, idx)) = arg_ref(b, p) {
                let span = pasted.unwrap_or(Span::new(lo, end));
                let text = Text::new(&source[lo..end]);
                p = end;
                if pasted.is_some() {
                    out.push(Token {
                        kind: TokKind::Junk(Junk::NestedArg),
                        text,
                        span,
                        ws_before: ws,
                    });
                    continue;
                }
                let value: Option<Cow<str>> = match idx {
                    None => Some(Cow::Owned(args.len().to_string())),
                    Some(d) => std::str::from_utf8(d)
                        .ok()
                        .and_then(|d| d.parse::<usize>().ok())
                        .filter(|n| *n >= 1 && *n <= args.len())
                        .map(|n| Cow::Borrowed(args[n - 1].as_str())),
                };
                match value {
                    None => out.push(Token {
                        kind: TokKind::Junk(Junk::InvalidArg(
                            u32::try_from(args.len()).unwrap_or(u32::MAX),
                        )),
                        text,
                        span,
                        ws_before: ws,
                    }),
                    Some(v) if quoted => out.push(Token {
                        kind: TokKind::Str,
                        text: quote_arg(&v).into(),
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
        }
        // The first byte decides the rule.
        let (kind, text, end) = if is(c, WORD_START) {
            // A word: identifier, keyword, `$var` or `@word`.
            let end = run(b, p + 1, WORD);
            if c == b'@' {
                (TokKind::Op, Text::from_source(source, p, end), end)
            } else if let Some(k) = keyword(&source[p..end]) {
                (TokKind::Keyword, Text::from_static(k), end)
            } else {
                (TokKind::Ident, Text::from_source(source, p, end), end)
            }
        } else if c.is_ascii_digit() {
            // A number: a digit, then letters and digits.
            let end = run(b, p + 1, ALNUM);
            (TokKind::Number, Text::from_source(source, p, end), end)
        } else if c == b'"' {
            string(source, p)
        } else if c == b'%' && b.get(p + 1) == Some(&b'{') {
            // `%{ ... %}` embedded C (always refused by the parser).
            let code = &source[p + 2..];
            match code.find("%}") {
                Some(k) => (TokKind::Embedded, Text::new(&code[..k]), p + 2 + k + 2),
                None => (
                    TokKind::Junk(Junk::UnclosedEmbedded),
                    format!("%{{{code}").into(),
                    b.len(),
                ),
            }
        } else if let Some(op) = operator(b, p) {
            (TokKind::Op, Text::from_static(op), p + op.len())
        } else {
            // Anything else: one junk character.
            let ch = source[p..].chars().next().unwrap_or('\0');
            let text = format!("\\x{:02x}", ch as u32);
            (TokKind::Junk(Junk::Unknown), text.into(), p + ch.len_utf8())
        };
        out.push(Token {
            kind,
            text,
            span: pasted.unwrap_or(Span::new(lo, end)),
            ws_before: ws,
        });
        p = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(TokKind, String)> {
        lex(src, &[])
            .into_iter()
            .map(|t| (t.kind, t.text.to_string()))
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

    #[test]
    fn every_operator_is_one_token() {
        for op in LONG_OPS {
            let t = lex(op, &[]);
            assert_eq!(t.len(), 1, "{op}");
            assert!(t[0].is_op(op), "{op}");
        }
        for c in (0u8..128).filter(u8::is_ascii_punctuation) {
            let s = (c as char).to_string();
            let t = lex(&s, &[]);
            if c == b'#' {
                assert!(t.is_empty());
            } else if c == b'$' || c == b'_' {
                assert_eq!(t[0].kind, TokKind::Ident);
            } else if c == b'"' {
                assert_eq!(t[0].kind, TokKind::Junk(Junk::UnclosedQuote));
            } else {
                assert!(t.len() == 1 && t[0].is_op(&s), "{s}");
            }
        }
        assert_eq!(lex("\u{7f}\u{b}", &[])[1].text, "\\x0b");
    }

    #[test]
    fn string_escapes_and_continuations() {
        let t = lex("\"a\\\"b\\qc\\\\n\\\nd\" \"e\\", &[]);
        assert_eq!(t[0].kind, TokKind::Str);
        assert_eq!(t[0].text, "a\"bqc\\\\n\nd");
        assert_eq!(t[0].span, Span::new(0, 15));
        assert_eq!(t[1].kind, TokKind::Junk(Junk::UnclosedQuote));
        assert_eq!(t[1].text, "\"e");
        let long = "x".repeat(40);
        let t = lex(&format!("{long} \"{long}\""), &[]);
        assert_eq!(t[0].text, long.as_str());
        assert_eq!(t[1].text, Text::new(&long));
        assert_eq!(t[0].text.as_str(), t[1].text.as_str());
    }
}
