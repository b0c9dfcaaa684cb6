//! The preprocessor: `@define` macros and `%( COND %? THEN %: ELSE %)`
//! conditionals, on the token stream, before the parser (stap's `scan_pp1`
//! and `scan_pp`, parse.cxx).
//!
//! Needs: the tokens from `lexer::lex` (command-line arguments are already
//! pasted) and the `Target` the conditions test. Produces the tokens the
//! parser sees, or the first preprocessing error (stap stops at it too).
//!
//! Two stages, pulled token by token exactly as stap does, because the
//! order matters: macro invocations are expanded first (`scan_pp1`), and the
//! conditional stage (`scan_pp`) reads the expanded stream; inside the
//! untaken branch of a conditional, `@define` is not catalogued and errors
//! are ignored, and the conditions of nested conditionals are never
//! evaluated (parseok/fourteen.stp). Macro parameters are closures over the
//! invocation site. Expansion depth and output size are bounded so no input
//! can loop or exhaust memory.
use super::lexer::{TokKind, Token};
use crate::ast::Span;
use crate::diag::Diagnostic;
use crate::glob::fnmatch;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// What the `%( )` conditions compare against, and the command-line
/// settings of a compilation that are not script text or limits
/// (`-W`, `-u`, `-G`, `-I`; the kernel's symbols for `check`).
#[derive(Debug, Clone)]
pub struct Target {
    /// `kernel_vr` (and `kernel_v`, the part before the first `-`): the
    /// release compiled for (the CLI gives the running kernel's, or stap's
    /// `-r RELEASE`).
    pub kernel_release: String,
    /// `arch`.
    pub arch: String,
    /// `runtime`.
    pub runtime: String,
    /// `systemtap_v`: the stap version we are compatible with.
    pub systemtap_v: String,
    /// `systemtap_privilege`.
    pub privilege: String,
    /// `guru_mode` (stap `-g`); embedded C parses only in guru mode.
    pub guru: bool,
    /// `CONFIG_*` values; options not listed are unset (`""`).
    pub kernel_config: Vec<(String, String)>,
    /// stap `-W`: warnings are errors (pass 2 fails when there is one).
    pub werror: bool,
    /// The kernel's functions: when set, pass 2 refuses a function probe
    /// point that matches none (`crate::symbols`; `stapvm check` reads
    /// /proc/kallsyms).
    pub kernel_symbols: Option<std::sync::Arc<crate::symbols::KernelSymbols>>,
    /// stap `-u`: no elision. Unused functions are type-checked and
    /// compiled too, unused globals draw no "Eliding unused variable"
    /// warning, and a script whose probes all reduce to nothing is not
    /// `no probes found`.
    pub unelided: bool,
    /// stap `-G NAME=VALUE`, as given: the initial value of global
    /// `NAME` (`passes::setglobals`).
    pub global_inits: Vec<String>,
    /// stap `-I DIR`: the tapset files found there, in the order stap
    /// reads them (`passes::usertapset`).
    pub tapset_files: Vec<TapsetFile>,
}

/// One tapset file of a `-I` directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TapsetFile {
    /// Its name in messages (`tapset/cursor.stp`).
    pub name: String,
    /// Its text.
    pub text: String,
}

impl Default for Target {
    /// Kernel 6.1.0 (a library default: the CLI sets the release it
    /// compiles for) on x86_64, the kernel runtime, stap 5.0 compatibility,
    /// `stapdev` privilege (stap's value without `--privilege`: stapvm is
    /// run by root, who loads the module; embedded C is refused whatever
    /// the branch), no guru mode, and of the kernel config only what every
    /// kernel stapvm supports has ([`PORTABLE_CONFIG`]).
    fn default() -> Self {
        Target {
            kernel_release: "6.1.0".into(),
            arch: "x86_64".into(),
            runtime: "kernel".into(),
            systemtap_v: "5.0".into(),
            privilege: "stapdev".into(),
            guru: false,
            kernel_config: PORTABLE_CONFIG
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            werror: false,
            kernel_symbols: None,
            unelided: false,
            global_inits: Vec::new(),
            tapset_files: Vec::new(),
        }
    }
}

/// The `CONFIG_*` options `%( CONFIG_X == "y" %? … %)` sees as set: a
/// `.stpb` is compiled once for every kernel, so only options that every
/// supported kernel (Debian's amd64 kernels, 5.10 to 7.3) has, and that
/// guard probe points stapvm implements: perf events (`perf.*`) and
/// hardware breakpoints (`kernel.data`). Every other option is unset.
pub const PORTABLE_CONFIG: &[(&str, &str)] = &[
    ("CONFIG_PERF_EVENTS", "y"),
    ("CONFIG_HAVE_HW_BREAKPOINT", "y"),
];

/// Deepest nesting of macro expansions.
const MAX_EXPANSION_DEPTH: usize = 200;
/// Most tokens the preprocessor may produce or read.
const MAX_TOKENS: usize = 2_000_000;

/// `@words` stap knows: a macro of that name draws a warning.
const ATWORDS: &[&str] = &[
    "cast",
    "defined",
    "probewrite",
    "entry",
    "perf",
    "var",
    "avg",
    "count",
    "sum",
    "min",
    "max",
    "hist_linear",
    "hist_log",
    "const",
    "variance",
    "kregister",
    "uregister",
    "kderef",
    "uderef",
    "enum",
    "enumname",
];

type Params = HashMap<String, Rc<Macro>>;

/// A macro, or a macro parameter (a closure over its invocation site).
#[derive(Debug)]
struct Macro {
    formals: Vec<String>,
    body: Rc<[Token]>,
    /// For a parameter: the parameters of the activation it was passed in.
    closure: Option<Rc<Params>>,
}

struct Activation {
    body: Rc<[Token]>,
    cursor: usize,
    params: Rc<Params>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PpState {
    KeepThen,
    SkipThen,
    KeepElse,
    SkipElse,
}

/// A preprocessing error: message and the token it names (`at:`).
type PpErr = (String, Option<Span>);

fn err<T>(msg: impl Into<String>, t: Option<&Token>) -> Result<T, PpErr> {
    Err((msg.into(), t.map(|t| t.span)))
}

struct Pp<'a> {
    input: &'a [Token],
    pos: usize,
    acts: Vec<Activation>,
    defs: HashMap<String, Rc<Macro>>,
    state: Vec<(Token, PpState)>,
    work: usize,
    target: &'a Target,
    warnings: Vec<Diagnostic>,
    /// The tapset macro library (`LIBRARY`), used when the script does not
    /// define a macro of that name; `None` until a name the library may
    /// define is looked up (most `@word`s are `@entry`, `@cast` ...: the
    /// library is not read for them).
    lib: Option<HashMap<String, Rc<Macro>>>,
    /// `library_may_define()`, once a `@word` is looked up.
    lib_names: Option<Option<HashSet<&'static str>>>,
}

fn is_op(t: Option<&Token>, s: &str) -> bool {
    t.is_some_and(|t| t.is_op(s))
}

impl<'a> Pp<'a> {
    /// A preprocessor at the start of `input`, with no macro defined yet
    /// and `lib` as the macro library.
    fn new(
        input: &'a [Token],
        target: &'a Target,
        lib: Option<HashMap<String, Rc<Macro>>>,
    ) -> Self {
        Pp {
            input,
            pos: 0,
            acts: Vec::new(),
            defs: HashMap::new(),
            state: Vec::new(),
            work: 0,
            target,
            warnings: Vec::new(),
            lib,
            lib_names: None,
        }
    }

    /// How many of the next input tokens pass through both stages
    /// unchanged (what `scan_pp` would return one by one, without the
    /// copies through its stages): none while a macro body is being read
    /// or in an untaken branch, and the run stops at an operator starting
    /// with `@` or `%` and at the `MAX_TOKENS` limit. Takes them.
    fn plain_run(&mut self) -> usize {
        if !self.acts.is_empty() {
            return 0;
        }
        if let Some((_, PpState::SkipThen | PpState::SkipElse)) = self.state.last() {
            return 0;
        }
        let rest = self.input.get(self.pos..).unwrap_or_default();
        let n = rest
            .iter()
            .take(MAX_TOKENS.saturating_sub(self.work))
            .take_while(|t| {
                !(t.kind == TokKind::Op && matches!(t.text.as_bytes().first(), Some(b'@' | b'%')))
            })
            .count();
        self.pos += n;
        self.work += n;
        n
    }

    fn raw(&mut self) -> Option<Token> {
        let t = self.input.get(self.pos).cloned();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    /// stap's `next_pp1`: the next token of the innermost source.
    fn next_pp1(&mut self) -> Result<Option<Token>, PpErr> {
        self.work += 1;
        if self.work > MAX_TOKENS {
            return err("macro expansion produces too many tokens", None);
        }
        let Some(act) = self.acts.last_mut() else {
            return Ok(self.raw());
        };
        let t = act.body.get(act.cursor).cloned();
        if t.is_some() {
            act.cursor += 1;
        }
        Ok(t)
    }

    /// stap's `scan_pp1`: the next token with macros defined and expanded.
    fn scan_pp1(&mut self, ignore_macros: bool) -> Result<Option<Token>, PpErr> {
        loop {
            let Some(t) = self.next_pp1()? else {
                if self.acts.pop().is_none() {
                    return Ok(None);
                }
                continue;
            };
            if t.is_op("@define") && !ignore_macros {
                if !self.acts.is_empty() {
                    return err("'@define' forbidden inside macro body", Some(&t));
                }
                self.define(&t)?;
                continue;
            }
            if t.kind == TokKind::Op && t.text.as_bytes().len() > 1 && t.text.as_bytes()[0] == b'@'
            {
                let name = &t.text[1..];
                let mut from_lib = false;
                let mut decl = self
                    .acts
                    .last()
                    .and_then(|a| a.params.get(name).cloned())
                    .or_else(|| self.defs.get(name).cloned());
                if decl.is_none() {
                    from_lib = true;
                    let may = self
                        .lib_names
                        .get_or_insert_with(library_may_define)
                        .as_ref()
                        .is_none_or(|n| n.contains(name));
                    if may {
                        let target = self.target;
                        decl = self
                            .lib
                            .get_or_insert_with(|| library_macros(target))
                            .get(name)
                            .cloned();
                    }
                }
                let Some(decl) = decl else {
                    return Ok(Some(t));
                };
                if self.acts.len() >= MAX_EXPANSION_DEPTH {
                    return err("macro expansion nested too deeply", Some(&t));
                }
                let here = self.acts.last().map(|a| a.params.clone());
                let params = if decl.formals.is_empty() {
                    decl.closure.clone().unwrap_or_default()
                } else {
                    Rc::new(self.invocation_params(&t, name, &decl, here)?)
                };
                // The library's text is not the script's: its tokens take
                // the span of the invocation, so diagnostics point there.
                let body = if from_lib {
                    decl.body
                        .iter()
                        .map(|b| Token {
                            span: t.span,
                            ..b.clone()
                        })
                        .collect()
                } else {
                    decl.body.clone()
                };
                self.acts.push(Activation {
                    body,
                    cursor: 0,
                    params,
                });
                continue;
            }
            return Ok(Some(t));
        }
    }

    /// `@define NAME[(a, b)] %( BODY %)` after the `@define` token.
    fn define(&mut self, at: &Token) -> Result<(), PpErr> {
        let Some(name_t) = self.raw().filter(|t| t.kind == TokKind::Ident) else {
            let t = self.input.get(self.pos.saturating_sub(1)).unwrap_or(at);
            return err("expected identifier", Some(t));
        };
        let name = name_t.text.owned();
        if self.defs.contains_key(&name) {
            return err(
                format!("attempt to redefine macro '@{name}' in the same file"),
                Some(&name_t),
            );
        }
        if name == "define" {
            return err("attempt to redefine '@define'", Some(&name_t));
        }
        if ATWORDS.contains(&name.as_str()) {
            self.warnings.push(Diagnostic::warning(
                format!("macro redefines built-in operator '@{name}'"),
                name_t.span,
            ));
        }
        let mut formals = Vec::new();
        let mut t = self.raw();
        let saw_params = is_op(t.as_ref(), "(");
        if saw_params {
            loop {
                match self.raw() {
                    Some(p) if p.kind == TokKind::Ident => formals.push(p.text.owned()),
                    other => return err("expected identifier", other.as_ref().or(Some(at))),
                }
                match self.raw() {
                    Some(s) if s.is_op(",") => continue,
                    Some(s) if s.is_op(")") => {
                        t = self.raw();
                        break;
                    }
                    other => return err("expected ',' or ')'", other.as_ref().or(Some(at))),
                }
            }
        }
        if !is_op(t.as_ref(), "%(") {
            let msg = if saw_params {
                "expected '%('"
            } else {
                "expected '%(' or '('"
            };
            return err(msg, t.as_ref().or(Some(&name_t)));
        }
        let mut body = Vec::new();
        let mut nesting = 0usize;
        loop {
            let Some(b) = self.raw() else {
                return err("incomplete macro definition - missing '%)'", Some(&name_t));
            };
            if b.is_op("%(") {
                nesting += 1;
            } else if b.is_op("%)") {
                if nesting == 0 {
                    break;
                }
                nesting -= 1;
            }
            body.push(b);
        }
        self.defs.insert(
            name,
            Rc::new(Macro {
                formals,
                body: body.into(),
                closure: None,
            }),
        );
        Ok(())
    }

    /// Reads `(p1, p2 ...)` of an invocation of `decl`.
    fn invocation_params(
        &mut self,
        inv: &Token,
        name: &str,
        decl: &Macro,
        here: Option<Rc<Params>>,
    ) -> Result<Params, PpErr> {
        let n = decl.formals.len();
        let t = self.next_pp1()?;
        if !is_op(t.as_ref(), "(") {
            return err(
                format!(
                    "expected '(' in invocation of macro '@{name}' taking {n} parameter{}",
                    if n == 1 { "" } else { "s" }
                ),
                t.as_ref().or(Some(inv)),
            );
        }
        let closure = here.unwrap_or_default();
        let mut params = Params::new();
        for (i, formal) in decl.formals.iter().enumerate() {
            let mut body = Vec::new();
            let mut nesting = 0usize;
            let sep = loop {
                let Some(p) = self.next_pp1()? else {
                    return err("could not find end of macro invocation", Some(inv));
                };
                if p.is_op("(") || p.is_op("[") {
                    nesting += 1;
                } else if nesting > 0 && (p.is_op(")") || p.is_op("]")) {
                    nesting -= 1;
                } else if nesting == 0 && (p.is_op(")") || p.is_op(",")) {
                    break p;
                }
                body.push(p);
            };
            if sep.is_op(",") && i + 1 == n {
                return err(
                    format!("too many parameters for macro '@{name}' (expected {n})"),
                    Some(&sep),
                );
            }
            if sep.is_op(")") && i + 1 != n {
                return err(
                    format!("too few parameters for macro '@{name}' (expected {n})"),
                    Some(&sep),
                );
            }
            params.insert(
                formal.clone(),
                Rc::new(Macro {
                    formals: Vec::new(),
                    body: body.into(),
                    closure: Some(closure.clone()),
                }),
            );
        }
        Ok(params)
    }

    /// stap's `skip_pp`: skips an untaken branch, errors ignored; returns
    /// the `%:`, `%?` or `%)` that ends it.
    fn skip_pp(&mut self) -> Result<Option<Token>, PpErr> {
        let mut nesting = 0usize;
        loop {
            let t = match self.scan_pp1(true) {
                Ok(Some(t)) => t,
                Ok(None) => return Ok(None),
                Err(e) if self.work > MAX_TOKENS || self.acts.len() >= MAX_EXPANSION_DEPTH => {
                    return Err(e)
                }
                Err(_) => continue,
            };
            if t.is_op("%(") {
                nesting += 1;
            } else if nesting > 0 && t.is_op("%)") {
                nesting -= 1;
            } else if nesting == 0 && (t.is_op("%:") || t.is_op("%?") || t.is_op("%)")) {
                return Ok(Some(t));
            }
        }
    }

    /// stap's `scan_pp`: the next token the parser sees.
    fn scan_pp(&mut self) -> Result<Option<Token>, PpErr> {
        loop {
            let pp = self.state.last().map(|s| s.1);
            let skip = matches!(pp, Some(PpState::SkipThen | PpState::SkipElse));
            let t = if skip {
                self.skip_pp()?
            } else {
                self.scan_pp1(false)?
            };
            let Some(t) = t else {
                if let Some((open, _)) = self.state.pop() {
                    return err("incomplete conditional at end of file", Some(&open));
                }
                return Ok(None);
            };
            if t.is_op("%?") {
                return err("incomplete conditional - missing '%('", Some(&t));
            }
            if t.is_op("%:") {
                let Some(top) = self.state.last_mut() else {
                    return err("incomplete conditional - missing '%('", Some(&t));
                };
                top.1 = match top.1 {
                    PpState::KeepThen => PpState::SkipElse,
                    PpState::SkipThen => PpState::KeepElse,
                    _ => return err("invalid conditional - duplicate '%:'", Some(&t)),
                };
                continue;
            }
            if t.is_op("%)") {
                if self.state.pop().is_none() {
                    return err("incomplete conditional - missing '%('", Some(&t));
                }
                continue;
            }
            if !t.is_op("%(") {
                return Ok(Some(t));
            }
            let mut result = false;
            let mut and_result = true;
            let n = loop {
                let l = self.scan_pp1(false)?;
                let op = self.scan_pp1(false)?;
                let r = self.scan_pp1(false)?;
                let (Some(l), Some(op), Some(r)) = (l, op, r) else {
                    return err("incomplete condition after '%('", Some(&t));
                };
                // Not short-circuited: stap evaluates (and checks) every
                // comparison.
                and_result &= eval(self.target, &l, &op, &r)?;
                let n = self.scan_pp1(false)?;
                if is_op(n.as_ref(), "&&") {
                    continue;
                }
                result |= and_result;
                and_result = true;
                if !is_op(n.as_ref(), "||") {
                    break n;
                }
            };
            if !is_op(n.as_ref(), "%?") {
                return err("expected '%?' marker for conditional", Some(&t));
            }
            let st = if result {
                PpState::KeepThen
            } else {
                PpState::SkipThen
            };
            self.state.push((t, st));
        }
    }
}

/// The tapset macro library (stap's `*.stpm`): `@prints` and friends.
const LIBRARY: &str = include_str!("tapset.stpm");

/// The macros of `LIBRARY`, defined as a script's would be.
fn library_macros(target: &Target) -> HashMap<String, Rc<Macro>> {
    let tokens = super::lexer::lex(LIBRARY, &[]);
    let mut pp = Pp::new(&tokens, target, Some(HashMap::new()));
    while let Ok(Some(_)) = pp.scan_pp() {}
    pp.defs
}

/// The names `LIBRARY` may define as macros: every word after a
/// `@define` of its text (conditional or not, even in a comment); `None`
/// when some `@define` is followed by what may be a comment (then any name
/// may follow). A `@define` whose next token is no identifier defines
/// nothing. A name not listed is not in `library_macros`, so a lookup of
/// `@entry` or `@cast` need not lex and run the library.
fn library_may_define() -> Option<HashSet<&'static str>> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    let mut names = HashSet::new();
    let mut rest = LIBRARY;
    while let Some(at) = rest.find("@define") {
        rest = &rest[at + "@define".len()..];
        let after = rest.trim_start_matches(|c: char| c.is_ascii_whitespace());
        match after.chars().next() {
            // `@defined` and longer words are other tokens.
            Some(c) if is_word(c) && after.len() == rest.len() => {}
            Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$' => {
                let end = after.find(|c: char| !is_word(c)).unwrap_or(after.len());
                names.insert(&after[..end]);
            }
            Some('/' | '#') => return None,
            _ => {}
        }
    }
    Some(names)
}

/// Whether the preprocessor would hand `tokens` on unchanged: no `%(`
/// conditional marker, no `@define` or other `@word` that could be a macro
/// (a built-in `@count` also counts), and too few tokens for the
/// `MAX_TOKENS` limit. The parser then reads `tokens` as they are (no copy,
/// no macro library): most scripts and all the generated tapset text.
/// `Some` when so, with the index of the first embedded-C token (found in
/// the same pass).
pub fn plain(tokens: &[Token]) -> Option<Option<usize>> {
    if tokens.len() + 2 >= MAX_TOKENS {
        return None;
    }
    let mut embedded = None;
    for (k, t) in tokens.iter().enumerate() {
        match t.kind {
            TokKind::Op
                if matches!(
                    t.text.as_bytes(),
                    [b'@', ..] | b"%(" | b"%?" | b"%:" | b"%)"
                ) =>
            {
                return None
            }
            TokKind::Embedded if embedded.is_none() => embedded = Some(k),
            _ => {}
        }
    }
    Some(embedded)
}

/// Runs the preprocessor over `tokens`: the tokens for the parser and the
/// warnings, or the first error.
pub fn preprocess(
    tokens: &[Token],
    target: &Target,
) -> (Vec<Token>, Vec<Diagnostic>, Option<Diagnostic>) {
    let mut pp = Pp::new(tokens, target, None);
    let mut out = Vec::with_capacity(tokens.len());
    loop {
        let n = pp.plain_run();
        if n > 0 {
            out.extend_from_slice(&tokens[pp.pos - n..pp.pos]);
            continue;
        }
        match pp.scan_pp() {
            Ok(Some(t)) => out.push(t),
            Ok(None) => return (out, pp.warnings, None),
            Err((msg, span)) => {
                let d = Diagnostic {
                    at: span.is_some(),
                    ..Diagnostic::parse(msg, span)
                };
                return (out, pp.warnings, Some(d));
            }
        }
    }
}

fn cmp_ok(ord: std::cmp::Ordering, op: &Token) -> Result<bool, PpErr> {
    use std::cmp::Ordering::*;
    Ok(match op.text.as_str() {
        _ if op.kind != TokKind::Op => return err("expected comparison operator", Some(op)),
        "<=" => ord != Greater,
        ">=" => ord != Less,
        "<" => ord == Less,
        ">" => ord == Greater,
        "==" => ord == Equal,
        "!=" => ord != Equal,
        _ => return err("expected comparison operator", Some(op)),
    })
}

fn eq_ne(op: &Token, matched: bool) -> Result<bool, PpErr> {
    if op.is_op("==") {
        Ok(matched)
    } else if op.is_op("!=") {
        Ok(!matched)
    } else {
        err("expected '==' or '!='", Some(op))
    }
}

/// `strtoll(s, &end, 0)` consuming all of `s`.
fn c_number(s: &str) -> Option<i64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let v = super::parse_number(body, neg)?;
    Some(v)
}

/// stap's `eval_pp_conditional`: one `l op r` comparison.
fn eval(t: &Target, l: &Token, op: &Token, r: &Token) -> Result<bool, PpErr> {
    let ident = l.kind == TokKind::Ident;
    let lt = l.text.as_str();
    if ident && matches!(lt, "kernel_v" | "kernel_vr" | "systemtap_v") {
        if r.kind != TokKind::Str {
            return err("expected string literal", Some(r));
        }
        let target = match lt {
            "kernel_v" => t
                .kernel_release
                .split('-')
                .next()
                .unwrap_or_default()
                .to_string(),
            "kernel_vr" => t.kernel_release.clone(),
            _ => t.systemtap_v.clone(),
        };
        let query = &r.text;
        let wildcard = query.contains(['*', '?', '[']);
        let eqne = op.is_op("==") || op.is_op("!=");
        let ordered = ["<=", ">=", "<", ">"].iter().any(|o| op.is_op(o));
        if !eqne && !ordered {
            return err("expected comparison operator", Some(op));
        }
        if wildcard {
            if !eqne {
                return err(
                    "wildcard not allowed with order comparison operators",
                    Some(op),
                );
            }
            return eq_ne(op, fnmatch(query.as_bytes(), target.as_bytes()));
        }
        return cmp_ok(strverscmp(&target, query), op);
    }
    if ident && lt == "systemtap_privilege" {
        if r.kind != TokKind::Str {
            return err("expected string literal", Some(r));
        }
        return eq_ne(op, t.privilege == r.text.as_str());
    }
    if ident && lt == "guru_mode" {
        if r.kind != TokKind::Number {
            return err("expected number", Some(r));
        }
        let rhs = super::parse_number(&r.text, false);
        if !matches!(rhs, Some(0 | 1)) {
            return err("expected 0 or 1", Some(op));
        }
        return eq_ne(op, rhs == Some(i64::from(t.guru)));
    }
    if ident && (lt == "arch" || lt == "runtime") {
        if r.kind != TokKind::Str {
            return err("expected string literal", Some(r));
        }
        let target = if lt == "arch" { &t.arch } else { &t.runtime };
        return eq_ne(op, fnmatch(r.text.as_bytes(), target.as_bytes()));
    }
    if ident && lt.starts_with("CONFIG_") {
        let config = |name: &str| {
            t.kernel_config
                .iter()
                .rev()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let lhs = config(lt);
        return match r.kind {
            TokKind::Str => eq_ne(op, fnmatch(r.text.as_bytes(), lhs.as_bytes())),
            TokKind::Number => {
                let Some(a) = c_number(&lhs) else {
                    return err("Config option value not a number", Some(l));
                };
                let Some(b) = super::parse_number(&r.text, false) else {
                    return err("number invalid or out of range", Some(r));
                };
                cmp_ok(a.cmp(&b), op)
            }
            TokKind::Ident if r.text.starts_with("CONFIG_") => {
                let rhs = config(&r.text);
                match (c_number(&lhs), c_number(&rhs)) {
                    (Some(a), Some(b)) => cmp_ok(a.cmp(&b), op),
                    _ => cmp_ok(lhs.cmp(&rhs), op),
                }
            }
            _ => err(
                "expected string, number literal or other CONFIG_... as right side operand",
                Some(r),
            ),
        };
    }
    match (&l.kind, &r.kind) {
        (TokKind::Str, TokKind::Str) => cmp_ok(l.text.cmp(&r.text), op),
        (TokKind::Number, TokKind::Number) => {
            match (
                super::parse_number(&l.text, false),
                super::parse_number(&r.text, false),
            ) {
                (Some(a), Some(b)) => cmp_ok(a.cmp(&b), op),
                (None, _) => err("number invalid or out of range", Some(l)),
                _ => err("number invalid or out of range", Some(r)),
            }
        }
        (TokKind::Str, TokKind::Number) if op.kind == TokKind::Op => {
            err("expected string literal as right value", Some(r))
        }
        (TokKind::Number, TokKind::Str) if op.kind == TokKind::Op => {
            err("expected number literal as right value", Some(r))
        }
        _ => err(
            "expected 'arch', 'kernel_v', 'kernel_vr', 'systemtap_v',\n             \
             'runtime', 'systemtap_privilege', 'CONFIG_...', or\n             \
             comparison between strings or integers",
            Some(l),
        ),
    }
}

/// glibc's `strverscmp`, simplified: digit runs compare by value (a run
/// with leading zeros as a fraction), other bytes as bytes.
pub fn strverscmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let si = i;
            while i < a.len() && a[i].is_ascii_digit() {
                i += 1;
            }
            let sj = j;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let (x, y) = (&a[si..i], &b[sj..j]);
            let frac = x.len() > 1 && x[0] == b'0' || y.len() > 1 && y[0] == b'0';
            let ord = if frac {
                x.cmp(y)
            } else {
                let x = trim_zeros(x);
                let y = trim_zeros(y);
                x.len().cmp(&y.len()).then(x.cmp(y))
            };
            if ord != Ordering::Equal {
                return ord;
            }
        } else {
            if a[i] != b[j] {
                return a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (a.len() - i).cmp(&(b.len() - j))
}

fn trim_zeros(x: &[u8]) -> &[u8] {
    let k = x.iter().position(|&c| c != b'0').unwrap_or(x.len());
    &x[k..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lexer::lex;
    use std::cmp::Ordering::*;

    fn run(src: &str, args: &[&str]) -> Result<String, String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let toks = lex(src, &args);
        let (out, _, e) = preprocess(&toks, &Target::default());
        match e {
            Some(d) => Err(d.message),
            None => Ok(out
                .iter()
                .map(|t| t.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")),
        }
    }

    #[test]
    fn conditionals() {
        assert_eq!(
            run("%( kernel_v >= \"2.6\" %? a %: b %)", &[]).unwrap(),
            "a"
        );
        assert_eq!(run("%( arch == \"i?86\" %? a %: b %)", &[]).unwrap(), "b");
        assert_eq!(
            run("%( 1 == 2 || 2 == 2 && 3 == 3 %? a %)", &[]).unwrap(),
            "a"
        );
        assert_eq!(
            run("%( $# == 1 %? %( 1 == 0 %? $9 %: c %) %)", &["x"]).unwrap(),
            "c"
        );
        assert_eq!(
            run("%( CONFIG_X == \"\" %? a %) %( CONFIG_Y == 1 %? b %)", &[]).unwrap_err(),
            "Config option value not a number"
        );
        assert_eq!(
            run("%( 0 == 0 %?", &[]).unwrap_err(),
            "incomplete conditional at end of file"
        );
    }

    #[test]
    fn macros() {
        assert_eq!(
            run("@define f(a, b) %( @a + @b %) x = @f(1, (2, 3))", &[]).unwrap(),
            "x = 1 + ( 2 , 3 )"
        );
        assert_eq!(
            run(
                "@define b(x) %( [@x] %) @define f(a) %( @b(@a) %) @f(q)",
                &[]
            )
            .unwrap(),
            "[ q ]"
        );
        assert_eq!(
            run("@define a %( @a %) @a", &[]).unwrap_err(),
            "macro expansion nested too deeply"
        );
        assert!(run("@define f(a) %( @a %) @f(1, 2)", &[])
            .unwrap_err()
            .starts_with("too many parameters"));
    }

    #[test]
    fn version_and_glob() {
        assert_eq!(strverscmp("6.1.0", "2.6"), Greater);
        assert_eq!(strverscmp("2.6.9", "2.6.18"), Less);
        assert_eq!(strverscmp("3.5", "3.5"), Equal);
        assert!(fnmatch(b"x86_*", b"x86_64"));
        assert!(fnmatch(b"i[3-6]86", b"i486"));
        assert!(!fnmatch(b"i[!3-6]86", b"i486"));
        assert!(fnmatch(b"", b""));
        assert!(!fnmatch(b"a", b""));
    }

    /// The library is read only for names it may define: every macro it
    /// defines passes the cheap check, the built-in `@word`s do not.
    #[test]
    fn library_may_define_every_library_macro() {
        let defs = library_macros(&Target::default());
        assert!(defs.len() > 50);
        let names = library_may_define().expect("no @define before a comment");
        for name in defs.keys() {
            assert!(names.contains(name.as_str()), "{name}");
        }
        for w in ["entry", "cast", "defined", "count", "var", "nope"] {
            assert!(!names.contains(w), "{w}");
        }
    }
}
