//! Diagnostics as data, and their rendering in stap's exact layout.
//!
//! Every pass reports problems as `Diagnostic` values (severity, message,
//! the span of the token stap would name, chained notes) into a `Diags`
//! list; nothing here knows about passes. `Renderer` turns them into the text
//! stap prints (session.cxx `build_error_msg`, `print_warning`,
//! `print_error_source`, `print_token`):
//!
//! ```text
//! parse error: expected ';'
//!         saw: identifier 'foo' at x.stp:3:5
//!      source:     foo bar
//!                  ^
//!
//! semantic error: type mismatch (string): identifier 'x' at x.stp:2:3
//!         source:   x = "a"
//!                   ^
//!
//! WARNING: message: identifier 'syscall' at x.stp:1:7
//!  source: probe syscall.open
//!                ^
//! ```
//!
//! Like stap, a semantic error or warning whose token is in the same file as
//! the previous one printed drops the file name (`at :4:7`); parse errors
//! always name it. Columns count characters from 1. Needs: the file name,
//! the source and the tokens (to describe a token from its span). Runs after
//! every pass; `lib.rs` adds stap's pass summary lines.
use crate::ast::Span;
use crate::parse::lexer::Token;
use std::cell::Cell;

/// How bad a diagnostic is, and so how it is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// `parse error: ...` (pass 1).
    ParseError,
    /// `semantic error: ...` (pass 2), also `not supported yet: ...`.
    SemanticError,
    /// `WARNING: ...`.
    Warning,
}

/// A further message attached to a diagnostic, printed after it as its own
/// block (stap's chained errors, e.g. "type was first inferred here").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The message.
    pub message: String,
    /// The token it is about, if any.
    pub span: Option<Span>,
}

/// One problem found in the script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Kind.
    pub severity: Severity,
    /// The message, specific enough to stand alone.
    pub message: String,
    /// The token it is about; `None` means the end of the file.
    pub span: Option<Span>,
    /// Parse errors only: the error names its token (`at:`) rather than
    /// the parser having stopped at it (`saw:`).
    pub at: bool,
    /// Chained messages.
    pub notes: Vec<Note>,
}

impl Diagnostic {
    /// A parse error at the token the parser stopped at (`saw:`).
    pub fn parse(message: impl Into<String>, span: Option<Span>) -> Self {
        Diagnostic {
            severity: Severity::ParseError,
            message: message.into(),
            span,
            at: false,
            notes: Vec::new(),
        }
    }

    /// A semantic error about the token at `span`.
    pub fn semantic(message: impl Into<String>, span: Span) -> Self {
        Diagnostic {
            severity: Severity::SemanticError,
            message: message.into(),
            span: Some(span),
            at: false,
            notes: Vec::new(),
        }
    }

    /// `not supported yet: <feature>` at `span`.
    pub fn unsupported(feature: &str, span: Span) -> Self {
        Self::semantic(format!("not supported yet: {feature}"), span)
    }

    /// A warning about the token at `span`.
    pub fn warning(message: impl Into<String>, span: Span) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            message: message.into(),
            span: Some(span),
            at: false,
            notes: Vec::new(),
        }
    }

    /// A warning about no token (a command-line option): `WARNING: msg`.
    pub fn warning_alone(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            message: message.into(),
            span: None,
            at: false,
            notes: Vec::new(),
        }
    }

    /// Adds a chained note.
    pub fn with_note(mut self, message: impl Into<String>, span: impl Into<Option<Span>>) -> Self {
        self.notes.push(Note {
            message: message.into(),
            span: span.into(),
        });
        self
    }
}

/// The diagnostics collected by the passes, in order.
#[derive(Debug, Clone, Default)]
pub struct Diags {
    /// All of them.
    pub list: Vec<Diagnostic>,
}

impl Diags {
    /// Records one.
    pub fn push(&mut self, d: Diagnostic) {
        self.list.push(d);
    }

    /// Number of errors (not warnings).
    pub fn errors(&self) -> usize {
        self.list
            .iter()
            .filter(|d| d.severity != Severity::Warning)
            .count()
    }

    /// True when any error was recorded.
    pub fn has_errors(&self) -> bool {
        self.errors() > 0
    }
}

/// Line and column (both 1-based, column in characters) of a byte offset.
pub fn line_col(source: &str, offset: u32) -> (u32, u32) {
    let off = (offset as usize).min(source.len());
    let off = (0..=off)
        .rev()
        .find(|&o| source.is_char_boundary(o))
        .unwrap_or(0);
    let before = &source[..off];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|p| p + 1).unwrap_or(0);
    let col = source[line_start..off].chars().count() + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(col).unwrap_or(u32::MAX),
    )
}

/// Line starts of a source, for many offset-to-line/column lookups.
///
/// Lowering asks for the place of nearly every instruction, mostly on the
/// line of the previous question: that line is kept (`last`), and in an
/// ASCII source a column is the distance from the line's start.
#[derive(Debug, Clone)]
pub struct LineIndex<'a> {
    source: &'a str,
    starts: Vec<usize>,
    /// The source is ASCII: columns count bytes.
    ascii: bool,
    /// The line of the last question: its 1-based number, its start and
    /// the start of the next (line 0: none yet).
    last: Cell<(usize, usize, usize)>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `source`.
    pub fn new(source: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(source.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex {
            source,
            starts,
            ascii: source.is_ascii(),
            last: Cell::new((0, 0, 0)),
        }
    }

    /// Same as `line_col`, in O(log lines + line length), except that an
    /// offset past the end of the source (code of a `-I` tapset file,
    /// `ExtraFile`) has no place in it: (0, 0), as for library code.
    pub fn line_col(&self, offset: u32) -> (u32, u32) {
        let off = offset as usize;
        if off > self.source.len() {
            return (0, 0);
        }
        let (mut line, mut start, next) = self.last.get();
        if line == 0 || off < start || off >= next {
            // The next line, else a search.
            let after = self.starts.get(line + 1).copied().unwrap_or(usize::MAX);
            line = if line != 0 && off >= next && off < after {
                line + 1
            } else {
                self.starts.partition_point(|&s| s <= off).max(1)
            };
            start = self.starts[line - 1];
            let next = self.starts.get(line).copied().unwrap_or(usize::MAX);
            self.last.set((line, start, next));
        }
        let col = if self.ascii {
            off - start + 1
        } else {
            match self.source.get(start..off) {
                Some(s) => s.chars().count() + 1,
                None => line_col(self.source, offset).1 as usize,
            }
        };
        (
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(col).unwrap_or(u32::MAX),
        )
    }
}

impl LineIndex<'_> {
    /// The byte offset of 1-based `line` and character column `col` (the
    /// inverse of `line_col`), `None` past the end of the line or source.
    pub fn offset_of(&self, line: u32, col: u32) -> Option<u32> {
        let start = *self.starts.get((line as usize).checked_sub(1)?)?;
        let text = self.line(line);
        let skip = (col as usize).checked_sub(1)?;
        let byte = match text.char_indices().nth(skip) {
            Some((b, _)) => b,
            None => return None,
        };
        u32::try_from(start + byte).ok()
    }

    /// The text of 1-based line `line`, without its newline ("" past the
    /// end).
    pub fn line(&self, line: u32) -> &str {
        let Some(&start) = self.starts.get((line as usize).wrapping_sub(1)) else {
            return "";
        };
        let end = self
            .starts
            .get(line as usize)
            .map_or(self.source.len(), |&e| e - 1);
        self.source.get(start..end).unwrap_or("")
    }
}

/// stap's `print_error_source` for `text`, one line of a source: `source:
/// ` and the line, then a caret under 1-based column `col` (the line's
/// whitespace kept before it, so tabs line up), each line after `align`.
pub fn source_excerpt(text: &str, col: u32, align: &str) -> String {
    let text = text.strip_suffix('\r').unwrap_or(text);
    let mut out = String::new();
    out.push_str(align);
    out.push_str("source: ");
    out.push_str(text);
    out.push('\n');
    out.push_str(align);
    out.push_str("        ");
    for c in text.chars().take(col.saturating_sub(1) as usize) {
        out.push(if c.is_whitespace() { c } else { ' ' });
    }
    out.push_str("^\n");
    out
}

/// A source file other than the script (a `-I` tapset file). Its tokens'
/// spans lie past the script's text, from `base` on, so that one span
/// names a place in any of the files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtraFile {
    /// Its name in messages.
    pub name: String,
    /// The span offset of its first byte (past the script and the files
    /// before it).
    pub base: u32,
    /// Its text.
    pub text: String,
}

/// Renders diagnostics for a script (and the files of its `-I` tapsets).
pub struct Renderer<'a> {
    file: &'a str,
    source: &'a str,
    tokens: &'a [Token],
    extra: &'a [ExtraFile],
    /// Line starts of `source` (first) and of each `extra` file, for
    /// line/column lookups that do not rescan the text.
    lines: Vec<LineIndex<'a>>,
    /// stap's `last_token`: the file (0: the script, `k + 1`: `extra[k]`)
    /// of the last token `print_token` printed; the next token of that
    /// file drops the file name.
    printed_file: Option<usize>,
}

impl<'a> Renderer<'a> {
    /// A renderer for `source`, named `file` in messages; `tokens` are its
    /// tokens (as `parse::lexer::lex` made them).
    pub fn new(file: &'a str, source: &'a str, tokens: &'a [Token]) -> Self {
        Self::with_files(file, source, tokens, &[])
    }

    /// `new`, with the other files spans can point into (`tokens` holds
    /// their tokens too).
    pub fn with_files(
        file: &'a str,
        source: &'a str,
        tokens: &'a [Token],
        extra: &'a [ExtraFile],
    ) -> Self {
        let lines = std::iter::once(source)
            .chain(extra.iter().map(|f| f.text.as_str()))
            .map(LineIndex::new)
            .collect();
        Renderer {
            file,
            source,
            tokens,
            extra,
            lines,
            printed_file: None,
        }
    }

    /// The file `offset` is in: its number (as `printed_file`), name,
    /// text, and the offset within it.
    fn locate(&self, offset: u32) -> (usize, &'a str, &'a str, u32) {
        match self.extra.iter().rposition(|f| offset >= f.base) {
            Some(k) => {
                let f = &self.extra[k];
                (k + 1, &f.name, &f.text, offset - f.base)
            }
            None => (0, self.file, self.source, offset),
        }
    }

    /// Line and column of offset `lo` of file `k` (as `locate` numbers
    /// them), as `line_col` computes them.
    fn line_col(&self, k: usize, lo: u32) -> (u32, u32) {
        match self.lines.get(k) {
            // Past the end: at the end, as `line_col` clamps.
            Some(idx) => idx.line_col(lo.min(u32::try_from(idx.source.len()).unwrap_or(u32::MAX))),
            None => (0, 0),
        }
    }

    /// Renders `d` as a new renderer would: the first token names its
    /// file (stap's `last_token` forgotten), the line indexes reused.
    pub fn render_alone(&mut self, d: &Diagnostic) -> String {
        self.printed_file = None;
        self.render(d)
    }

    /// stap's description of the token at `span`: `identifier 'x'`.
    fn describe(&self, span: Span) -> String {
        // The lexer's tokens are in source order: search, then scan in
        // case some are not.
        let at = self.tokens.partition_point(|t| t.span.lo < span.lo);
        let found = self.tokens[at..]
            .iter()
            .take_while(|t| t.span.lo == span.lo)
            .find(|t| t.span == span)
            .or_else(|| self.tokens.iter().find(|t| t.span == span));
        match found {
            Some(t) => t.describe(),
            None => {
                // Not a lexer token (should not happen): describe the text.
                let (_, _, text, lo) = self.locate(span.lo);
                let len = span.hi.saturating_sub(span.lo) as usize;
                let text = text.get(lo as usize..lo as usize + len).unwrap_or("");
                format!("operator '{text}'")
            }
        }
    }

    /// `identifier 'x' at x.stp:3:5`, abbreviated as `print_token` does
    /// when `abbreviate` is set.
    fn token_at(&mut self, span: Span, abbreviate: bool) -> String {
        let (k, name, _, lo) = self.locate(span.lo);
        let (line, col) = self.line_col(k, lo);
        let file = if abbreviate && self.printed_file == Some(k) {
            ""
        } else {
            name
        };
        if abbreviate {
            self.printed_file = Some(k);
        }
        format!("{} at {}:{}:{}", self.describe(span), file, line, col)
    }

    /// stap's `print_error_source`: the line and a caret under the column.
    fn source_lines(&self, out: &mut String, align: &str, span: Span) {
        let (k, _, _, lo) = self.locate(span.lo);
        let (line, col) = self.line_col(k, lo);
        out.push_str(&source_excerpt(self.lines[k].line(line), col, align));
    }

    /// Renders one diagnostic (and its notes) in stap's layout.
    pub fn render(&mut self, d: &Diagnostic) -> String {
        let mut out = String::new();
        match d.severity {
            Severity::ParseError => {
                out.push_str("parse error: ");
                out.push_str(&d.message);
                out.push('\n');
                let align = "     ";
                match d.span {
                    Some(span) => {
                        out.push_str(align);
                        out.push_str(if d.at { "    at: " } else { "   saw: " });
                        out.push_str(&self.token_at(span, false));
                        out.push('\n');
                        self.source_lines(&mut out, align, span);
                    }
                    None => {
                        out.push_str(align);
                        out.push_str("   saw: ");
                        out.push_str(self.file);
                        out.push_str(" EOF\n");
                    }
                }
                out.push('\n');
                for n in &d.notes {
                    out.push_str("parse error: ");
                    out.push_str(&n.message);
                    out.push('\n');
                    if let Some(span) = n.span {
                        out.push_str(align);
                        out.push_str("    at: ");
                        out.push_str(&self.token_at(span, false));
                        out.push('\n');
                        self.source_lines(&mut out, align, span);
                    }
                    out.push('\n');
                }
            }
            Severity::SemanticError => {
                let align = "        ";
                self.semantic_block(&mut out, align, &d.message, d.span);
                for n in &d.notes {
                    self.semantic_block(&mut out, align, &n.message, n.span);
                }
            }
            Severity::Warning => {
                out.push_str("WARNING: ");
                out.push_str(&d.message);
                if let Some(span) = d.span {
                    out.push_str(": ");
                    out.push_str(&self.token_at(span, true));
                    out.push('\n');
                    self.source_lines(&mut out, " ", span);
                } else {
                    out.push('\n');
                }
            }
        }
        out
    }

    fn semantic_block(&mut self, out: &mut String, align: &str, msg: &str, span: Option<Span>) {
        out.push_str("semantic error: ");
        out.push_str(msg);
        match span {
            Some(span) => {
                out.push_str(": ");
                out.push_str(&self.token_at(span, true));
                out.push('\n');
                self.source_lines(out, align, span);
            }
            None => out.push('\n'),
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lexer::lex;

    #[test]
    fn line_and_column_in_characters() {
        let s = "ab\n\tcé d";
        assert_eq!(line_col(s, 0), (1, 1));
        assert_eq!(line_col(s, 3), (2, 1));
        // 'd' is after a tab, 'c', 'é' (2 bytes) and a space.
        assert_eq!(line_col(s, 8), (2, 5));
        let idx = LineIndex::new(s);
        for off in [0, 2, 3, 4, 9] {
            assert_eq!(idx.line_col(off), line_col(s, off), "offset {off}");
        }
        assert_eq!(idx.line_col(10), (0, 0));
        assert_eq!(idx.line_col(99), (0, 0));
        assert_eq!(idx.line(1), "ab");
        assert_eq!(idx.line(2), "\tcé d");
        assert_eq!(idx.line(0), "");
        assert_eq!(idx.line(9), "");
    }

    #[test]
    fn parse_error_layout() {
        let src = "probe begin {\n    foo bar\n}\n";
        let toks = lex(src, &[]);
        let mut r = Renderer::new("x.stp", src, &toks);
        let d = Diagnostic::parse("expected ';'", Some(Span::new(22, 25)));
        assert_eq!(
            r.render(&d),
            "parse error: expected ';'\n\
             \x20       saw: identifier 'bar' at x.stp:2:9\n\
             \x20    source:     foo bar\n\
             \x20                    ^\n\n"
        );
        let eof = Diagnostic::parse("unexpected end-of-file", None);
        assert_eq!(
            r.render(&eof),
            "parse error: unexpected end-of-file\n        saw: x.stp EOF\n\n"
        );
    }

    #[test]
    fn semantic_errors_abbreviate_the_file_after_the_first() {
        let src = "probe begin { x = 1; x = \"a\" }";
        let toks = lex(src, &[]);
        let mut r = Renderer::new("x.stp", src, &toks);
        let d = Diagnostic::semantic("type mismatch (string)", Span::new(21, 22))
            .with_note("type was first inferred here (long)", Span::new(14, 15));
        assert_eq!(
            r.render(&d),
            "semantic error: type mismatch (string): identifier 'x' at x.stp:1:22\n\
             \x20       source: probe begin { x = 1; x = \"a\" }\n\
             \x20                                    ^\n\n\
             semantic error: type was first inferred here (long): identifier 'x' at :1:15\n\
             \x20       source: probe begin { x = 1; x = \"a\" }\n\
             \x20                             ^\n\n"
        );
    }

    #[test]
    fn warning_layout_keeps_tabs_in_the_caret_line() {
        let src = "\tprobe syscall.open {}";
        let toks = lex(src, &[]);
        let mut r = Renderer::new("x.stp", src, &toks);
        let d = Diagnostic::warning("w", Span::new(7, 14));
        assert_eq!(
            r.render(&d),
            "WARNING: w: identifier 'syscall' at x.stp:1:8\n source: \tprobe syscall.open {}\n         \t      ^\n"
        );
    }
}
