//! Name and probe-point resolution.
//!
//! Computes: what every probe point means (probe kind, handler context,
//! symbolic target, timer period, flags), which names are globals and which
//! are probe locals, which built-in each call is, and how each global is
//! used (for stap's print-at-exit rule). Reports the semantic errors of this
//! stage (unknown probe points and functions, `$return` outside return
//! probes, `break` outside loops, non-lvalues, every `not supported yet`
//! feature) and the `syscall.open` warning.
//!
//! Needs: the parsed `Script`. Runs next: `passes::types`.
use crate::ast::*;
use crate::diag::{Diagnostic, Diags};
use std::collections::HashMap;
use vm_spec::abi;
use vm_spec::program::{ProbeTarget, TargetSite};

/// What a name or call in an expression refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ref {
    /// Nothing (not a name or call).
    #[default]
    None,
    /// `Resolved::globals[i]`.
    Global(usize),
    /// Local `i` of the enclosing probe.
    Local(usize),
    /// A built-in function.
    Builtin(Builtin),
    /// A user function: `Resolved::funcs[i]`.
    Func(usize),
}

/// The built-in functions this compiler lowers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// A helper (`abi::STP_HLP_*`); `arg` when it takes an integer.
    Helper {
        /// Helper id.
        id: u32,
        /// Takes one integer argument.
        arg: bool,
    },
    /// A helper without argument whose result is divided by `div`
    /// (`gettimeofday_ms` = GETTIMEOFDAY_NS / 1000000).
    HelperDiv {
        /// Helper id.
        id: u32,
        /// Divisor.
        div: i64,
    },
    /// `strlen(s)`.
    Strlen,
    /// `exit()`.
    Exit,
    /// `substr(s, start, len)`.
    Substr,
    /// `isinstr(s1, s2)`.
    Isinstr,
    /// `strpos(s1, s2)`.
    Strpos,
    /// `strtol(s, base)`.
    Strtol,
    /// `str_replace(s, from, to)`.
    StrReplace,
    /// `text_str(s)`.
    TextStr,
    /// `stringat(s, i)`.
    Stringat,
    /// `error(msg)`.
    Error,
    /// `print_char(c)`.
    PrintChar,
    /// `big_endian2/4/8(v)`, `little_endian2/4/8(v)`: `v`'s low `bytes`
    /// bytes in that byte order, read as an unsigned number (x86-64 is
    /// little-endian, so `big` swaps them).
    Endian {
        /// 2, 4 or 8.
        bytes: u8,
        /// Big-endian (swap).
        big: bool,
    },
    /// `text_strn(s, len, quoted)`.
    TextStrn,
    /// `string_quoted(s)`.
    StringQuoted,
    /// `target()`: the PID of stap's `-x PID` / `-c CMD`, else 0 (a
    /// constant the loader patches: `Program::target_konst`).
    Target,
    /// `switch_file()`: the `-o FILE` output moves on to the next file
    /// (`Program::switch_file_format`).
    SwitchFile,
    /// `tokenize(input, delim)` and `tokenize(delim)`.
    Tokenize,
    /// `pp()`: the probe point as written (a constant of the handler).
    Pp,
    /// `abort()`: `exit()` that also ends the handler at once, uncaught.
    Abort,
    /// `warn(msg)`: `WARNING: msg` on stderr (`Program::warn_format`).
    Warn,
    /// `probe_type()`: stap's name of the probe's low-level kind (a
    /// constant of the handler, `passes::tier1`).
    ProbeType,
}

impl Builtin {
    /// The argument types of the string built-ins (true = string), or
    /// `None` for the helpers, whose arguments are longs.
    pub fn string_args(self) -> Option<&'static [bool]> {
        use Builtin::*;
        Some(match self {
            Strlen | TextStr | Error | StringQuoted => &[true],
            PrintChar | Endian { .. } => &[false],
            TextStrn => &[true, false, false],
            Tokenize => &[true, true],
            Pp | Target | SwitchFile | ProbeType => &[],
            Warn => &[true],
            Substr => &[true, false, false],
            Isinstr | Strpos => &[true, true],
            Strtol | Stringat => &[true, false],
            StrReplace => &[true, true, true],
            Helper { .. } | HelperDiv { .. } | Exit | Abort => return None,
        })
    }
}

/// One global variable.
#[derive(Debug, Clone)]
pub struct GlobalInfo {
    /// Name.
    pub name: String,
    /// Its declaration token.
    pub span: Span,
    /// Initialiser.
    pub init: Option<Literal>,
    /// Assigned or incremented somewhere.
    pub written: bool,
    /// Its value is used somewhere (stap's `read && used`).
    pub used: bool,
    /// An associative array: declared `[N]` / `%`, or used with keys.
    pub array: bool,
    /// `[N]`: the declared maximum number of elements.
    pub size: Option<i64>,
    /// `%`: a wrap-around array.
    pub wrap: bool,
}

/// One resolved probe point.
#[derive(Debug, Clone)]
pub struct Point {
    /// `abi::STP_PROBE_*`.
    pub kind: u8,
    /// `abi::STP_CTX_*` of its handler.
    pub ctx: u8,
    /// Symbolic target.
    pub target: ProbeTarget,
    /// Timer period.
    pub period_ns: u64,
    /// kretprobe maxactive.
    pub maxactive: u32,
    /// `abi::STP_PROBE_F_*`.
    pub flags: u8,
    /// The point as written.
    pub display: String,
    /// Its first component.
    pub span: Span,
    /// `begin(N)` / `end(N)` sequence number (0 otherwise).
    pub sequence: i64,
    /// `oneshot`: a begin probe that calls exit() after its body.
    pub oneshot: bool,
}

/// One user function, resolved.
#[derive(Debug, Clone)]
pub struct RFunc {
    /// Index of the `Item::Function` in `Script::items`.
    pub item: usize,
    /// Its name.
    pub name: String,
    /// Number of parameters: `locals[..nparams]` are the parameters.
    pub nparams: usize,
    /// Its local variables (parameters first): name and first use.
    pub locals: Vec<(String, Span)>,
    /// Called, directly or not, from some probe (only these are checked
    /// and lowered, as stap elides the others).
    pub used: bool,
}

/// One probe declaration, resolved.
#[derive(Debug, Clone)]
pub struct RProbe {
    /// Index of the `Item::Probe` in `Script::items`.
    pub item: usize,
    /// Its points that get a handler (`never` has none).
    pub points: Vec<Point>,
    /// Its local variables: name and first use.
    pub locals: Vec<(String, Span)>,
}

/// The result of resolution.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    /// Global variables in declaration order.
    pub globals: Vec<GlobalInfo>,
    /// Probes in source order.
    pub probes: Vec<RProbe>,
    /// User functions in source order.
    pub funcs: Vec<RFunc>,
    /// What each expression refers to, indexed by `ExprId`.
    pub refs: Vec<Ref>,
    /// Globals used as statistics, in order of first use.
    pub stats: Vec<StatGlobal>,
    /// `delete x` of a global scalar: the `Var` expressions.
    pub delete_globals: Vec<ExprId>,
    /// Target variables (`$x`, `$x->a->b`; not `$return`): the `Target` or
    /// `Deref` expression, where its parameter comes from and the member
    /// chain.
    pub target_vars: HashMap<ExprId, (TargetSite, Vec<String>)>,
    /// `@defined(x)` decided at compile time (the probe has no target
    /// variables, or `x` is `$return`): the `AtOp` expression and the
    /// answer. Any other `@defined(x)` has `x` in `target_vars` and is
    /// answered at load time (`RelocKind::Exists`).
    pub defined_consts: HashMap<ExprId, bool>,
}

impl Resolved {
    /// The locals of body `i`: probe `i`, or function `i - probes.len()`
    /// (the numbering `types` and `lower` use for bodies).
    pub fn body_locals(&self, i: usize) -> &[(String, Span)] {
        match self.probes.get(i) {
            Some(p) => &p.locals,
            None => self
                .funcs
                .get(i - self.probes.len())
                .map_or(&[], |f| f.locals.as_slice()),
        }
    }
}

/// The message of the `syscall.open` warning.
pub const SYSCALL_OPEN_WARNING: &str = "syscall.open only sees open(2); glibc's open() calls \
openat(2), so most programs call openat: probe syscall.open, syscall.openat to see both";

/// Tapset functions people use that are not built in yet: calling one says
/// so rather than "unresolved function".
const KNOWN_LATER: &[&str] = &[
    // Regex subexpressions (`=~` itself is supported: compiler/src/regex.rs).
    "matched",
    "matched_str",
    "ngroups",
    "ctime",
    "errno_str",
    "pp",
    "user_string_quoted",
    "int_arg",
    "uint_arg",
    "long_arg",
    "ulong_arg",
    "pointer_arg",
    "s32_arg",
    "u32_arg",
    "returnval",
    "returnstr",
    "ansi_clear_screen",
    "ansi_set_color",
    "ansi_reset_color",
    "ansi_new_line",
    "ansi_cursor_move",
    "gettimeofday_cycles",
    "system",
    "syscall_name",
    "execname_of",
    "print_ubacktrace",
    "ubacktrace",
    "usymname",
];

fn builtin(name: &str) -> Option<(Builtin, usize)> {
    use Builtin::*;
    let h = |id: abi::stp_helper| Helper { id, arg: false };
    let ha = |id: abi::stp_helper| Helper { id, arg: true };
    Some(match name {
        "pid" => (h(abi::STP_HLP_PID), 0),
        "tid" => (h(abi::STP_HLP_TID), 0),
        "ppid" => (h(abi::STP_HLP_PPID), 0),
        "uid" => (h(abi::STP_HLP_UID), 0),
        "euid" => (h(abi::STP_HLP_EUID), 0),
        "gid" => (h(abi::STP_HLP_GID), 0),
        "cpu" => (h(abi::STP_HLP_CPU), 0),
        "execname" => (h(abi::STP_HLP_EXECNAME), 0),
        "jiffies" => (h(abi::STP_HLP_JIFFIES), 0),
        "local_clock_ns" => (h(abi::STP_HLP_LOCAL_CLOCK_NS), 0),
        "gettimeofday_ns" => (h(abi::STP_HLP_GETTIMEOFDAY_NS), 0),
        "retval" => (h(abi::STP_HLP_RETVAL), 0),
        "gettimeofday_us" | "gettimeofday_ms" | "gettimeofday_s" => {
            let div = match name {
                "gettimeofday_us" => 1_000,
                "gettimeofday_ms" => 1_000_000,
                _ => 1_000_000_000,
            };
            (
                HelperDiv {
                    id: abi::STP_HLP_GETTIMEOFDAY_NS,
                    div,
                },
                0,
            )
        }
        "kernel_string" => (ha(abi::STP_HLP_KERNEL_STRING), 1),
        "user_string" => (ha(abi::STP_HLP_USER_STRING), 1),
        // kernel_pointer: a pointer is a long on the 64-bit targets.
        "kernel_long" | "kernel_pointer" => (ha(abi::STP_HLP_KERNEL_LONG), 1),
        "kernel_int" => (ha(abi::STP_HLP_KERNEL_INT), 1),
        "kernel_short" => (ha(abi::STP_HLP_KERNEL_SHORT), 1),
        "kernel_char" => (ha(abi::STP_HLP_KERNEL_CHAR), 1),
        "task_current" => (h(abi::STP_HLP_TASK_CURRENT), 0),
        "addr" => (h(abi::STP_HLP_ADDR), 0),
        "user_mode" => (h(abi::STP_HLP_USER_MODE), 0),
        "symname" => (ha(abi::STP_HLP_SYMNAME), 1),
        "symdata" => (ha(abi::STP_HLP_SYMDATA), 1),
        "pexecname" => (h(abi::STP_HLP_PEXECNAME), 0),
        "egid" => (h(abi::STP_HLP_EGID), 0),
        "HZ" => (h(abi::STP_HLP_HZ), 0),
        "get_cycles" => (h(abi::STP_HLP_GET_CYCLES), 0),
        // CLOCK_MONOTONIC: the clock LOCAL_CLOCK_NS reads (helpers.h).
        "ktime_get_ns" => (h(abi::STP_HLP_LOCAL_CLOCK_NS), 0),
        // The tapset's cpu_clock_ns and randint (library.stp).
        "__cpu_online" => (ha(abi::STP_HLP_CPU_ONLINE), 1),
        "__random" => (ha(abi::STP_HLP_RANDOM), 1),
        "abort" => (Abort, 0),
        "warn" => (Warn, 1),
        "probe_type" => (ProbeType, 0),
        "backtrace" => (h(abi::STP_HLP_BACKTRACE), 0),
        // The built-in tapset's raw argument slot (compiler/src/tapset/).
        "__stp_arg" => (ha(abi::STP_HLP_ARG), 1),
        "__user_string_ok" => (ha(abi::STP_HLP_USER_STRING_OK), 1),
        "__mm_arg" => (ha(abi::STP_HLP_MM_ARG), 1),
        // uconversions.stp's signed reads: 0 where the read faults.
        "user_long" | "user_ulong" | "user_int64" | "user_uint64" => {
            (ha(abi::STP_HLP_USER_LONG), 1)
        }
        "user_int" | "user_int32" => (ha(abi::STP_HLP_USER_INT), 1),
        "user_short" | "user_int16" => (ha(abi::STP_HLP_USER_SHORT), 1),
        "user_char" | "user_int8" => (ha(abi::STP_HLP_USER_CHAR), 1),
        "uaddr" => (h(abi::STP_HLP_UADDR), 0),
        "is_return" => (h(abi::STP_HLP_IS_RETURN), 0),
        "pid2task" => (ha(abi::STP_HLP_PID2TASK), 1),
        // The library's register() and modname() (tapset/library.stp).
        "__register" => (ha(abi::STP_HLP_REGISTER), 1),
        "__modname" => (ha(abi::STP_HLP_MODNAME), 1),
        "strlen" => (Strlen, 1),
        "exit" => (Exit, 0),
        "substr" => (Substr, 3),
        "isinstr" => (Isinstr, 2),
        "strpos" => (Strpos, 2),
        "strtol" => (Strtol, 2),
        "str_replace" => (StrReplace, 3),
        "text_str" => (TextStr, 1),
        "stringat" => (Stringat, 2),
        "error" => (Error, 1),
        "print_char" => (PrintChar, 1),
        "text_strn" => (TextStrn, 3),
        "string_quoted" => (StringQuoted, 1),
        "tokenize" => (Tokenize, 2),
        "pp" => (Pp, 0),
        "target" => (Target, 0),
        "switch_file" => (SwitchFile, 0),
        "big_endian2" | "big_endian4" | "big_endian8" | "little_endian2" | "little_endian4"
        | "little_endian8" => (
            Endian {
                bytes: name.as_bytes()[name.len() - 1] - b'0',
                big: name.starts_with("big"),
            },
            1,
        ),
        _ => return None,
    })
}

/// The context mask a helper is allowed in (helpers.h).
fn helper_ctx_mask(id: u32) -> u32 {
    vm_spec::tables::HELPERS
        .get(id as usize)
        .map(|h| h.ctx_mask)
        .unwrap_or(0)
}

struct Resolver<'a> {
    diags: &'a mut Diags,
    globals: Vec<GlobalInfo>,
    refs: Vec<Ref>,
    /// Locals of the probe being walked.
    locals: Vec<(String, Span)>,
    /// Which of them are assigned somewhere.
    assigned: Vec<bool>,
    /// Contexts of the probe being walked.
    ctxs: Vec<u8>,
    /// Points of the probe being walked (none in a function).
    cur_points: Vec<Point>,
    /// See `Resolved::target_vars`.
    target_vars: HashMap<ExprId, (TargetSite, Vec<String>)>,
    /// See `Resolved::defined_consts`.
    defined_consts: HashMap<ExprId, bool>,
    /// Loop nesting of the statement being walked.
    loops: u32,
    /// Globals read anywhere (stap's "read", for "Eliding unused variable").
    read_globals: Vec<usize>,
    /// User functions by name: (name, item index, parameter names).
    func_names: Vec<(String, usize)>,
    /// Functions the body being walked calls.
    calls: Vec<usize>,
    /// Walking a function body.
    in_func: bool,
    /// Statistics found so far (globals used with `<<<` or an extractor).
    stats: Vec<StatGlobal>,
    /// Plain (scalar) uses of globals: a statistic may have none.
    scalar_uses: Vec<(usize, Span)>,
    /// Arrays of the enclosing `foreach` loops.
    iterating: Vec<usize>,
    /// Arrays the body being walked writes.
    writes: Vec<usize>,
    /// Calls inside a `foreach`: function, array iterated, call token.
    iter_calls: Vec<(usize, usize, Span)>,
    /// `delete` of global scalars.
    delete_globals: Vec<ExprId>,
    /// Elements named as statistics (`a[k] <<< v`, `@count(a[k])`).
    stat_elems: Vec<(usize, Span)>,
    /// Elements used as values (`a[k]`, `a[k] = v`, `v = [k] in a`).
    value_elems: Vec<(usize, Span)>,
    /// `foreach (... in a @sum-)`: the array and the extractor.
    stat_sorts: Vec<(usize, String, Span)>,
}

/// A global used as a statistic (`s <<< v`, `@count(s)` ...).
#[derive(Debug, Clone)]
pub struct StatGlobal {
    /// Index into `Resolved::globals`.
    pub global: usize,
    /// The histogram the script draws, if any.
    pub hist: vm_spec::program::Hist,
    /// `@variance` is used.
    pub variance: bool,
    /// `@variance`'s bit shift.
    pub shift: u8,
    /// A statistics array (`a[k] <<< v`): the value of a global array.
    pub array: bool,
}

/// The extractors and histograms of statistics (`@count` ...).
pub const STAT_OPS: &[&str] = &[
    "@count",
    "@sum",
    "@min",
    "@max",
    "@avg",
    "@variance",
    "@hist_log",
    "@hist_linear",
];

fn lit_num(c: &Component) -> Option<i64> {
    match c.arg {
        Some(Literal::Num(n, _)) => Some(n),
        _ => None,
    }
}

fn lit_str(c: &Component) -> Option<&str> {
    match &c.arg {
        Some(Literal::Str(s, _)) => std::str::from_utf8(s).ok(),
        _ => None,
    }
}

impl Resolver<'_> {
    fn err(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn unsupported(&mut self, feature: &str, span: Span) {
        self.err(Diagnostic::unsupported(feature, span));
    }

    /// `timer.profile`, `timer.profile.tick`, `perf.sw.cpu_clock` (every
    /// `period_ns` of CPU time; 0: every tick): a timer flagged
    /// `STP_PROBE_F_PROFILE` (abi.h), one per CPU, with the interrupted
    /// registers for `addr()` and `user_mode()`. `c` are the components
    /// that take no argument.
    fn profile_point(&mut self, mut p: Point, c: &[Component], period_ns: u64) -> Option<Point> {
        if let Some(a) = c.iter().find(|x| x.arg.is_some()) {
            self.err(Diagnostic::semantic("probe point mismatch", a.span));
            return None;
        }
        p.kind = abi::STP_PROBE_TIMER as u8;
        p.ctx = abi::STP_CTX_TIMER as u8;
        p.period_ns = period_ns;
        p.flags |= abi::STP_PROBE_F_PROFILE as u8;
        Some(p)
    }

    /// Resolves one probe point; `None` after reporting an error, or for
    /// `never`.
    fn point(&mut self, pp: &ProbePoint) -> Option<Point> {
        let c = &pp.components;
        let first = c.first()?;
        let span = first.span;
        let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
        if let Some(cond) = pp.condition {
            self.unsupported("conditional probe points (if)", cond);
            return None;
        }
        if pp.sufficient {
            self.unsupported("sufficient probe points (!)", span);
            return None;
        }
        if let Some(w) = c.iter().find(|c| c.name.contains('*')) {
            self.unsupported("wildcard probe points", w.span);
            return None;
        }
        let flags = if pp.optional {
            abi::STP_PROBE_F_OPTIONAL as u8
        } else {
            0
        };
        let mut p = Point {
            kind: 0,
            ctx: 0,
            target: ProbeTarget::None,
            period_ns: 0,
            maxactive: 0,
            flags,
            display: pp.display(),
            span,
            sequence: 0,
            oneshot: false,
        };
        let mismatch = |r: &mut Self, at: &Component| {
            r.err(Diagnostic::semantic("probe point mismatch", at.span));
            None
        };
        // An argument where none is allowed, or a missing one.
        let bad_arg = |r: &mut Self, at: &Component| {
            r.err(Diagnostic::semantic("probe point mismatch", at.span));
            None
        };
        match names.as_slice() {
            ["begin"] | ["end"] => {
                if first.arg.is_some() && lit_num(first).is_none() {
                    return bad_arg(self, first);
                }
                p.sequence = lit_num(first).unwrap_or(0);
                let begin = names[0] == "begin";
                p.kind = if begin {
                    abi::STP_PROBE_BEGIN
                } else {
                    abi::STP_PROBE_END
                } as u8;
                p.ctx = if begin {
                    abi::STP_CTX_BEGIN
                } else {
                    abi::STP_CTX_END
                } as u8;
                if p.flags != 0 {
                    p.flags = 0;
                }
                Some(p)
            }
            ["never"] => None,
            ["oneshot"] if first.arg.is_none() => {
                p.kind = abi::STP_PROBE_BEGIN as u8;
                p.ctx = abi::STP_CTX_BEGIN as u8;
                p.flags = 0;
                p.oneshot = true;
                Some(p)
            }
            ["error"] => {
                // Runs at STOP instead of the end probes when the session
                // is in the error state; handler context END.
                if first.arg.is_some() && lit_num(first).is_none() {
                    return bad_arg(self, first);
                }
                p.sequence = lit_num(first).unwrap_or(0);
                p.kind = abi::STP_PROBE_ERROR as u8;
                p.ctx = abi::STP_CTX_END as u8;
                p.flags = 0;
                Some(p)
            }
            ["timer", unit] => {
                let unit_c = &c[1];
                let scale: i64 = match *unit {
                    "s" | "sec" => 1_000_000_000,
                    "ms" | "msec" => 1_000_000,
                    "us" | "usec" => 1_000,
                    "ns" | "nsec" => 1,
                    "hz" => 0,
                    "jiffies" => {
                        self.unsupported("timer.jiffies", unit_c.span);
                        return None;
                    }
                    "profile" => return self.profile_point(p, c, 0),
                    _ => return mismatch(self, unit_c),
                };
                let Some(n) = lit_num(unit_c) else {
                    return bad_arg(self, unit_c);
                };
                const MIN: i64 = 100_000;
                const MAX: i64 = 1_000_000_000 * 60 * 60 * 24;
                let ns = if scale == 0 {
                    if n <= 0 {
                        None
                    } else {
                        Some(1_000_000_000 / n)
                    }
                } else {
                    n.checked_mul(scale)
                };
                match ns {
                    Some(ns) if (MIN..=MAX).contains(&ns) => {
                        p.period_ns = ns as u64;
                    }
                    _ => {
                        let (lo, hi) = if scale == 0 {
                            (1, 1_000_000_000 / MIN)
                        } else {
                            (if scale < MIN { MIN / scale } else { 1 }, MAX / scale)
                        };
                        self.err(
                            Diagnostic::semantic("while resolving probe point", span).with_note(
                                format!("interval value out of range ({lo}, {hi})"),
                                None,
                            ),
                        );
                        return None;
                    }
                }
                p.kind = abi::STP_PROBE_TIMER as u8;
                p.ctx = abi::STP_CTX_TIMER as u8;
                Some(p)
            }
            ["timer", _, "randomize"] => {
                self.unsupported("timer randomize", c[2].span);
                None
            }
            ["kernel" | "kprobe", "function", ..] => {
                if first.arg.is_some() {
                    return bad_arg(self, first);
                }
                self.function_point(p, c, None, 1)
            }
            ["module", "function", ..] => self.function_point(p, c, Some(first), 1),
            ["kprobe", "module", "function", ..] => {
                if first.arg.is_some() {
                    return bad_arg(self, first);
                }
                self.function_point(p, c, Some(&c[1]), 2)
            }
            ["syscall" | "nd_syscall", name, rest @ ..] => {
                let nc = &c[1];
                if first.arg.is_some() || nc.arg.is_some() {
                    return bad_arg(self, if first.arg.is_some() { first } else { nc });
                }
                let ret = match rest {
                    [] => false,
                    ["return"] if c[2].arg.is_none() => true,
                    _ => return mismatch(self, &c[2]),
                };
                p.target = ProbeTarget::FirstOf(vec![
                    format!("__x64_sys_{name}"),
                    format!("__se_sys_{name}"),
                    format!("sys_{name}"),
                ]);
                self.set_kprobe(&mut p, ret);
                Some(p)
            }
            ["process", ..] => {
                self.unsupported("user-space probes (process)", span);
                None
            }
            ["module", ..] | ["kprobe", "module", ..] => {
                let at = if names[0] == "module" { 1 } else { 2 };
                mismatch(self, c.get(at).unwrap_or(first))
            }
            ["kernel", "trace", ..] => {
                // kernel.trace("name"): one built-in tracepoint, its raw
                // arguments in the ARG helper's slots 0..5 (for `$arg`s).
                let tc = &c[1];
                if first.arg.is_some() {
                    return bad_arg(self, first);
                }
                if let Some(extra) = c.get(2) {
                    return mismatch(self, extra);
                }
                let Some(name) = lit_str(tc) else {
                    return bad_arg(self, tc);
                };
                if name.contains(['*', '?', '[', ':']) {
                    self.unsupported("wildcard tracepoints", tc.span);
                    return None;
                }
                if name.is_empty()
                    || name.len() > abi::STP_MAX_SYMBOL_LEN as usize
                    || !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
                {
                    self.err(Diagnostic::semantic(
                        format!("invalid tracepoint name \"{name}\""),
                        tc.span,
                    ));
                    return None;
                }
                p.kind = abi::STP_PROBE_TRACEPOINT as u8;
                p.ctx = abi::STP_CTX_KPROBE as u8;
                p.target = ProbeTarget::Symbol {
                    name: name.to_string(),
                    offset: 0,
                };
                Some(p)
            }
            ["kernel", "tracepoint", ..] => {
                self.unsupported("tracepoints", span);
                None
            }
            ["kernel", "statement" | "data", ..] | ["kprobe", "statement", ..] => {
                self.unsupported(&format!("{}.{} probes", names[0], names[1]), span);
                None
            }
            ["timer", "profile", "tick"] => self.profile_point(p, c, 0),
            ["perf", "sw", "cpu_clock"] => self.profile_point(p, c, 1_000_000),
            ["perf", "sw", "cpu_clock", "sample"] => match lit_num(&c[3]) {
                Some(n) if (100_000..=1_000_000_000).contains(&n) => {
                    self.profile_point(p, &c[..3], n as u64)
                }
                _ => bad_arg(self, &c[3]),
            },
            ["perf" | "procfs" | "netfilter" | "java" | "python2" | "python3" | "input"
            | "syscall_any" | "nd_syscall_any" | "tp_syscall" | "debuginfod" | "lsm"
            | "prometheus", ..] => {
                self.unsupported(&format!("{} probes", names[0]), span);
                None
            }
            _ => {
                // Name the first component that does not fit.
                let at = match names.as_slice() {
                    ["kernel" | "kprobe" | "timer" | "syscall" | "nd_syscall", ..] => {
                        c.get(1).unwrap_or(first)
                    }
                    ["begin" | "end" | "never" | "error", ..] => c.get(1).unwrap_or(first),
                    _ => first,
                };
                mismatch(self, at)
            }
        }
    }

    /// `kernel.function("f")`, `kprobe.function("f")`, `module("m").function("f")`,
    /// `kprobe.module("m").function("f")` and their `.call` / `.return` /
    /// `.maxactive(N)`: `c[fi]` is the `function` component. A glob
    /// (`*`, `?`) or a module makes the target a pattern the loader expands
    /// on the running kernel (`ProbeTarget::Symbol`'s `module:glob` form).
    fn function_point(
        &mut self,
        mut p: Point,
        c: &[Component],
        module: Option<&Component>,
        fi: usize,
    ) -> Option<Point> {
        let fc = &c[fi];
        let bad = |r: &mut Self, at: &Component| {
            r.err(Diagnostic::semantic("probe point mismatch", at.span));
            None
        };
        let Some(sym) = lit_str(fc) else {
            return bad(self, fc);
        };
        if sym.contains('[') {
            self.unsupported("wildcard probe points with [...]", fc.span);
            return None;
        }
        // `FUNC@FILEPAT`: the loader keeps the functions declared in a
        // matching source file (vm_spec::program::split_source_file).
        let (sym, file) = vm_spec::program::split_source_file(sym);
        if sym.contains([':', '+']) || file.is_some_and(|f| f.contains(['@', ':', '+'])) {
            self.unsupported("function probes with a file, line or offset", fc.span);
            return None;
        }
        if let Some(f) = file.filter(|f| {
            f.is_empty()
                || f.len() > abi::STP_MAX_SYMBOL_LEN as usize
                || !f.bytes().all(|c| c.is_ascii_graphic())
        }) {
            self.err(Diagnostic::semantic(
                format!("invalid source file pattern \"{f}\""),
                fc.span,
            ));
            return None;
        }
        // Only files of stap's blocklist (`*@kernel/kprobes.c`): stap's
        // no-match on any kernel.
        if u32::from(p.flags) & abi::STP_PROBE_F_OPTIONAL == 0
            && file.is_some_and(crate::symbols::only_blocklisted_files)
        {
            self.err(
                Diagnostic::semantic("while resolving probe point", p.span)
                    .with_note("no match", None),
            );
            return None;
        }
        if sym.is_empty()
            || sym.len() > abi::STP_MAX_SYMBOL_LEN as usize
            || !sym
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"_.$*?".contains(&c))
        {
            self.err(Diagnostic::semantic(
                format!("invalid kernel symbol name \"{sym}\""),
                fc.span,
            ));
            return None;
        }
        let mut name = sym.to_string();
        if let Some(mc) = module {
            let Some(m) = lit_str(mc) else {
                return bad(self, mc);
            };
            if m.is_empty()
                || m.len() + 1 + sym.len() > abi::STP_MAX_SYMBOL_LEN as usize
                || !m
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
            {
                self.err(Diagnostic::semantic(
                    format!("invalid kernel module name \"{m}\""),
                    mc.span,
                ));
                return None;
            }
            // kallsyms and kprobes spell module names with '_'.
            name = format!("{}:{sym}", m.replace('-', "_"));
        }
        if let Some(f) = file {
            name = format!("{name}@{f}");
        }
        let mut ret = false;
        for (k, comp) in c[fi + 1..].iter().enumerate() {
            match comp.name.as_str() {
                "call" if !ret && k == 0 => {}
                "return" if !ret => ret = true,
                "maxactive" if ret => match lit_num(comp) {
                    Some(m) if (0..=i64::from(u32::MAX)).contains(&m) => p.maxactive = m as u32,
                    _ => return bad(self, comp),
                },
                n @ ("inline" | "exported" | "label" | "callee" | "callees") => {
                    self.unsupported(&format!("'.{n}' probe points"), comp.span);
                    return None;
                }
                _ => return bad(self, comp),
            }
            if comp.name != "maxactive" && comp.arg.is_some() {
                return bad(self, comp);
            }
        }
        p.target = ProbeTarget::Symbol { name, offset: 0 };
        self.set_kprobe(&mut p, ret);
        Some(p)
    }

    fn set_kprobe(&self, p: &mut Point, ret: bool) {
        if ret {
            p.kind = abi::STP_PROBE_KRETPROBE as u8;
            p.ctx = abi::STP_CTX_KRETPROBE as u8;
        } else {
            p.kind = abi::STP_PROBE_KPROBE as u8;
            p.ctx = abi::STP_CTX_KPROBE as u8;
        }
    }

    fn set_ref(&mut self, id: ExprId, r: Ref) {
        if let Some(slot) = self.refs.get_mut(id as usize) {
            *slot = r;
        }
    }

    /// The global or local named `name` (a new local on first sight).
    fn var(&mut self, name: &str, span: Span) -> Ref {
        if let Some(g) = self.globals.iter().position(|g| g.name == name) {
            return Ref::Global(g);
        }
        if let Some(l) = self.locals.iter().position(|(n, _)| n == name) {
            return Ref::Local(l);
        }
        self.locals.push((name.to_string(), span));
        self.assigned.push(false);
        Ref::Local(self.locals.len() - 1)
    }

    /// Checks that `ctx`-restricted helper `id` is allowed in every context
    /// of this probe; `what` names it in the message.
    fn check_ctx(&mut self, id: u32, what: &str, span: Span) {
        let mask = helper_ctx_mask(id);
        if self.ctxs.iter().any(|c| mask & (1u32 << c) == 0) {
            let msg = if id == abi::STP_HLP_RETVAL {
                format!("{what} is only available in .return probes")
            } else {
                format!("{what} is not available in this probe")
            };
            self.err(Diagnostic::semantic(msg, span));
        }
    }

    /// An assignment or increment target: `what` is its operator token.
    fn lvalue(&mut self, e: &Expr, op_span: Span, value_used: bool, read: bool) {
        match &e.kind {
            ExprKind::Var(name) => {
                let r = self.var(name, e.span);
                self.set_ref(e.id, r);
                match r {
                    Ref::Global(g) => {
                        self.scalar_uses.push((g, e.span));
                        self.globals[g].written = true;
                        if read && value_used {
                            self.globals[g].used = true;
                        }
                    }
                    Ref::Local(l) => {
                        if let Some(a) = self.assigned.get_mut(l) {
                            *a = true;
                        }
                    }
                    _ => {}
                }
            }
            ExprKind::Unsupported(_) => self.expr(e, true),
            ExprKind::Index { base, keys } if matches!(base.kind, ExprKind::Var(_)) => {
                if let Some(g) = self.array_ref(base, keys, e.span) {
                    self.array_write(g, e.span);
                    self.value_elems.push((g, e.span));
                    if read && value_used {
                        self.globals[g].used = true;
                        self.read_globals.push(g);
                    }
                }
            }
            _ => {
                self.expr(e, true);
                self.err(Diagnostic::semantic(
                    "Expecting lvalue for assignment",
                    op_span,
                ));
            }
        }
    }

    /// Walks an expression; `used` tells whether its value is consumed.
    fn expr(&mut self, e: &Expr, used: bool) {
        match &e.kind {
            ExprKind::Num(_) | ExprKind::Str(_) => {}
            ExprKind::Var(name) => {
                let r = self.var(name, e.span);
                self.set_ref(e.id, r);
                if let Ref::Global(g) = r {
                    self.globals[g].used = true;
                    self.read_globals.push(g);
                    self.scalar_uses.push((g, e.span));
                }
            }
            ExprKind::Target(name) => {
                if name == "$return" {
                    self.check_ctx(abi::STP_HLP_RETVAL, "$return", e.span);
                } else {
                    self.target_var(e, name, &[]);
                }
            }
            ExprKind::Call { name, args } => {
                for a in args {
                    self.expr(a, true);
                }
                if let Some(f) = self.func_names.iter().position(|(n, _)| n == name) {
                    let nparams = self.func_names[f].1;
                    if nparams == args.len() {
                        self.set_ref(e.id, Ref::Func(f));
                        self.calls.push(f);
                        for &g in &self.iterating {
                            self.iter_calls.push((f, g, e.span));
                        }
                    } else {
                        self.err(Diagnostic::semantic(
                            format!(
                                "unresolved function {name} (expected {nparams} argument{}, got {})",
                                if nparams == 1 { "" } else { "s" },
                                args.len()
                            ),
                            e.span,
                        ));
                    }
                    return;
                }
                match builtin(name) {
                    Some((b, arity))
                        if arity == args.len() || (b == Builtin::Tokenize && args.len() == 1) =>
                    {
                        if let Builtin::Helper { id, .. } = b {
                            self.check_ctx(id, &format!("{name}()"), e.span);
                        }
                        self.set_ref(e.id, Ref::Builtin(b));
                    }
                    Some((_, arity)) => self.err(Diagnostic::semantic(
                        format!(
                            "unresolved function {name} (expected {arity} argument{}, got {})",
                            if arity == 1 { "" } else { "s" },
                            args.len()
                        ),
                        e.span,
                    )),
                    None if KNOWN_LATER.contains(&name.as_str()) => {
                        self.unsupported(&format!("function {name}()"), e.span)
                    }
                    None => self.err(Diagnostic::semantic(
                        format!("unresolved function {name}"),
                        e.span,
                    )),
                }
            }
            ExprKind::Print { kind, format, args } => {
                for a in args {
                    self.expr(a, true);
                }
                match kind {
                    PrintKind::Printf
                        if format
                            .as_deref()
                            .is_some_and(|f| std::str::from_utf8(f).is_err()) =>
                    {
                        // The program's format table holds text.
                        self.unsupported("non-UTF-8 bytes in a printf format", e.span)
                    }
                    PrintKind::Printf
                        if format.as_deref().is_some_and(|f| {
                            crate::printf::uses_memory(&String::from_utf8_lossy(f))
                        }) =>
                    {
                        self.unsupported("printf %m / %M", e.span)
                    }
                    _ => {}
                }
            }
            ExprKind::Unary(_, a) => self.expr(a, true),
            ExprKind::Binary(_, a, b)
            | ExprKind::Cmp(_, a, b)
            | ExprKind::And(a, b)
            | ExprKind::Or(a, b)
            | ExprKind::Concat(a, b) => {
                self.expr(a, true);
                self.expr(b, true);
            }
            ExprKind::Ternary(c, a, b) => {
                self.expr(c, true);
                self.expr(a, used);
                self.expr(b, used);
            }
            ExprKind::Assign(op, lhs, rhs) => {
                self.expr(rhs, true);
                self.lvalue(lhs, e.span, used, *op != AssignOp::Set);
            }
            ExprKind::PreIncr(_, a) | ExprKind::PostIncr(_, a) => {
                self.lvalue(a, e.span, used, true);
            }
            ExprKind::Unsupported(feature) => self.unsupported(feature, e.span),
            ExprKind::Format { name, format, args } => {
                self.exprs(args);
                if format
                    .as_deref()
                    .is_some_and(|f| std::str::from_utf8(f).is_err())
                {
                    self.unsupported(&format!("non-UTF-8 bytes in a {name} format"), e.span)
                }
            }
            ExprKind::Index { base, keys } if matches!(base.kind, ExprKind::Var(_)) => {
                if let Some(g) = self.array_ref(base, keys, e.span) {
                    self.globals[g].used = true;
                    self.read_globals.push(g);
                    self.value_elems.push((g, e.span));
                }
            }
            ExprKind::Index { base, keys } => {
                self.exprs(keys.iter().flatten());
                if matches!(base.kind, ExprKind::Stat { .. }) {
                    self.expr(base, true);
                } else {
                    self.unsupported("arrays", e.span);
                }
            }
            ExprKind::In { keys, array } => {
                if let Some(g) = self.array_ref(array, keys, e.span) {
                    self.globals[g].used = true;
                    self.read_globals.push(g);
                }
            }
            ExprKind::Stat { op, args } => self.stat_expr(e, op, args),
            ExprKind::Append(a, b) => {
                self.expr(b, true);
                if let Some(g) = self.stat_operand(a) {
                    if matches!(a.kind, ExprKind::Index { .. }) {
                        self.array_write(g, a.span);
                    } else {
                        self.globals[g].written = true;
                    }
                }
            }
            ExprKind::Regex { lhs, re, .. } => {
                self.expr(lhs, true);
                // stap compiles the DFA in pass 2: a bad pattern is a
                // semantic error at the operator.
                if let Err(err) = crate::regex::compile(re) {
                    self.err(Diagnostic::semantic(err.to_string(), e.span));
                }
            }
            ExprKind::Ushr(a, b) => {
                self.exprs([&**a, &**b]);
                self.unsupported("operator '>>>'", e.span);
            }
            ExprKind::Deref { base, comps } if matches!(&base.kind, ExprKind::Target(n) if n != "$return") =>
            {
                for c in comps {
                    if let TargetComp::Index(i) = c {
                        self.expr(i, true);
                    }
                }
                if let ExprKind::Target(name) = &base.kind {
                    self.target_var(e, name, comps);
                }
            }
            ExprKind::Deref { base, comps } if matches!(&base.kind, ExprKind::AtOp { op, .. } if op == "@cast") =>
            {
                self.cast(e, base, comps);
            }
            ExprKind::Deref { base, .. } => {
                let what = match &base.kind {
                    ExprKind::Target(_) => "target variables",
                    ExprKind::AtOp { op, .. } if op == "@var" => "@var",
                    _ => "@cast",
                };
                self.unsupported(what, base.span);
            }
            ExprKind::AddrOf(_) => self.unsupported("address-of operator '&'", e.span),
            ExprKind::AtOp { op, args } if op == "@defined" => self.defined(e, args),
            ExprKind::AtOp { op, .. } => self.unsupported(op, e.span),
        }
    }

    /// `@defined(x)`: whether target variable (or `@cast` chain) `x`
    /// exists. In a probe without target variables (begin, timer ...) it
    /// is 0, `@defined($return)` is whether the probe is a return probe;
    /// otherwise `x` is recorded like any use and the loader answers from
    /// BTF.
    fn defined(&mut self, e: &Expr, args: &[Expr]) {
        let Some(a) = args.first() else { return };
        let (base, comps) = match &a.kind {
            ExprKind::Deref { base, comps } => (&**base, comps.as_slice()),
            _ => (a, &[][..]),
        };
        match &base.kind {
            ExprKind::Target(n) if n == "$return" && comps.is_empty() => {
                let ret = self.ctxs.contains(&(abi::STP_CTX_KRETPROBE as u8));
                self.defined_consts.insert(e.id, ret);
            }
            ExprKind::Target(_)
                if self
                    .cur_points
                    .iter()
                    .all(|p| p.ctx != abi::STP_CTX_KPROBE as u8)
                    && !self.cur_points.is_empty() =>
            {
                self.defined_consts.insert(e.id, false);
            }
            ExprKind::Target(n) => self.target_var(a, n, comps),
            ExprKind::AtOp { op, .. } if op == "@cast" && !comps.is_empty() => {
                self.cast(a, base, comps)
            }
            _ => self.err(Diagnostic::semantic(
                "@defined takes a target variable ($x, $x->a) or a @cast(...)->a expression",
                a.span,
            )),
        }
    }

    /// Checks `@cast(addr, "TYPE"[, "kernel..."])->a->b` (`base` is the
    /// `@cast`) and records it; the loader takes the member offsets from
    /// the kernel's BTF. Valid in functions too: it needs no probe.
    fn cast(&mut self, e: &Expr, base: &Expr, comps: &[TargetComp]) {
        let ExprKind::AtOp { args, .. } = &base.kind else {
            return;
        };
        if let Some(a) = args.first() {
            self.expr(a, true);
        }
        let ty = match args.get(1).map(|a| &a.kind) {
            Some(ExprKind::Str(t)) if args.len() <= 3 => String::from_utf8_lossy(t).into_owned(),
            _ => {
                return self.err(Diagnostic::semantic(
                    "@cast takes an address, a type name and an optional module (string literals)",
                    base.span,
                ))
            }
        };
        if let Some(m) = args.get(2) {
            match &m.kind {
                // stap's "kernel" or "kernel<linux/sched.h>": the header only
                // guides its DWARF search; BTF has every kernel type.
                ExprKind::Str(m) if m.starts_with(b"kernel") => {}
                ExprKind::Str(m) => {
                    return self.unsupported(
                        &format!("@cast to a type of module '{}'", String::from_utf8_lossy(m)),
                        base.span,
                    )
                }
                _ => {
                    return self.err(Diagnostic::semantic(
                        "@cast's module must be a string literal",
                        base.span,
                    ))
                }
            }
        }
        let mut fields = Vec::new();
        for c in comps {
            match c {
                TargetComp::Field(f, _) => fields.push(f.clone()),
                TargetComp::Index(_) => {
                    return self.unsupported("indexing @cast values (@cast(...)->a[n])", e.span)
                }
                TargetComp::Pretty(..) => {
                    return self.unsupported("pretty-printing @cast values (->a$)", e.span)
                }
            }
        }
        self.target_vars
            .insert(e.id, (TargetSite::Cast(ty), fields));
    }

    /// Checks a target variable `name` (with `$`) and its `->` chain in
    /// the probe being walked and records where it comes from; the loader
    /// resolves it against the kernel's BTF.
    fn target_var(&mut self, e: &Expr, name: &str, comps: &[TargetComp]) {
        if name.starts_with("$$") {
            self.unsupported(&format!("{name} (target variable listings)"), e.span);
            return;
        }
        let mut fields = Vec::new();
        for c in comps {
            match c {
                TargetComp::Field(f, _) => fields.push(f.clone()),
                TargetComp::Index(_) => {
                    return self.unsupported("indexing target variables ($var[n])", e.span)
                }
                TargetComp::Pretty(..) => {
                    return self.unsupported("pretty-printing target variables ($var$)", e.span)
                }
            }
        }
        let point = match self.cur_points.as_slice() {
            [] => {
                return self.err(Diagnostic::semantic(
                    format!("target variable {name} is not available in a function"),
                    e.span,
                ))
            }
            [p] => p.clone(),
            _ => {
                return self.unsupported(
                    "target variables in a probe with several probe points",
                    e.span,
                )
            }
        };
        if point.ctx == abi::STP_CTX_KRETPROBE as u8 {
            return self.unsupported(
                &format!("target variable {name} in a .return probe (@entry)"),
                e.span,
            );
        }
        let site = match &point.target {
            // `f@FILEPAT` names one function (the file only selects it).
            ProbeTarget::Symbol { name: f, offset: 0 }
                if point.ctx == abi::STP_CTX_KPROBE as u8
                    && !vm_spec::program::split_source_file(f)
                        .0
                        .contains(['*', '?', ':']) =>
            {
                TargetSite::Function(vm_spec::program::split_source_file(f).0.to_string())
            }
            ProbeTarget::FirstOf(v)
                if point.ctx == abi::STP_CTX_KPROBE as u8
                    && v.first().is_some_and(|f| f.starts_with("__x64_sys_")) =>
            {
                TargetSite::Syscall(v[0]["__x64_sys_".len()..].to_string())
            }
            _ => {
                return self.err(Diagnostic::semantic(
                    format!(
                        "probe point '{}' has no target variables (while resolving {name})",
                        point.display
                    ),
                    e.span,
                ))
            }
        };
        self.target_vars.insert(e.id, (site, fields));
    }

    /// The statistic `a` names (a global, made a statistic here), or an
    /// error. `a[k...]` names an element of a statistics array.
    fn stat_operand(&mut self, a: &Expr) -> Option<usize> {
        if let ExprKind::Index { base, keys } = &a.kind {
            if matches!(base.kind, ExprKind::Var(_)) {
                let g = self.array_ref(base, keys, a.span)?;
                match self.stats.iter().find(|s| s.global == g) {
                    Some(st) if !st.array => {
                        let name = self.globals[g].name.clone();
                        self.err(Diagnostic::semantic(
                            format!("array '{name}' used as a statistic"),
                            a.span,
                        ));
                        return None;
                    }
                    Some(_) => {}
                    None => self.stats.push(StatGlobal {
                        global: g,
                        hist: vm_spec::program::Hist::None,
                        variance: false,
                        shift: 0,
                        array: true,
                    }),
                }
                self.stat_elems.push((g, a.span));
                return Some(g);
            }
        }
        let ExprKind::Var(name) = &a.kind else {
            self.expr(a, true);
            self.err(Diagnostic::semantic("invalid operator", a.span));
            return None;
        };
        match self.var(name, a.span) {
            Ref::Global(g) => {
                self.set_ref(a.id, Ref::Global(g));
                if self.stats.iter().any(|s| s.global == g && s.array) {
                    self.err(Diagnostic::semantic(
                        format!("array '{name}' used as a statistic"),
                        a.span,
                    ));
                    return None;
                }
                if !self.stats.iter().any(|s| s.global == g) {
                    self.stats.push(StatGlobal {
                        global: g,
                        hist: vm_spec::program::Hist::None,
                        variance: false,
                        shift: 0,
                        array: false,
                    });
                }
                Some(g)
            }
            r => {
                self.set_ref(a.id, r);
                self.err(Diagnostic::semantic(
                    format!(
                        "local variable '{name}' used as a statistic: statistics must be global"
                    ),
                    a.span,
                ));
                None
            }
        }
    }

    /// `@count(s)` ... `@hist_linear(s, lo, hi, step)`: the statistic, and
    /// the literal parameters, which must agree across uses (stap).
    fn stat_expr(&mut self, e: &Expr, op: &str, args: &[Expr]) {
        use vm_spec::program::Hist;
        let nparams = match op {
            "@hist_linear" => 3,
            "@variance" => args.len().saturating_sub(1).min(1),
            _ => 0,
        };
        if !STAT_OPS.contains(&op) || args.len() != nparams + 1 {
            self.err(Diagnostic::semantic(
                format!("wrong number of arguments to {op}"),
                e.span,
            ));
            return;
        }
        let mut lits = Vec::new();
        for a in &args[1..] {
            match a.kind {
                ExprKind::Num(v) => lits.push(v),
                _ => {
                    self.expr(a, true);
                    self.err(Diagnostic::semantic(
                        format!("{op} parameters must be number literals"),
                        a.span,
                    ));
                    return;
                }
            }
        }
        let Some(g) = self.stat_operand(&args[0]) else {
            return;
        };
        self.globals[g].used = true;
        self.read_globals.push(g);
        let hist = match op {
            "@hist_log" => Hist::Log,
            "@hist_linear" => {
                let (lo, hi, step) = (lits[0], lits[1], lits[2]);
                let fits = |v: i64| i32::try_from(v).ok();
                let h = match (fits(lo), fits(hi), fits(step)) {
                    (Some(start), Some(stop), Some(interval)) => Hist::Linear {
                        start,
                        stop,
                        interval,
                    },
                    _ => Hist::None,
                };
                let nb = h.nbuckets();
                if step <= 0 {
                    self.err(Diagnostic::semantic(
                        "histogram step must be greater than zero",
                        args[3].span,
                    ));
                    return;
                }
                if nb == 0 {
                    self.err(Diagnostic::semantic(
                        format!(
                            "histogram: Number of buckets must be between 1 and {}",
                            abi::STP_HIST_MAX_BUCKETS - 2
                        ),
                        e.span,
                    ));
                    return;
                }
                h
            }
            _ => Hist::None,
        };
        let Some(st) = self.stats.iter_mut().find(|s| s.global == g) else {
            return;
        };
        if op == "@variance" {
            let shift = lits.first().copied().unwrap_or(0);
            if !(0..=i64::from(abi::STP_STAT_MAX_SHIFT)).contains(&shift) {
                self.err(Diagnostic::semantic(
                    "bit shift must be between 0 and 62",
                    args[1].span,
                ));
                return;
            }
            if st.variance && st.shift != 0 && shift != 0 && st.shift as i64 != shift {
                let prev = st.shift;
                self.err(Diagnostic::semantic(
                    format!("conflicting bit shifts declared (previously {prev})"),
                    e.span,
                ));
                return;
            }
            st.variance = true;
            if shift != 0 {
                st.shift = shift as u8;
            }
        }
        if hist != Hist::None {
            if st.hist == Hist::None {
                st.hist = hist;
            } else if st.hist != hist {
                let name = self.globals[g].name.clone();
                self.err(Diagnostic::semantic(
                    format!("multiple histogram types declared on '{name}'"),
                    e.span,
                ));
            }
        }
    }

    /// The global array `base` names with `keys` (walked), or an error.
    fn array_ref(&mut self, base: &Expr, keys: &[Option<Expr>], at: Span) -> Option<usize> {
        self.exprs(keys.iter().flatten());
        let ExprKind::Var(name) = &base.kind else {
            self.unsupported("arrays of this kind", at);
            return None;
        };
        if keys.iter().any(Option::is_none) {
            self.unsupported("array slices (*)", at);
            return None;
        }
        if keys.len() > abi::STP_MAX_MAP_KEYS as usize {
            self.err(Diagnostic::semantic(
                format!(
                    "too many array keys ({}, at most {})",
                    keys.len(),
                    abi::STP_MAX_MAP_KEYS
                ),
                at,
            ));
            return None;
        }
        match self.globals.iter().position(|g| g.name == *name) {
            Some(g) => {
                self.set_ref(base.id, Ref::Global(g));
                self.globals[g].array = true;
                Some(g)
            }
            None => {
                self.err(Diagnostic::semantic(
                    format!(
                        "unresolved arity-{} global array {name}, missing global declaration?",
                        keys.len()
                    ),
                    base.span,
                ));
                None
            }
        }
    }

    /// Array `g` is written at `at`: refused inside a foreach over it.
    fn array_write(&mut self, g: usize, at: Span) {
        self.globals[g].written = true;
        self.writes.push(g);
        if self.iterating.contains(&g) {
            let name = self.globals[g].name.clone();
            self.err(Diagnostic::semantic(
                format!("variable '{name}' modified during 'foreach' iteration"),
                at,
            ));
        }
    }

    /// `foreach ([v =] [k...] in a [+|-] [limit n]) body`.
    fn foreach(&mut self, f: &Foreach, span: Span) {
        if matches!(&f.array.kind, ExprKind::Stat { op, .. } if op.starts_with("@hist")) {
            return self.foreach_hist(f);
        }
        if let Some(slice) = &f.slice {
            // `foreach ([a, b] in arr[1, *])`: the fixed keys are walked
            // here; lowering filters on them (passes/lower.rs `foreach`).
            if slice.len() != f.keys.len() {
                self.err(Diagnostic::semantic(
                    format!("inconsistent arity ({} vs {})", slice.len(), f.keys.len()),
                    f.array.span,
                ));
                return;
            }
            self.exprs(slice.iter().flatten());
        }

        let nkeys: Vec<Option<Expr>> = f
            .keys
            .iter()
            .map(|_| {
                Some(Expr {
                    kind: ExprKind::Num(0),
                    span,
                    id: u32::MAX,
                })
            })
            .collect();
        let Some(g) = self.array_ref(&f.array, &nkeys, f.array.span) else {
            return;
        };
        self.globals[g].used = true;
        self.read_globals.push(g);
        if let Some((op, sp)) = &f.stat {
            self.stat_sorts.push((g, op.clone(), *sp));
        }
        if let Some((_, sp)) = &f.value {
            self.value_elems.push((g, *sp));
        }
        if let Some(l) = &f.limit {
            self.expr(l, true);
        }
        for (name, sp) in f.keys.iter().chain(f.value.iter()) {
            if let Ref::Local(l) = self.var(name, *sp) {
                if let Some(a) = self.assigned.get_mut(l) {
                    *a = true;
                }
            } else {
                self.err(Diagnostic::semantic(
                    format!("foreach variable '{name}' must be a local"),
                    *sp,
                ));
            }
        }
        self.iterating.push(g);
        self.loops += 1;
        self.stmt(&f.body);
        self.loops -= 1;
        self.iterating.pop();
    }

    /// `foreach (b in @hist_log(s) [limit n])`: `b` runs over the bucket
    /// indexes of a scalar statistic's histogram.
    fn foreach_hist(&mut self, f: &Foreach) {
        self.expr(&f.array, true);
        let ok = matches!(&f.array.kind, ExprKind::Stat { args, .. }
            if args.first().is_some_and(|a| matches!(a.kind, ExprKind::Var(_))));
        if !ok || f.keys.len() != 1 || f.value.is_some() || f.slice.is_some() {
            self.unsupported("foreach over this histogram form", f.array.span);
            return;
        }
        if matches!(f.sort, Some((SortBy::Value, _)) | Some((_, false))) {
            self.unsupported(
                "foreach over a histogram sorted by count or descending",
                f.array.span,
            );
            return;
        }
        if let Some(l) = &f.limit {
            self.expr(l, true);
        }
        let (name, sp) = &f.keys[0];
        if let Ref::Local(l) = self.var(name, *sp) {
            if let Some(a) = self.assigned.get_mut(l) {
                *a = true;
            }
        } else {
            self.err(Diagnostic::semantic(
                format!("foreach variable '{name}' must be a local"),
                *sp,
            ));
        }
        self.loops += 1;
        self.stmt(&f.body);
        self.loops -= 1;
    }

    /// `delete x`: an element, a whole array, or a scalar.
    fn delete(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Index { base, keys } if matches!(base.kind, ExprKind::Var(_)) => {
                if let Some(g) = self.array_ref(base, keys, e.span) {
                    self.array_write(g, e.span);
                }
            }
            ExprKind::Var(name) => match self.var(name, e.span) {
                Ref::Global(g) => {
                    self.set_ref(e.id, Ref::Global(g));
                    if self.globals[g].array {
                        self.array_write(g, e.span);
                    } else {
                        self.delete_globals.push(e.id);
                        self.globals[g].written = true;
                    }
                }
                r => {
                    self.set_ref(e.id, r);
                    if let Ref::Local(l) = r {
                        if let Some(a) = self.assigned.get_mut(l) {
                            *a = true;
                        }
                    }
                }
            },
            _ => self.unsupported("delete of this kind", e.span),
        }
    }

    /// Walks operands whose values are used.
    fn exprs<'e>(&mut self, es: impl IntoIterator<Item = &'e Expr>) {
        for a in es {
            self.expr(a, true);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Null | StmtKind::Next => {}
            StmtKind::Block(b) => b.iter().for_each(|s| self.stmt(s)),
            StmtKind::Expr(e) => self.expr(e, false),
            StmtKind::If { cond, then, els } => {
                self.expr(cond, true);
                self.stmt(then);
                if let Some(e) = els {
                    self.stmt(e);
                }
            }
            StmtKind::Loop {
                init,
                cond,
                incr,
                body,
            } => {
                if let Some(e) = init {
                    self.expr(e, false);
                }
                self.expr(cond, true);
                if let Some(e) = incr {
                    self.expr(e, false);
                }
                self.loops += 1;
                self.stmt(body);
                self.loops -= 1;
            }
            StmtKind::Break | StmtKind::Continue => {
                if self.loops == 0 {
                    let what = if matches!(s.kind, StmtKind::Break) {
                        "break"
                    } else {
                        "continue"
                    };
                    self.err(Diagnostic::semantic(
                        format!("cannot '{what}' outside loop"),
                        s.span,
                    ));
                }
            }
            StmtKind::Unsupported(u) => self.unsupported(&u.feature, u.span),
            StmtKind::Foreach(f) => self.foreach(f, s.span),
            StmtKind::Delete(e) => self.delete(e),
            StmtKind::Return(e) => {
                if !self.in_func {
                    self.err(Diagnostic::semantic(
                        "cannot 'return' outside a function",
                        s.span,
                    ));
                }
                if let Some(e) = e {
                    self.expr(e, true);
                }
            }
            StmtKind::Try { body, var, handler } => {
                self.stmt(body);
                if let Some((name, sp)) = var {
                    match self.var(name, *sp) {
                        Ref::Local(l) => {
                            if let Some(a) = self.assigned.get_mut(l) {
                                *a = true;
                            }
                        }
                        _ => self.unsupported("a global as the catch variable", *sp),
                    }
                }
                self.stmt(handler);
            }
        }
    }
}

/// Resolves `script`, reporting errors and warnings into `diags`.
pub fn run(script: &Script, diags: &mut Diags) -> Resolved {
    let mut r = Resolver {
        diags,
        globals: Vec::new(),
        refs: vec![Ref::None; script.nexprs as usize],
        locals: Vec::new(),
        assigned: Vec::new(),
        ctxs: Vec::new(),
        cur_points: Vec::new(),
        target_vars: HashMap::new(),
        defined_consts: HashMap::new(),
        loops: 0,
        read_globals: Vec::new(),
        func_names: Vec::new(),
        calls: Vec::new(),
        in_func: false,
        stats: Vec::new(),
        stat_elems: Vec::new(),
        value_elems: Vec::new(),
        stat_sorts: Vec::new(),
        scalar_uses: Vec::new(),
        iterating: Vec::new(),
        writes: Vec::new(),
        iter_calls: Vec::new(),
        delete_globals: Vec::new(),
    };
    for it in &script.items {
        match it {
            Item::Global(g) => {
                if let Some(p) = g.private {
                    r.unsupported("private", p);
                }
                r.globals.push(GlobalInfo {
                    name: g.name.clone(),
                    span: g.span,
                    init: g.init.clone(),
                    written: false,
                    used: false,
                    array: g.array,
                    size: g.size,
                    wrap: g.wrap,
                });
            }
            Item::Unsupported(u) => r.unsupported(&u.feature, u.span),
            Item::Function(f) => {
                if f.body.is_none() {
                    r.unsupported("embedded C functions", f.span);
                } else if r.func_names.iter().any(|(n, _)| *n == f.name) {
                    r.unsupported("function overloading", f.span);
                } else {
                    // `private` is file scope: one file here, so no effect.
                    r.func_names.push((f.name.clone(), f.params.len()));
                }
            }
            Item::Alias(a) => {
                let at = a.names.first().map_or(a.span, |p| p.span());
                r.unsupported("probe aliases", at);
            }
            Item::Embedded(span) => r.unsupported("embedded C", *span),
            Item::Probe(_) => {}
        }
    }
    // Function bodies: locals start with the parameters.
    let mut funcs = Vec::new();
    let mut fcalls: Vec<Vec<usize>> = Vec::new();
    let mut fwrites: Vec<Vec<usize>> = Vec::new();
    for (idx, it) in script.items.iter().enumerate() {
        let Item::Function(f) = it else { continue };
        let Some(body) = &f.body else { continue };
        if !r.func_names.iter().any(|(n, _)| *n == f.name)
            || funcs.iter().any(|x: &RFunc| x.name == f.name)
        {
            continue;
        }
        r.locals = f.params.iter().map(|p| (p.name.clone(), p.span)).collect();
        r.assigned = vec![true; f.params.len()];
        r.ctxs = vec![abi::STP_CTX_FUNCTION as u8];
        r.loops = 0;
        r.in_func = true;
        r.calls = Vec::new();
        r.writes = Vec::new();
        r.stmt(body);
        r.in_func = false;
        fcalls.push(std::mem::take(&mut r.calls));
        fwrites.push(std::mem::take(&mut r.writes));
        funcs.push(RFunc {
            item: idx,
            name: f.name.clone(),
            nparams: f.params.len(),
            locals: std::mem::take(&mut r.locals),
            used: false,
        });
    }
    let mut probes = Vec::new();
    let mut open_at: Option<Span> = None;
    let mut saw_openat = false;
    for (idx, it) in script.items.iter().enumerate() {
        let Item::Probe(p) = it else { continue };
        let mut points = Vec::new();
        for pp in &p.points {
            let names: Vec<&str> = pp.components.iter().map(|c| c.name.as_str()).collect();
            match names.as_slice() {
                ["syscall" | "nd_syscall", "open", ..] => {
                    open_at.get_or_insert(pp.span());
                }
                ["syscall" | "nd_syscall", "openat", ..] => saw_openat = true,
                _ => {}
            }
            if let Some(point) = r.point(pp) {
                points.push(point);
            }
        }
        r.locals = Vec::new();
        r.assigned = Vec::new();
        r.ctxs = points.iter().map(|p| p.ctx).collect();
        r.cur_points = points.clone();
        r.loops = 0;
        r.stmt(&p.body);
        // Functions reachable from this probe (bounded: each is marked once).
        let mut work = std::mem::take(&mut r.calls);
        while let Some(f) = work.pop() {
            if let Some(rf) = funcs.get_mut(f) {
                if !rf.used {
                    rf.used = true;
                    work.extend(fcalls.get(f).into_iter().flatten().copied());
                }
            }
        }
        for (l, (name, span)) in r.locals.iter().enumerate() {
            if !r.assigned.get(l).copied().unwrap_or(true) {
                r.diags.push(Diagnostic::warning(
                    format!("never-assigned local variable '{name}'"),
                    *span,
                ));
            }
        }
        probes.push(RProbe {
            item: idx,
            points,
            locals: std::mem::take(&mut r.locals),
        });
    }
    for (g, info) in r.globals.iter().enumerate() {
        if !info.written && !r.read_globals.contains(&g) {
            r.diags.push(Diagnostic::warning(
                format!("Eliding unused variable '{}'", info.name),
                info.span,
            ));
        }
    }
    if let (Some(span), false) = (open_at, saw_openat) {
        r.diags
            .push(Diagnostic::warning(SYSCALL_OPEN_WARNING, span));
    }
    // A function called inside a foreach must not write the array, even
    // through the functions it calls (stap: semko/thirteen, fourteen).
    for (f, g, span) in std::mem::take(&mut r.iter_calls) {
        let mut seen = vec![false; fcalls.len()];
        let mut work = vec![f];
        let mut hit = false;
        while let Some(x) = work.pop() {
            if x >= seen.len() || seen[x] {
                continue;
            }
            seen[x] = true;
            hit |= fwrites[x].contains(&g);
            work.extend(fcalls[x].iter().copied());
        }
        if hit {
            let name = r.globals[g].name.clone();
            r.diags.push(Diagnostic::semantic(
                format!("function call modifies var '{name}' during 'foreach' iteration"),
                span,
            ));
        }
    }
    // A global is an array or a scalar, not both; nor a statistic.
    for st in &r.stats {
        if r.globals[st.global].array && !st.array {
            let name = r.globals[st.global].name.clone();
            r.diags.push(Diagnostic::semantic(
                format!("array '{name}' used as a statistic"),
                r.globals[st.global].span,
            ));
        }
    }
    for (g, span) in r.scalar_uses.clone() {
        if r.globals[g].array {
            let name = r.globals[g].name.clone();
            r.diags.push(Diagnostic::semantic(
                format!("array '{name}' used as a scalar"),
                span,
            ));
        }
    }
    // A statistics array's elements are only `<<<`-ed and extracted, and a
    // plain array's are not statistics.
    for (g, span) in std::mem::take(&mut r.value_elems) {
        if r.stats.iter().any(|s| s.global == g && s.array) {
            r.diags
                .push(Diagnostic::semantic("invalid type stats", span));
        }
    }
    for (g, span) in std::mem::take(&mut r.stat_elems) {
        if !r.stats.iter().any(|s| s.global == g && s.array) {
            let name = r.globals[g].name.clone();
            r.diags.push(Diagnostic::semantic(
                format!("array '{name}' used as a statistic"),
                span,
            ));
        }
    }
    for (g, op, span) in std::mem::take(&mut r.stat_sorts) {
        if !r.stats.iter().any(|s| s.global == g && s.array) {
            r.diags.push(Diagnostic::semantic(
                format!("sort by {op} of an array that is not a statistic"),
                span,
            ));
        } else if !["@count", "@sum", "@min", "@max", "@avg", "@variance"].contains(&op.as_str()) {
            // `@variance` parses and sorts by @count, as in stap 5.x
            // (translate.cxx maps sc_variance to SORT_COUNT; lower.rs).
            r.diags.push(Diagnostic::unsupported(
                &format!("foreach sorted by {op}"),
                span,
            ));
        }
    }
    // A statistic is only ever `<<<`-ed and extracted (stap's pe_stats).
    for (g, span) in std::mem::take(&mut r.scalar_uses) {
        if r.stats.iter().any(|s| s.global == g) {
            r.diags
                .push(Diagnostic::semantic("invalid type stats", span));
        }
    }
    Resolved {
        globals: r.globals,
        probes,
        funcs,
        refs: r.refs,
        stats: r.stats,
        delete_globals: r.delete_globals,
        target_vars: r.target_vars,
        defined_consts: r.defined_consts,
    }
}
