//! The built-in functions: `Builtin` (what `lower` emits for each), the
//! table of their names and arities, the helpers' allowed contexts
//! (helpers.h), the tapset functions known but not built in yet, and the
//! resolution of a call to a user function or a built-in.
use super::*;

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
    /// `system(cmd)`: user space runs `cmd` with `/bin/sh -c`, in order
    /// with the output (an STP_REC_SYSTEM record; userspace/src/system.rs).
    System,
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
    /// `matched(n)` (tapset/regex.stp): group n of the last `=~`.
    Matched,
    /// `matched_str()`: `matched(0)`.
    MatchedStr,
    /// `ngroups()`: groups of the last `=~`, group 0 included.
    Ngroups,
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
    /// `pn()`: the script-level point (an alias use after its wildcards
    /// are expanded, before the alias is), a constant of the handler.
    Pn,
    /// `abort()`: `exit()` that also ends the handler at once, uncaught.
    Abort,
    /// `warn(msg)`: `WARNING: msg` on stderr (`Program::warn_format`).
    Warn,
    /// `probe_type()`: stap's name of the probe's low-level kind (a
    /// constant of the handler, `passes::lower::tier1`).
    ProbeType,
    /// The tapset's `__tz_gmtoff()` (`name` false: seconds west of UTC)
    /// and `__tz_name_bytes()` (`name`: the zone's abbreviation, its
    /// bytes packed little-endian in a long): the local time zone of the
    /// loader, constants it patches (`Program::tz_konsts`).
    Tz {
        /// The name rather than the offset.
        name: bool,
    },
    /// `$x$` / `$x$$` (`deep`), rewritten by tapset/listings.rs into
    /// `__stp_pretty(x)` / `__stp_pretty_deep(x)`: the target value `x`
    /// pretty-printed by PRETTY with the type node the loader builds from
    /// BTF (`RelocKind::Pretty`).
    Pretty {
        /// `$$`: nested aggregates expanded.
        deep: bool,
    },
    /// `stp_pid()` (`uid` false: the loader process's pid) and the
    /// tapset's `__stp_loader_uid()` (its real uid, for `is_myproc()`):
    /// constants the loader patches (`Program::loader_konsts`).
    Loader {
        /// The uid rather than the pid.
        uid: bool,
    },
}

impl Builtin {
    /// The argument types of the string built-ins (true = string), or
    /// `None` for the helpers, whose arguments are longs.
    pub fn string_args(self) -> Option<&'static [bool]> {
        use Builtin::*;
        Some(match self {
            Strlen | TextStr | Error | System | StringQuoted => &[true],
            PrintChar | Endian { .. } | Matched | Pretty { .. } => &[false],
            MatchedStr | Ngroups => &[],
            TextStrn => &[true, false, false],
            Tokenize => &[true, true],
            Pp | Pn | Target | SwitchFile | ProbeType | Tz { .. } | Loader { .. } => &[],
            Warn => &[true],
            Substr => &[true, false, false],
            Isinstr | Strpos => &[true, true],
            Strtol | Stringat => &[true, false],
            StrReplace => &[true, true, true],
            Helper { .. } | HelperDiv { .. } | Exit | Abort => return None,
        })
    }
}

/// Tapset functions people use that are not built in yet: calling one says
/// so rather than "unresolved function".
const KNOWN_LATER: &[&str] = &[
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
    "syscall_name",
    "execname_of",
    // floatingpoint.stp's IEEE remainder: the other fp_* functions are in
    // the library (library.stp's tier 7).
    "fp_rem",
];

/// Tapset functions stapvm refuses for a reason of its own, with that
/// reason: `not supported yet: function NAME() (REASON)`.
const REFUSED_WITH_REASON: &[(&str, &str)] = &[(
    "ftrace",
    "it writes to the kernel's ftrace ring buffer, which stapvm does not do",
)];

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
        // A USDT marker's $argN / $arg_count (tapset/syscalls.rs rewrites them).
        "__usdt_arg" => (ha(abi::STP_HLP_UARG), 1),
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
        // User-space stacks and symbols (ucontext-*.stp; the rest of them
        // in tapset/library_user.stp).
        "ubacktrace" => (h(abi::STP_HLP_UBACKTRACE), 0),
        "usymname" => (ha(abi::STP_HLP_USYMNAME), 1),
        "usymdata" => (ha(abi::STP_HLP_USYMDATA), 1),
        "__usym_full" => (ha(abi::STP_HLP_USYMFULL), 1),
        "__usym_brief" => (ha(abi::STP_HLP_USYMBRIEF), 1),
        "__usym_simple" => (ha(abi::STP_HLP_USYMSIMPLE), 1),
        "__umodname" => (ha(abi::STP_HLP_UMODNAME), 1),
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
        "system" => (System, 1),
        "print_char" => (PrintChar, 1),
        "text_strn" => (TextStrn, 3),
        "string_quoted" => (StringQuoted, 1),
        "tokenize" => (Tokenize, 2),
        "matched" => (Matched, 1),
        "matched_str" => (MatchedStr, 0),
        "ngroups" => (Ngroups, 0),
        "pp" => (Pp, 0),
        "pn" => (Pn, 0),
        "target" => (Target, 0),
        "switch_file" => (SwitchFile, 0),
        "__tz_gmtoff" => (Tz { name: false }, 0),
        "__tz_name_bytes" => (Tz { name: true }, 0),
        "__stp_pretty" => (Pretty { deep: false }, 1),
        "__stp_pretty_deep" => (Pretty { deep: true }, 1),
        "stp_pid" => (Loader { uid: false }, 0),
        "__stp_loader_uid" => (Loader { uid: true }, 0),
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

impl Resolver<'_> {
    /// Checks that `ctx`-restricted helper `id` is allowed in every context
    /// of this probe; `what` names it in the message.
    pub(super) fn check_ctx(&mut self, id: u32, what: &str, span: Span) {
        if self.ctx_allows(id) {
            return;
        }
        let msg = if id == abi::STP_HLP_RETVAL {
            format!("{what} is only available in .return probes")
        } else {
            format!("{what} is not available in this probe")
        };
        self.err(Diagnostic::semantic(msg, span));
    }

    /// Every context of the probe being walked may call helper `id`.
    fn ctx_allows(&self, id: u32) -> bool {
        let mask = helper_ctx_mask(id);
        self.ctxs.iter().all(|c| mask & (1u32 << c) != 0)
    }

    /// A call: a user function (`Ref::Func`, its arity checked; calls inside
    /// a `foreach` recorded) or a built-in (`Ref::Builtin`, a helper
    /// checked against the probe's contexts), else an error.
    pub(super) fn call(&mut self, e: &Expr, name: &str, args: &[Expr]) {
        for a in args {
            self.expr(a, true);
        }
        if let Some(&f) = self.func_idx.get(name) {
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
                    if !self.ctx_allows(id) {
                        self.check_ctx(id, &format!("{name}()"), e.span);
                    }
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
            None if crate::guru::GURU_FUNCTIONS.contains(&name) => {
                self.err(Diagnostic::semantic(crate::guru::function(name), e.span))
            }
            None if crate::tapset::globals::livepatch_refusal(name).is_some() => {
                let what = crate::tapset::globals::livepatch_refusal(name).unwrap_or_default();
                self.unsupported(&what, e.span)
            }
            None if REFUSED_WITH_REASON.iter().any(|(n, _)| *n == name) => {
                let why = REFUSED_WITH_REASON
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or("", |(_, w)| w);
                self.unsupported(&format!("function {name}() ({why})"), e.span)
            }
            None if KNOWN_LATER.contains(&name) => {
                self.unsupported(&format!("function {name}()"), e.span)
            }
            None => {
                let sugs =
                    crate::suggest::similar(name, self.function_candidates().iter().copied());
                self.err(Diagnostic::semantic(
                    format!("unresolved function {name}{sugs}"),
                    e.span,
                ))
            }
        }
    }

    /// Every function a script can call: its own, the library's, the
    /// built-ins (the string patterns of `builtin`'s match, read from this
    /// file's text and kept only where `builtin` knows them, so the match
    /// stays the one list) and those known but not supported yet.
    fn function_candidates(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.func_names.iter().map(|(n, _)| n.as_str()).collect();
        v.extend(crate::tapset::library::function_names());
        v.extend(KNOWN_LATER);
        v.extend(crate::parse::expr::PRINT_FAMILY);
        let src = include_str!("builtins.rs");
        v.extend(
            // Every text between two consecutive quotes (both parities,
            // so an escaped quote cannot hide a name).
            src.split('"')
                .skip(1)
                .filter(|w| w.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_'))
                .filter(|w| builtin(w).is_some()),
        );
        v
    }
}
