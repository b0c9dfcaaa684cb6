//! Markdown to roff (the man(7) macros), for the man pages made from the
//! documentation (`stapvm debug man DIR --page stapvm-language.7=docs/language.md`).
//!
//! The subset the repository's documents use, block by block:
//!
//! - `# Title`: the page's `.TH` line and its NAME section (`name \- Title`);
//!   a later `#` heading is a `.SH`; `##` is `.SH` (upper-cased outside code
//!   spans, as man pages write them), `###` and deeper are `.SS`;
//! - paragraphs (`.PP`), block quotes (`>`, indented with `.RS`);
//! - fenced code blocks (```` ``` ```` or `~~~`) and indented code blocks:
//!   no-fill (`.nf`/`.fi`) inside `.RS 4`/`.RE`, no inline formatting;
//! - bullet (`-`, `*`, `+`) and numbered (`1.`) lists as `.IP` paragraphs, a
//!   nested list inside `.RS`/`.RE`; an item's continuation lines join it;
//! - pipe tables as a `tbl` table (`.TS`/`.TE`: man runs tbl), header row
//!   bold, text blocks (`T{`/`T}`) in columns of bounded width when the
//!   table would not fit in 80 columns;
//! - inline: `` `code` `` and `**bold**` in bold, `*emphasis*` and
//!   `_emphasis_` in italics, `[text](url)` as the text (with `<url>` after
//!   it for an absolute URL; a link into the repository is text only),
//!   backslash escapes, `<!-- comments -->` dropped;
//! - rules (`---`) end a paragraph and print nothing.
//!
//! Hyphenation is off (`.nh`: names and options must not be split).
//! Everything is escaped for roff: backslashes (`\e`), a line starting
//! with `.` or `'` (`\&`), hyphen-minus (`\-`, so that options can be
//! copied), quotes and backquotes (`\(aq`, `\(ga`: not turned into
//! typographic quotes), and every character beyond ASCII as `\[uXXXX]`, so
//! the output is plain ASCII that groff reads without preconv.

/// The title line of a page: what `.TH` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The page's name (`stapvm-language`).
    pub name: String,
    /// Its section (`7`).
    pub section: String,
    /// The date of the last change (`.TH`'s third field; may be empty).
    pub date: String,
    /// The source (`stapvm 0.1.0`).
    pub source: String,
    /// The manual's title (`stapvm Manual`).
    pub manual: String,
}

/// Converts a whole Markdown document into a man page: `.TH` from `page`,
/// the NAME section from the document's first `#` heading (or the page's
/// name alone), then the body.
pub fn page(md: &str, page: &Page) -> String {
    let mut out = format!(
        ".TH {} {} {} {} {}\n.nh\n",
        quote_arg(&page.name.to_uppercase()),
        quote_arg(&page.section),
        quote_arg(&page.date),
        quote_arg(&page.source),
        quote_arg(&page.manual),
    );
    out.push_str(".SH NAME\n");
    let blocks = parse_blocks(md);
    let mut rest = blocks.as_slice();
    match rest.first() {
        Some(Block::Heading(1, title)) => {
            out.push_str(&format!(
                "{} \\- {}\n",
                escape_text(&page.name),
                inline(&strip_inline(title))
            ));
            rest = &rest[1..];
        }
        _ => out.push_str(&format!("{}\n", escape_text(&page.name))),
    }
    // Text before the first section is the description.
    if rest
        .first()
        .is_some_and(|b| !matches!(b, Block::Heading(..)))
    {
        out.push_str(".SH DESCRIPTION\n");
    }
    render(rest, &mut out);
    out
}

/// Converts Markdown into roff body text (no `.TH`, every `#` heading a
/// `.SH`): sections to append to a generated page.
pub fn body(md: &str) -> String {
    let mut out = String::new();
    render(&parse_blocks(md), &mut out);
    out
}

/// A block of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Block {
    /// Level and text.
    Heading(usize, String),
    /// The text, lines joined by spaces.
    Para(String),
    /// The lines, verbatim.
    Code(Vec<String>),
    /// Blocks indented as a quotation.
    Quote(Vec<Block>),
    /// Items (each a list of blocks); `Some(n)` numbers from n.
    List(Option<u64>, Vec<Vec<Block>>),
    /// Header cells and rows of cells.
    Table(Vec<String>, Vec<Vec<String>>),
}

/// The item marker a line starts with: (indent, numbered start, text).
fn list_item(line: &str) -> Option<(usize, Option<u64>, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let t = &line[indent..];
    for m in ["- ", "* ", "+ "] {
        if let Some(rest) = t.strip_prefix(m) {
            return Some((indent, None, rest));
        }
    }
    if t == "-" || t == "*" || t == "+" {
        return Some((indent, None, ""));
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if (1..=9).contains(&digits) {
        let after = &t[digits..];
        let rest = after
            .strip_prefix(". ")
            .or_else(|| after.strip_prefix(") "));
        if let (Some(rest), Ok(n)) = (rest, t[..digits].parse()) {
            return Some((indent, Some(n), rest));
        }
    }
    None
}

fn is_fence(line: &str) -> Option<&'static str> {
    let t = line.trim_start();
    if line.len() - t.len() > 3 {
        return None;
    }
    if t.starts_with("```") {
        Some("```")
    } else if t.starts_with("~~~") {
        Some("~~~")
    } else {
        None
    }
}

fn is_rule(line: &str) -> bool {
    let t: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    t.len() >= 3
        && (t.chars().all(|c| c == '-')
            || t.chars().all(|c| c == '*')
            || t.chars().all(|c| c == '_'))
}

fn heading(line: &str) -> Option<(usize, String)> {
    let t = line.trim_start();
    if line.len() - t.len() > 3 {
        return None;
    }
    let level = t.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &t[level..];
    if !rest.is_empty() && !rest.starts_with(' ') {
        return None;
    }
    let text = rest.trim().trim_end_matches('#').trim_end();
    Some((level, text.to_string()))
}

fn is_table_row(line: &str) -> bool {
    line.trim_start().starts_with('|')
}

fn is_table_separator(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('|') && t.contains('-') && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

/// The cells of a table row: split at `|` outside code spans and not
/// escaped (`\|` is a `|` in the cell).
fn cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = if t.ends_with('|') && !t.ends_with("\\|") {
        &t[..t.len() - 1]
    } else {
        t
    };
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_code = false;
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                cur.push('|');
            }
            '`' => {
                in_code = !in_code;
                cur.push(c);
            }
            '|' if !in_code => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    out.push(cur.trim().to_string());
    out
}

/// Removes HTML comments (`<!-- ... -->`, possibly over several lines).
fn strip_comments(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut rest = md;
    while let Some(i) = rest.find("<!--") {
        out.push_str(&rest[..i]);
        match rest[i..].find("-->") {
            Some(j) => rest = &rest[i + j + 3..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

fn parse_blocks(md: &str) -> Vec<Block> {
    let text = strip_comments(md);
    let lines: Vec<&str> = text.lines().map(|l| l.trim_end()).collect();
    let mut i = 0;
    blocks_of(&lines, &mut i)
}

/// The blocks of `lines` from `*i` to the end.
fn blocks_of(lines: &[&str], i: &mut usize) -> Vec<Block> {
    let mut out = Vec::new();
    while *i < lines.len() {
        let line = lines[*i];
        if line.trim().is_empty() {
            *i += 1;
            continue;
        }
        if let Some(fence) = is_fence(line) {
            *i += 1;
            let mut code = Vec::new();
            while *i < lines.len() && is_fence(lines[*i]) != Some(fence) {
                code.push(lines[*i].to_string());
                *i += 1;
            }
            *i += 1; // the closing fence (or the end)
            out.push(Block::Code(code));
            continue;
        }
        if let Some((level, text)) = heading(line) {
            out.push(Block::Heading(level, text));
            *i += 1;
            continue;
        }
        if is_rule(line) {
            *i += 1;
            continue;
        }
        if line.starts_with("    ") || line.starts_with('\t') {
            let mut code = Vec::new();
            while *i < lines.len() {
                let l = lines[*i];
                if l.trim().is_empty() {
                    // A blank line inside the block, if more code follows.
                    let more = lines[*i..]
                        .iter()
                        .find(|l| !l.trim().is_empty())
                        .is_some_and(|l| l.starts_with("    ") || l.starts_with('\t'));
                    if !more {
                        break;
                    }
                    code.push(String::new());
                } else if let Some(c) = l.strip_prefix("    ").or_else(|| l.strip_prefix('\t')) {
                    code.push(c.to_string());
                } else {
                    break;
                }
                *i += 1;
            }
            out.push(Block::Code(code));
            continue;
        }
        if line.trim_start().starts_with('>') {
            let mut inner = Vec::new();
            while *i < lines.len() && lines[*i].trim_start().starts_with('>') {
                let t = lines[*i].trim_start();
                let t = t.strip_prefix("> ").unwrap_or(&t[1..]);
                inner.push(t);
                *i += 1;
            }
            let mut j = 0;
            out.push(Block::Quote(blocks_of(&inner, &mut j)));
            continue;
        }
        if is_table_row(line) && lines.get(*i + 1).is_some_and(|l| is_table_separator(l)) {
            let header = cells(line);
            *i += 2;
            let mut rows = Vec::new();
            while *i < lines.len() && is_table_row(lines[*i]) {
                let mut r = cells(lines[*i]);
                r.resize(header.len(), String::new());
                rows.push(r);
                *i += 1;
            }
            out.push(Block::Table(header, rows));
            continue;
        }
        if let Some((indent, start, _)) = list_item(line) {
            out.push(list(lines, i, indent, start));
            continue;
        }
        // A paragraph: up to a blank line or the start of another block.
        let mut text = String::new();
        while *i < lines.len() {
            let l = lines[*i];
            if l.trim().is_empty()
                || heading(l).is_some()
                || is_fence(l).is_some()
                || l.trim_start().starts_with('>')
                || (!text.is_empty() && list_item(l).is_some())
                || (!text.is_empty() && is_table_row(l))
            {
                break;
            }
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(l.trim());
            *i += 1;
        }
        out.push(Block::Para(text));
    }
    out
}

/// A list whose items start at `indent`: each item's text, its
/// continuation lines and the blocks indented under it.
fn list(lines: &[&str], i: &mut usize, indent: usize, start: Option<u64>) -> Block {
    let mut items: Vec<Vec<Block>> = Vec::new();
    while *i < lines.len() {
        let Some((ind, num, first)) = list_item(lines[*i]) else {
            break;
        };
        if ind != indent || num.is_some() != start.is_some() {
            break;
        }
        *i += 1;
        // The item's own lines: its text, continuation lines, and lines
        // indented deeper than its marker (nested blocks), up to the next
        // item at this level or a line back at the margin after a blank.
        let mut body: Vec<String> = vec![first.to_string()];
        while *i < lines.len() {
            let l = lines[*i];
            if l.trim().is_empty() {
                let next = lines[*i..].iter().find(|l| !l.trim().is_empty());
                let indented = next.is_some_and(|n| {
                    let ni = n.len() - n.trim_start().len();
                    ni > indent
                });
                if !indented {
                    break;
                }
                body.push(String::new());
                *i += 1;
                continue;
            }
            let li = l.len() - l.trim_start().len();
            if let Some((ni, _, _)) = list_item(l) {
                if ni <= indent {
                    break;
                }
            } else if (li <= indent && body.last().is_some_and(|b| b.is_empty()))
                || heading(l).is_some()
                || (li <= indent && is_fence(l).is_some())
            {
                break;
            }
            // Dedent by the item's content column (at most).
            let cut = li.min(indent + 2).min(l.len());
            body.push(l[cut..].to_string());
            *i += 1;
        }
        while body.last().is_some_and(|b| b.is_empty()) {
            body.pop();
        }
        // Continuation lines at the item's own level join its first
        // paragraph; lines indented under it become nested blocks.
        let refs: Vec<&str> = body.iter().map(String::as_str).collect();
        let mut j = 0;
        items.push(blocks_of(&refs, &mut j));
    }
    Block::List(start, items)
}

fn render(blocks: &[Block], out: &mut String) {
    for b in blocks {
        match b {
            Block::Heading(level, text) => {
                let macro_ = if *level <= 2 { "SH" } else { "SS" };
                let text = if *level <= 2 {
                    upper_outside_code(text)
                } else {
                    text.clone()
                };
                out.push_str(&format!(".{macro_} {}\n", quote_arg(&plain(&text))));
            }
            Block::Para(text) => {
                out.push_str(".PP\n");
                push_text(out, &inline(text));
            }
            Block::Code(lines) => {
                out.push_str(".PP\n.RS 4\n.nf\n");
                for l in lines {
                    let e = escape_text(&l.replace('\t', "        "));
                    out.push_str(&protect_line(&e));
                    out.push('\n');
                }
                out.push_str(".fi\n.RE\n");
            }
            Block::Quote(inner) => {
                out.push_str(".PP\n.RS 4\n");
                render(inner, out);
                out.push_str(".RE\n");
            }
            Block::List(start, items) => {
                let width = match start {
                    None => 2,
                    Some(n) => format!("{}.", n + items.len() as u64).len() + 1,
                };
                for (k, item) in items.iter().enumerate() {
                    let tag = match start {
                        None => "\\(bu".to_string(),
                        Some(n) => format!("{}.", n + k as u64),
                    };
                    out.push_str(&format!(".IP {tag} {width}\n"));
                    render_item(item, out);
                }
                // What follows starts with its own .PP, .SH or .IP, which
                // ends the list's indentation.
            }
            Block::Table(header, rows) => table(header, rows, out),
        }
    }
}

/// The blocks of one list item after its `.IP`: the first paragraph goes
/// on the `.IP` itself, the others as indented paragraphs; a nested list
/// inside `.RS`.
fn render_item(item: &[Block], out: &mut String) {
    for (k, b) in item.iter().enumerate() {
        match b {
            Block::Para(text) => {
                if k > 0 {
                    out.push_str(".IP\n");
                }
                push_text(out, &inline(text));
            }
            Block::List(..) | Block::Code(_) | Block::Table(..) | Block::Quote(_) => {
                out.push_str(".RS\n");
                render(std::slice::from_ref(b), out);
                out.push_str(".RE\n");
            }
            Block::Heading(..) => render(std::slice::from_ref(b), out),
        }
    }
}

/// Text that fits a table cell without wrapping: the display width of a
/// cell's text once rendered (markup removed).
fn display_width(cell: &str) -> usize {
    plain(cell).chars().count()
}

/// The widest a table may be (in ens) before its cells wrap: 80 columns
/// less the page's left margin and some room.
const TABLE_WIDTH: usize = 70;

fn table(header: &[String], rows: &[Vec<String>], out: &mut String) {
    let n = header.len().max(1);
    let mut widths: Vec<usize> = (0..n)
        .map(|c| {
            std::iter::once(header)
                .chain(rows.iter().map(Vec::as_slice))
                .map(|r| r.get(c).map_or(0, |s| display_width(s)))
                .max()
                .unwrap_or(0)
                .max(1)
        })
        .collect();
    let gaps = 3 * (n - 1);
    let fits = widths.iter().sum::<usize>() + gaps <= TABLE_WIDTH;
    if !fits {
        let words: Vec<usize> = (0..n)
            .map(|c| {
                std::iter::once(header)
                    .chain(rows.iter().map(Vec::as_slice))
                    .map(|r| r.get(c).map_or(0, |s| longest_word(s)))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        fit_widths(&mut widths, &words, TABLE_WIDTH.saturating_sub(gaps));
    }
    // Ragged right in the cells: a narrow column of long words cannot be
    // adjusted (troff warns).
    out.push_str(".PP\n.na\n.TS\ntab(\u{1f});\n");
    let spec = |bold: bool| -> String {
        (0..n)
            .map(|c| {
                let mut s = String::from(if bold { "lb" } else { "l" });
                if !fits {
                    s.push_str(&format!("w({}n)", widths[c]));
                }
                s
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    out.push_str(&spec(true));
    out.push('\n');
    out.push_str(&spec(false));
    out.push_str(".\n");
    let row = |cells: &[String], out: &mut String| {
        let rendered: Vec<String> = (0..n)
            .map(|c| {
                let text = inline(cells.get(c).map_or("", String::as_str));
                if fits {
                    // A cell that starts with a dot would be a request.
                    format!("\\&{text}")
                } else {
                    format!("T{{\n{}\nT}}", protect_line(&break_points(&text)))
                }
            })
            .collect();
        out.push_str(&rendered.join("\u{1f}"));
        out.push('\n');
    };
    row(header, out);
    out.push_str("_\n");
    for r in rows {
        row(r, out);
    }
    out.push_str(".TE\n.ad\n");
}

/// Rendered text with a break point (`\:`) after each `/`, `_`, `.`, `,`,
/// `|`, `=` and `\-`, so that a long name or path wraps (in a narrow
/// column, or a line) instead of overflowing (no other roff escape holds
/// these characters).
fn break_points(rendered: &str) -> String {
    let chars: Vec<char> = rendered.chars().collect();
    let mut out = String::with_capacity(rendered.len() * 2);
    let mut k = 0;
    while k < chars.len() {
        let c = chars[k];
        out.push(c);
        if c == '\\' {
            // An escape: `\-` inside a word (`per-syscall`, not `-e`) may
            // break after it; other escapes are copied whole below.
            let Some(&n) = chars.get(k + 1) else { break };
            out.push(n);
            let in_word = k > 0 && chars[k - 1].is_ascii_alphanumeric();
            let marked = chars.get(k + 2) == Some(&'\\') && chars.get(k + 3) == Some(&':');
            if n == '-' && in_word && !marked {
                out.push_str("\\:");
            }
            k += 2;
            continue;
        }
        let marked = chars.get(k + 1) == Some(&'\\') && chars.get(k + 2) == Some(&':');
        if matches!(c, '/' | '_' | '.' | ',' | '|' | '=') && !marked {
            out.push_str("\\:");
        }
        k += 1;
    }
    out
}

/// The longest piece of a cell that cannot be broken: its words, cut
/// after the characters `break_points` and code spans break after.
fn longest_word(cell: &str) -> usize {
    plain(cell)
        .split_whitespace()
        .flat_map(|w| w.split_inclusive(['/', '_', '.', ',', '|', '=', '-']))
        .map(|w| w.chars().count())
        .max()
        .unwrap_or(0)
}

/// Column widths (in ens) that add up to `room`: each column's share
/// grows with the square root of its natural width (so a column of long
/// sentences does not starve one of names), at least 8 and at least its
/// longest unbreakable word (`words`), and a column is never wider than
/// it needs; what it does not need goes to the last.
fn fit_widths(widths: &mut [usize], words: &[usize], room: usize) {
    let n = widths.len();
    let weights: Vec<f64> = widths.iter().map(|&w| (w as f64).sqrt()).collect();
    let total: f64 = weights.iter().sum();
    let mut used = 0;
    for c in 0..n.saturating_sub(1) {
        let share = (room as f64 * weights[c] / total).floor() as usize;
        let floor = words.get(c).copied().unwrap_or(0).max(8).min(widths[c]);
        widths[c] = widths[c].min(share.max(floor));
        used += widths[c];
    }
    let last_word = words.get(n.saturating_sub(1)).copied().unwrap_or(0);
    if let Some(last) = widths.last_mut() {
        *last = room.saturating_sub(used).max(8).max(last_word);
    }
}

/// Appends paragraph text as one line, protected.
fn push_text(out: &mut String, text: &str) {
    out.push_str(&protect_line(text.trim()));
    out.push('\n');
}

/// A text line that would start a request (`.` or `'`) gets `\&` first.
fn protect_line(line: &str) -> String {
    if line.starts_with('.') || line.starts_with('\'') {
        format!("\\&{line}")
    } else {
        line.to_string()
    }
}

/// Escapes plain text for roff (no formatting).
pub fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\e"),
            '-' => out.push_str("\\-"),
            '\'' => out.push_str("\\(aq"),
            '`' => out.push_str("\\(ga"),
            '\u{1f}' => {}
            c if c.is_ascii() => out.push(c),
            c => out.push_str(&format!("\\[u{:04X}]", u32::from(c))),
        }
    }
    out
}

/// A macro argument: escaped and in double quotes (a `"` inside is
/// `\(dq`).
fn quote_arg(s: &str) -> String {
    format!("\"{}\"", escape_text(s).replace('"', "\\(dq"))
}

/// Upper-cases the text outside code spans.
fn upper_outside_code(s: &str) -> String {
    let mut out = String::new();
    for (k, part) in s.split('`').enumerate() {
        if k > 0 {
            out.push('`');
        }
        if k % 2 == 0 {
            out.push_str(&part.to_uppercase());
        } else {
            out.push_str(part);
        }
    }
    out
}

/// The text of inline Markdown without its markup (headings, widths).
fn plain(s: &str) -> String {
    let mut out = String::new();
    for span in spans(s) {
        match span {
            Span::Text(t) | Span::Code(t) => out.push_str(&t),
            Span::Open(_) | Span::Close => {}
            Span::Link(text, url) => {
                out.push_str(&plain(&text));
                if is_absolute_url(&url) {
                    out.push_str(&format!(" <{url}>"));
                }
            }
        }
    }
    out
}

/// A title for the NAME line: markup removed (NAME lines are plain).
fn strip_inline(s: &str) -> String {
    plain(s)
}

fn is_absolute_url(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://") || url.starts_with("mailto:")
}

/// Inline pieces of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Span {
    Text(String),
    Code(String),
    /// A font starts: `B` or `I`.
    Open(char),
    /// The last font opened ends.
    Close,
    /// Link text and URL.
    Link(String, String),
}

/// Splits inline Markdown into spans: code spans first (nothing inside
/// them is markup), backslash escapes, links, `**`/`__` and `*`/`_`
/// emphasis (an `_` inside a word is a letter, as in `foo_bar`).
fn spans(s: &str) -> Vec<Span> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut text = String::new();
    let mut open: Vec<(char, usize)> = Vec::new(); // (font, delimiter length)
    let mut i = 0;
    let flush = |text: &mut String, out: &mut Vec<Span>| {
        if !text.is_empty() {
            out.push(Span::Text(std::mem::take(text)));
        }
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && chars.get(i + 1).is_some_and(|n| n.is_ascii_punctuation()) {
            text.push(chars[i + 1]);
            i += 2;
            continue;
        }
        if c == '`' {
            let ticks = chars[i..].iter().take_while(|&&t| t == '`').count();
            // The closing run of the same length.
            let mut j = i + ticks;
            let mut end = None;
            while j < chars.len() {
                if chars[j] == '`' {
                    let run = chars[j..].iter().take_while(|&&t| t == '`').count();
                    if run == ticks {
                        end = Some(j);
                        break;
                    }
                    j += run;
                } else {
                    j += 1;
                }
            }
            if let Some(e) = end {
                flush(&mut text, &mut out);
                let code: String = chars[i + ticks..e].iter().collect();
                let code = if code.starts_with(' ') && code.ends_with(' ') && code.trim() != "" {
                    code[1..code.len() - 1].to_string()
                } else {
                    code
                };
                out.push(Span::Code(code));
                i = e + ticks;
                continue;
            }
            text.extend(&chars[i..i + ticks]);
            i += ticks;
            continue;
        }
        if c == '[' {
            if let Some((label, url, next)) = link_at(&chars, i) {
                flush(&mut text, &mut out);
                out.push(Span::Link(label, url));
                i = next;
                continue;
            }
        }
        if c == '*' || c == '_' {
            let run = chars[i..].iter().take_while(|&&t| t == c).count();
            let prev = if i == 0 { ' ' } else { chars[i - 1] };
            let next = chars.get(i + run).copied().unwrap_or(' ');
            let len = if run >= 2 { 2 } else { 1 };
            let font = if len == 2 { 'B' } else { 'I' };
            let intraword = c == '_' && prev.is_alphanumeric() && next.is_alphanumeric();
            let can_close = !prev.is_whitespace()
                && i > 0
                && open.last().is_some_and(|&(f, l)| f == font && l == len);
            let can_open = !next.is_whitespace()
                && i + run < chars.len()
                && has_closer(&chars, i + len, c, len);
            if !intraword && can_close {
                flush(&mut text, &mut out);
                out.push(Span::Close);
                open.pop();
                i += len;
                continue;
            }
            if !intraword && can_open {
                flush(&mut text, &mut out);
                out.push(Span::Open(font));
                open.push((font, len));
                i += len;
                continue;
            }
            text.extend(&chars[i..i + run]);
            i += run;
            continue;
        }
        text.push(c);
        i += 1;
    }
    flush(&mut text, &mut out);
    // An opener left unclosed is text after all: close it harmlessly.
    for _ in open {
        out.push(Span::Close);
    }
    out
}

/// Whether a closing delimiter (`len` times `c`, after a non-space) comes
/// later in `chars` from `from`.
fn has_closer(chars: &[char], from: usize, c: char, len: usize) -> bool {
    let mut j = from;
    while j + len <= chars.len() {
        if chars[j] == '`' {
            // Skip code spans: their contents are not markup.
            let ticks = chars[j..].iter().take_while(|&&t| t == '`').count();
            let mut k = j + ticks;
            while k < chars.len() && chars[k] != '`' {
                k += 1;
            }
            j = k + ticks;
            continue;
        }
        if chars[j..j + len].iter().all(|&t| t == c)
            && j > from
            && !chars[j - 1].is_whitespace()
            && (len == 2 || chars.get(j + 1) != Some(&c))
        {
            let after = chars.get(j + len).copied().unwrap_or(' ');
            if c != '_' || !after.is_alphanumeric() {
                return true;
            }
        }
        j += 1;
    }
    false
}

/// A link `[text](url)` at `i`: its text, URL and the index after it.
fn link_at(chars: &[char], i: usize) -> Option<(String, String, usize)> {
    let mut depth = 0;
    let mut j = i;
    let close = loop {
        match chars.get(j)? {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    break j;
                }
            }
            _ => {}
        }
        j += 1;
    };
    if chars.get(close + 1) != Some(&'(') {
        return None;
    }
    let end = chars[close + 2..].iter().position(|&c| c == ')')? + close + 2;
    let label: String = chars[i + 1..close].iter().collect();
    let url: String = chars[close + 2..end].iter().collect();
    let url = url.split_whitespace().next().unwrap_or("").to_string();
    Some((label, url, end + 1))
}

/// Renders inline Markdown as roff text: fonts with `\f`, escaped text.
fn inline(s: &str) -> String {
    let mut out = String::new();
    let mut fonts: Vec<char> = vec!['R'];
    let font = |f: char| format!("\\f{f}");
    for span in spans(s) {
        match span {
            Span::Text(t) => out.push_str(&escape_text(&t)),
            Span::Code(t) => {
                out.push_str(&font('B'));
                out.push_str(&break_points(&escape_text(&t)));
                out.push_str(&font(*fonts.last().unwrap_or(&'R')));
            }
            Span::Open(f) => {
                // Bold inside italics (or the reverse) is bold italics.
                let cur = *fonts.last().unwrap_or(&'R');
                let f = if (cur == 'B' && f == 'I') || (cur == 'I' && f == 'B') {
                    'X'
                } else {
                    f
                };
                fonts.push(f);
                out.push_str(&if f == 'X' {
                    "\\f(BI".to_string()
                } else {
                    font(f)
                });
            }
            Span::Close => {
                if fonts.len() > 1 {
                    fonts.pop();
                }
                let f = *fonts.last().unwrap_or(&'R');
                out.push_str(&if f == 'X' {
                    "\\f(BI".to_string()
                } else {
                    font(f)
                });
            }
            Span::Link(text, url) => {
                out.push_str(&inline(&text));
                if is_absolute_url(&url) {
                    out.push_str(&format!(" <{}>", escape_text(&url)));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> Page {
        Page {
            name: "stapvm-test".into(),
            section: "7".into(),
            date: String::new(),
            source: "stapvm 0.1.0".into(),
            manual: "stapvm Manual".into(),
        }
    }

    #[test]
    fn title_becomes_th_and_name() {
        let r = page("# The test language\n\nText.\n", &p());
        assert!(
            r.starts_with(
                ".TH \"STAPVM\\-TEST\" \"7\" \"\" \"stapvm 0.1.0\" \"stapvm Manual\"\n.nh\n.SH NAME\nstapvm\\-test \\- The test language\n.SH DESCRIPTION\n"
            ),
            "{r}"
        );
        assert!(r.ends_with(".PP\nText.\n"), "{r}");
        // Without a title: the name alone.
        let r = page("Text.\n", &p());
        assert!(
            r.contains(".SH NAME\nstapvm\\-test\n.SH DESCRIPTION\n.PP\nText.\n"),
            "{r}"
        );
        // A section right after the title: no DESCRIPTION.
        let r = page("# T\n## Usage\n", &p());
        assert!(
            r.ends_with(".SH NAME\nstapvm\\-test \\- T\n.SH \"USAGE\"\n"),
            "{r}"
        );
    }

    #[test]
    fn headings() {
        let r = body("## Probe points and `@entry`\n### Timers\n#### Deeper\n# Top\n");
        assert_eq!(
            r,
            ".SH \"PROBE POINTS AND @entry\"\n.SS \"Timers\"\n.SS \"Deeper\"\n.SH \"TOP\"\n"
        );
    }

    #[test]
    fn paragraphs_join_lines_and_escape() {
        let r = body("first line\nsecond -p 'x' \\n line\n\n.starts with a dot\n'and a quote\n");
        assert_eq!(
            r,
            ".PP\nfirst line second \\-p \\(aqx\\(aq \\en line\n.PP\n\\&.starts with a dot \\(aqand a quote\n"
        );
    }

    #[test]
    fn non_ascii_becomes_unicode_escapes() {
        assert_eq!(
            body("a \u{2265} b \u{2192} c\n"),
            ".PP\na \\[u2265] b \\[u2192] c\n"
        );
    }

    #[test]
    fn inline_code_emphasis_bold_links() {
        assert_eq!(
            inline("run `stapvm -e` *now* or **never**"),
            "run \\fBstapvm \\-e\\fR \\fInow\\fR or \\fBnever\\fR"
        );
        // Code inside bold returns to bold.
        assert_eq!(inline("**a `b` c**"), "\\fBa \\fBb\\fB c\\fR");
        // Bold inside italics is bold italics.
        assert_eq!(inline("*a **b** c*"), "\\fIa \\f(BIb\\fI c\\fR");
        // An underscore inside a word is a letter.
        assert_eq!(
            inline("print_ubacktrace and _emph_"),
            "print_ubacktrace and \\fIemph\\fR"
        );
        // Stars with spaces around are not emphasis; nor is a lone one.
        assert_eq!(inline("2 * 3 * 4"), "2 * 3 * 4");
        assert_eq!(inline("a*b"), "a*b");
        // Markup inside code is code.
        assert_eq!(
            inline("`*p` and `a_b_c`"),
            "\\fB*p\\fR and \\fBa_\\:b_\\:c\\fR"
        );
        assert_eq!(inline("``a ` b``"), "\\fBa \\(ga b\\fR");
        // Links: text, plus the URL when it is absolute.
        assert_eq!(inline("see [the guide](docs/x.md)"), "see the guide");
        assert_eq!(
            inline("[stap](https://example.org/guide/)"),
            "stap <https://example.org/guide/>"
        );
        assert_eq!(inline("[`code` link](a.md)"), "\\fBcode\\fR link");
        // A bracket that is no link stays.
        assert_eq!(inline("a[1] = 2"), "a[1] = 2");
        // Backslash escapes.
        assert_eq!(inline("\\*not\\* \\`x\\`"), "*not* \\(gax\\(ga");
    }

    #[test]
    fn fenced_and_indented_code() {
        let r = body("Text:\n\n```stap\nprobe begin {\n  printf(\"%d\\n\", -1)\n}\n.x\n```\n\n    indented\n\n    more\nafter\n");
        assert_eq!(
            r,
            ".PP\nText:\n.PP\n.RS 4\n.nf\nprobe begin {\n  printf(\"%d\\en\", \\-1)\n}\n\\&.x\n.fi\n.RE\n\
             .PP\n.RS 4\n.nf\nindented\n\nmore\n.fi\n.RE\n.PP\nafter\n"
        );
        // Markup inside a code block is verbatim.
        let r = body("~~~\n**not bold** `x`\n~~~\n");
        assert!(r.contains("\n**not bold** \\(gax\\(ga\n"), "{r}");
    }

    #[test]
    fn bullet_and_numbered_lists() {
        let r = body("- one\n  continued\n- two `x`\n\n1. first\n2. second\n\nafter\n");
        assert_eq!(
            r,
            ".IP \\(bu 2\none continued\n.IP \\(bu 2\ntwo \\fBx\\fR\n\
             .IP 1. 3\nfirst\n.IP 2. 3\nsecond\n.PP\nafter\n"
        );
    }

    #[test]
    fn nested_list_and_paragraph_in_item() {
        let r = body("- outer\n  - inner a\n  - inner b\n- next\n\n  second paragraph\n");
        assert_eq!(
            r,
            ".IP \\(bu 2\nouter\n.RS\n.IP \\(bu 2\ninner a\n.IP \\(bu 2\ninner b\n.RE\n\
             .IP \\(bu 2\nnext\n.IP\nsecond paragraph\n"
        );
    }

    #[test]
    fn list_ends_at_unindented_paragraph() {
        let r = body("* a\n\nplain\n");
        assert_eq!(r, ".IP \\(bu 2\na\n.PP\nplain\n");
    }

    #[test]
    fn narrow_table_has_natural_columns() {
        let r = body("| a | b |\n|---|:-:|\n| `x` | y \\| z |\n| .dot | |\n");
        assert_eq!(
            r,
            ".PP\n.na\n.TS\ntab(\u{1f});\nlb lb\nl l.\n\\&a\u{1f}\\&b\n_\n\\&\\fBx\\fR\u{1f}\\&y | z\n\\&.dot\u{1f}\\&\n.TE\n.ad\n"
        );
    }

    #[test]
    fn wide_table_wraps_in_text_blocks() {
        let long = "word ".repeat(30);
        let md = format!("| name | what |\n|---|---|\n| `short` | {long} |\n");
        let r = body(&md);
        assert!(r.contains("lbw(5n) lbw(62n)\nlw(5n) lw(62n).\n"), "{r}");
        // Long cells in both columns: the square roots share the room.
        let mut w = vec![50, 200];
        fit_widths(&mut w, &[10, 10], 67);
        assert_eq!(w, vec![22, 45]);
        let mut w = vec![5, 9, 300];
        fit_widths(&mut w, &[5, 9, 12], 64);
        assert_eq!(w, vec![5, 9, 50]);
        // A long unbreakable word widens its column.
        let mut w = vec![30, 300];
        fit_widths(&mut w, &[25, 9], 67);
        assert_eq!(w, vec![25, 42]);
        assert_eq!(longest_word("`kernel.function`/x and elsewhere"), 9);
        assert!(
            r.contains("T{\n\\fBshort\\fR\nT}\u{1f}T{\nword word"),
            "{r}"
        );
        // A pipe inside a code span does not split the cell.
        let cells = cells("| `a | b` | c |");
        assert_eq!(cells, vec!["`a | b`", "c"]);
    }

    #[test]
    fn quotes_rules_and_comments() {
        let r = body("> quoted\n> text\n\n---\n<!-- hidden\nstill hidden -->\nshown\n");
        assert_eq!(r, ".PP\n.RS 4\n.PP\nquoted text\n.RE\n.PP\nshown\n");
    }

    #[test]
    fn macro_arguments_are_quoted() {
        assert_eq!(quote_arg("a \"b\" -c"), "\"a \\(dqb\\(dq \\-c\"");
    }
}
