//! Probe points: what each point means (probe kind, handler context,
//! symbolic target, timer period, flags, `begin`/`end` sequence), with
//! stap's messages for the points that do not match and the ones not
//! supported yet.
use super::*;
use vm_spec::program::UserSite;

pub(super) fn lit_num(c: &Component) -> Option<i64> {
    match c.arg {
        Some(Literal::Num(n, _)) => Some(n),
        _ => None,
    }
}

/// `pat` (a component name, maybe with `*`) matches `name`.
fn glob(pat: &str, name: &str) -> bool {
    crate::glob::fnmatch(pat.as_bytes(), name.as_bytes())
}

fn lit_str(c: &Component) -> Option<&str> {
    match &c.arg {
        Some(Literal::Str(s, _)) => std::str::from_utf8(s).ok(),
        _ => None,
    }
}

/// The probe families that are user-space marks (`process(...).mark`)
/// under a tapset alias: what they are, for the refusal; `None` for the
/// other names.
fn user_space_family(first: &str) -> Option<&'static str> {
    Some(match first {
        "stap" | "staprun" | "stapio" => "marks of the systemtap programs",
        "qemu" => "qemu's marks",
        "glib" | "gobject" => "glib's marks",
        "libvirt" => "libvirt's marks",
        _ => return None,
    })
}

/// Why `name` cannot be a procfs file's (the module's rule, abi.h), or
/// `None`.
pub(crate) fn procfs_name_error(name: &str) -> Option<String> {
    let max = abi::STP_MAX_PROCFS_NAME as usize;
    if name.is_empty() {
        return Some("empty".into());
    }
    if name.len() > max {
        return Some(format!("longer than {max} bytes"));
    }
    if name == "." || name == ".." {
        return Some("not a file".into());
    }
    if name.contains('/') {
        return Some("'/' is not allowed (files live in one directory)".into());
    }
    if let Some(b) = name
        .bytes()
        .find(|b| !(b.is_ascii_alphanumeric() || b"_.+,:=@%-".contains(b)))
    {
        return Some(format!("byte 0x{b:02x} is not in [A-Za-z0-9_.+,:=@%-]"));
    }
    None
}

impl Resolver<'_> {
    /// `timer.jiffies(N)`: a timer every N jiffies of the target kernel,
    /// whose HZ the compiler cannot know; flagged `STP_PROBE_F_JIFFIES`
    /// (abi.h), `period_ns` holds N and the module converts it. N in
    /// [1, `STP_MAX_TIMER_JIFFIES`], stap's bound.
    fn jiffies_point(
        &mut self,
        mut p: Point,
        unit_c: &Component,
        rand: Option<&Component>,
        span: Span,
    ) -> Option<Point> {
        let Some(n) = lit_num(unit_c) else {
            self.err(Diagnostic::semantic("probe point mismatch", unit_c.span));
            return None;
        };
        let max = i64::from(abi::STP_MAX_TIMER_JIFFIES);
        if !(1..=max).contains(&n) {
            self.err(
                Diagnostic::semantic("while resolving probe point", span)
                    .with_note(format!("interval value out of range (1, {max})"), None),
            );
            return None;
        }
        p.period_ns = n as u64;
        p.randomize = self.randomize(rand, 1, n, "invalid randomize for jiffies timer", span)?;
        p.flags |= abi::STP_PROBE_F_JIFFIES as u8;
        p.set_kind(abi::STP_PROBE_TIMER);
        Some(p)
    }

    /// The `.randomize(M)` component of a timer of `period` (in the
    /// unit the image keeps), M scaled by `scale` into that unit: 0
    /// without one; `None` after reporting stap's `msg` when M is not in
    /// [0, period] (abi.h says why the period bounds it).
    fn randomize(
        &mut self,
        rand: Option<&Component>,
        scale: i64,
        period: i64,
        msg: &str,
        span: Span,
    ) -> Option<u64> {
        let Some(rc) = rand else {
            return Some(0);
        };
        let Some(m) = lit_num(rc) else {
            self.err(Diagnostic::semantic("probe point mismatch", rc.span));
            return None;
        };
        match m.checked_mul(scale) {
            Some(v) if (0..=period).contains(&v) => Some(v as u64),
            _ => {
                self.err(
                    Diagnostic::semantic("while resolving probe point", span)
                        .with_note(msg.to_string(), None),
                );
                None
            }
        }
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
        p.set_kind(abi::STP_PROBE_TIMER);
        p.period_ns = period_ns;
        p.flags |= abi::STP_PROBE_F_PROFILE as u8;
        Some(p)
    }

    /// `procfs[("name")][.umask(M)].read[.maxsize(N)]` and
    /// `procfs[("name")][.umask(M)].write` (abi.h: procfs files): the
    /// file "command" without a name; the mode is this probe's share
    /// (0444 to read, 0222 to write, less the umask), which
    /// `procfs_files` (mod.rs) joins with the other probe's on the same
    /// file, and the size `N` (0: MAXSTRINGLEN, set by the image).
    fn procfs_point(&mut self, mut p: Point, c: &[Component], span: Span) -> Option<Point> {
        let first = &c[0];
        let name = match &first.arg {
            None => "command".to_string(),
            Some(_) => match lit_str(first) {
                Some(n) => n.to_string(),
                None => {
                    self.mismatch(c, first);
                    return None;
                }
            },
        };
        let mut rest = &c[1..];
        let mut umask = 0u32;
        if let Some(u) = rest.first().filter(|x| x.name == "umask") {
            match lit_num(u) {
                Some(m) if (0..=0o777).contains(&m) => umask = m as u32,
                _ => {
                    self.err(
                        Diagnostic::semantic("while resolving probe point", u.span)
                            .with_note("invalid procfs umask (0 to 0777)", None),
                    );
                    return None;
                }
            }
            rest = &rest[1..];
        }
        let (read, size) = match rest {
            [rw] if rw.arg.is_none() && (rw.name == "read" || rw.name == "write") => {
                (rw.name == "read", 0)
            }
            [rw, ms] if rw.name == "read" && rw.arg.is_none() && ms.name == "maxsize" => {
                match lit_num(ms) {
                    Some(n) if (1..=i64::from(abi::STP_MAX_PROCFS_SIZE)).contains(&n) => {
                        (true, n as u32)
                    }
                    _ => {
                        self.err(
                            Diagnostic::semantic("while resolving probe point", ms.span).with_note(
                                format!("maxsize out of range (1, {})", abi::STP_MAX_PROCFS_SIZE),
                                None,
                            ),
                        );
                        return None;
                    }
                }
            }
            [] => {
                self.mismatch(c, c.last().unwrap_or(first));
                return None;
            }
            [x, ..] => {
                self.mismatch(c, x);
                return None;
            }
        };
        if let Some(why) = procfs_name_error(&name) {
            self.err(Diagnostic::semantic(
                format!("invalid procfs file name \"{name}\": {why}"),
                first.span,
            ));
            return None;
        }
        let _ = span;
        p.set_kind(if read {
            abi::STP_PROBE_PROCFS_READ
        } else {
            abi::STP_PROBE_PROCFS_WRITE
        });
        let share = if read { 0o444 } else { 0o222 };
        p.target = ProbeTarget::File {
            name,
            mode: share & !umask,
        };
        p.maxactive = size;
        p.flags = 0;
        Some(p)
    }

    /// [`Self::mismatch`] unless the point is optional (stap's
    /// derive_probes drops an optional point that does not fit); `None`
    /// either way.
    pub(super) fn mismatch_unless_optional(
        &mut self,
        c: &[Component],
        at: &Component,
        optional: bool,
    ) -> Option<Point> {
        if !optional {
            self.mismatch(c, at);
        }
        None
    }

    /// stap's "probe point mismatch" at component `at` of `c`, with the
    /// names that fit there as `(similar: …)` (unless `at` is one of them
    /// and only its argument or what follows is wrong).
    pub(super) fn mismatch(&mut self, c: &[Component], at: &Component) {
        if self.quiet_mismatch {
            return;
        }
        let pos = c.iter().position(|x| std::ptr::eq(x, at)).unwrap_or(0);
        let prefix: Vec<&str> = c[..pos].iter().map(|x| x.name.as_str()).collect();
        let mut names: Vec<&str> = crate::suggest::probe_functors(&prefix).to_vec();
        if prefix.is_empty() {
            names.extend(crate::tapset::kernel_aliases::families());
        }
        let sugs = if names.contains(&at.name.as_str()) {
            String::new()
        } else {
            crate::suggest::similar(&at.name, names)
        };
        self.err(Diagnostic::semantic(
            format!("probe point mismatch{sugs}"),
            at.span,
        ));
    }

    /// Resolves one probe point; `None` after reporting an error, or for
    /// `never`.
    pub(super) fn point(&mut self, pp: &ProbePoint) -> Option<Point> {
        self.quiet_mismatch = pp.optional || pp.tentative.is_some();
        let p = self.point_inner(pp);
        self.quiet_mismatch = false;
        p
    }

    fn point_inner(&mut self, pp: &ProbePoint) -> Option<Point> {
        let c = &pp.components;
        let first = c.first()?;
        let span = first.span;
        let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
        if let Some(cond) = pp.condition {
            self.unsupported("conditional probe points (if)", cond);
            return None;
        }
        // Families stapvm refuses whole, before any wildcard in them is
        // looked at: the user-space marks that stap's or the
        // applications' tapsets define (issue 12).
        if let Some(what) = user_space_family(names[0]) {
            self.unsupported(&format!("user-space probes ({what})"), span);
            return None;
        }
        // After `syscall.NAME`, globs are matched against the suffixes
        // below (`.return.maxact*(10)`).
        let glob_upto = if matches!(names[0], "syscall" | "nd_syscall") {
            2
        } else {
            c.len()
        };
        if let Some(w) = c.iter().take(glob_upto).find(|c| c.name.contains('*')) {
            self.unsupported("wildcard probe points", w.span);
            return None;
        }
        let flags = if pp.optional {
            abi::STP_PROBE_F_OPTIONAL as u8
        } else {
            0
        };
        let display = pp.display();
        let mut p = Point {
            kind: 0,
            ctx: 0,
            target: ProbeTarget::None,
            period_ns: 0,
            randomize: 0,
            perf: None,
            watch: None,
            netfilter: None,
            maxactive: 0,
            flags,
            script: pp.script.clone().unwrap_or_else(|| display.clone()),
            display,
            span,
            sequence: 0,
            oneshot: false,
        };
        // A component that does not fit here, or an argument where none
        // is allowed (or a missing one): stap says the same for both.
        // An optional point that does not fit is dropped, as stap's
        // derive_probes does (`ioscheduler.*.return ?` over aliases on
        // tracepoints, which have no `.return`).
        let optional = pp.optional || pp.tentative.is_some();
        let mismatch = |r: &mut Self, at: &Component| r.mismatch_unless_optional(c, at, optional);
        match names.as_slice() {
            ["begin"] | ["end"] => {
                if first.arg.is_some() && lit_num(first).is_none() {
                    return mismatch(self, first);
                }
                p.sequence = lit_num(first).unwrap_or(0);
                let begin = names[0] == "begin";
                p.set_kind(if begin {
                    abi::STP_PROBE_BEGIN
                } else {
                    abi::STP_PROBE_END
                });
                p.flags = 0;
                Some(p)
            }
            ["never"] => None,
            ["oneshot"] if first.arg.is_none() => {
                p.set_kind(abi::STP_PROBE_BEGIN);
                p.flags = 0;
                p.oneshot = true;
                Some(p)
            }
            ["error"] => {
                // Runs at STOP instead of the end probes when the session
                // is in the error state; handler context END.
                if first.arg.is_some() && lit_num(first).is_none() {
                    return mismatch(self, first);
                }
                p.sequence = lit_num(first).unwrap_or(0);
                p.set_kind(abi::STP_PROBE_ERROR);
                p.flags = 0;
                Some(p)
            }
            ["timer", unit] | ["timer", unit, "randomize"] => {
                let unit_c = &c[1];
                let rand = c.get(2);
                let scale: i64 = match *unit {
                    "s" | "sec" => 1_000_000_000,
                    "ms" | "msec" => 1_000_000,
                    "us" | "usec" => 1_000,
                    "ns" | "nsec" => 1,
                    "hz" => 0,
                    "jiffies" => return self.jiffies_point(p, unit_c, rand, span),
                    "profile" if rand.is_none() => return self.profile_point(p, c, 0),
                    _ => return mismatch(self, unit_c),
                };
                let Some(n) = lit_num(unit_c) else {
                    return mismatch(self, unit_c);
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
                        // stap scales M as N, except for hz (M in ns).
                        let msg = "randomization value out of range";
                        p.randomize = self.randomize(rand, scale.max(1), ns, msg, span)?;
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
                p.set_kind(abi::STP_PROBE_TIMER);
                Some(p)
            }
            ["kernel" | "kprobe", "function", ..] => {
                if first.arg.is_some() {
                    return mismatch(self, first);
                }
                self.function_point(p, c, None, 1)
            }
            ["module", "function", ..] => self.function_point(p, c, Some(first), 1),
            ["module", "statement", ..] => self.statement_point(p, c, Some(first)),
            ["kprobe", "module", "function", ..] => {
                if first.arg.is_some() {
                    return mismatch(self, first);
                }
                self.function_point(p, c, Some(&c[1]), 2)
            }
            ["syscall" | "nd_syscall", name, rest @ ..] => {
                let nc = &c[1];
                if first.arg.is_some() || nc.arg.is_some() {
                    return mismatch(self, if first.arg.is_some() { first } else { nc });
                }
                // `.return`, then `.maxactive(N)` (the kretprobe's
                // maxactive); globs match these names, as stap's match
                // tree does.
                let fits = |comp: &Component, name: &str| glob(&comp.name, name);
                let ret = match rest {
                    [] => false,
                    [_] | [_, _] if !fits(&c[2], "return") || c[2].arg.is_some() => {
                        return mismatch(self, &c[2])
                    }
                    [_] => true,
                    [_, _] => {
                        let mc = &c[3];
                        match lit_num(mc) {
                            Some(m)
                                if fits(mc, "maxactive")
                                    && (0..=i64::from(u32::MAX)).contains(&m) =>
                            {
                                p.maxactive = m as u32
                            }
                            _ => return mismatch(self, mc),
                        }
                        true
                    }
                    _ => return mismatch(self, &c[4]),
                };
                // (Concatenated: `format!` was most of this pass's time
                // on the syscall test scripts.)
                let prefixed = |pre: &str| [pre, *name].concat();
                p.target = ProbeTarget::FirstOf(vec![
                    prefixed("__x64_sys_"),
                    prefixed("__se_sys_"),
                    prefixed("sys_"),
                ]);
                self.set_kprobe(&mut p, ret);
                Some(p)
            }
            ["process", "function", ..]
            | ["process", "statement", "absolute"]
            | ["process", "mark", ..]
            | ["process", "provider", "mark", ..]
            | ["process", "library"]
            | ["process", "library", "function", ..]
            | ["process", "library", "statement", "absolute"]
            | ["process", "library", "mark", ..]
            | ["process", "library", "provider", "mark", ..]
                if lit_str(first).is_some() || first.arg.is_none() =>
            {
                self.user_point(p, c)
            }
            ["process", "begin" | "end"]
            | ["process", "thread", "begin" | "end"]
            | ["process", "syscall"]
            | ["process", "syscall", "return"] => {
                let (path, pid) = match &first.arg {
                    None => (String::new(), 0),
                    Some(Literal::Num(n, _)) if (1..=i64::from(i32::MAX)).contains(n) => {
                        (String::new(), *n as i32)
                    }
                    Some(Literal::Str(s, _))
                        if !s.is_empty()
                            && s.len() <= abi::STP_MAX_UPROBE_PATH as usize
                            && !s.contains(&0) =>
                    {
                        (String::from_utf8_lossy(s).into_owned(), 0)
                    }
                    _ => {
                        self.err(Diagnostic::semantic(
                            "invalid process: a program's path or name, or a process id",
                            first.span,
                        ));
                        return None;
                    }
                };
                let (kind, event) = match names.as_slice() {
                    [_, "begin"] => (abi::STP_PROBE_PROCESS, abi::STP_PROC_BEGIN),
                    [_, "end"] => (abi::STP_PROBE_PROCESS, abi::STP_PROC_END),
                    [_, "thread", "begin"] => (abi::STP_PROBE_PROCESS, abi::STP_PROC_THREAD_BEGIN),
                    [_, "thread", _] => (abi::STP_PROBE_PROCESS, abi::STP_PROC_THREAD_END),
                    [_, "syscall"] => (abi::STP_PROBE_PSYSCALL, 0),
                    _ => (abi::STP_PROBE_PSYSCALL_RETURN, 0),
                };
                p.set_kind(kind);
                p.target = ProbeTarget::Process { path, pid, event };
                Some(p)
            }
            ["process", ..] => {
                self.unsupported("these user-space probes", span);
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
                    return mismatch(self, first);
                }
                if let Some(extra) = c.get(2) {
                    return mismatch(self, extra);
                }
                let Some(name) = lit_str(tc) else {
                    return mismatch(self, tc);
                };
                // `SYSTEM:NAME` and globs in either part: the loader
                // expands them on the running kernel's tracepoint list
                // (userspace/src/tracepoints.rs).
                let (system, tp) = match name.split_once(':') {
                    Some((s, n)) => (Some(s), n),
                    None => (None, name),
                };
                // Identifier characters and globs; `!` and `-` only in a
                // `[...]` class.
                let part_ok = |x: &str| {
                    let mut in_class = false;
                    !x.is_empty()
                        && x.bytes().all(|c| {
                            match c {
                                b'[' => in_class = true,
                                b']' => in_class = false,
                                b'!' | b'-' => return in_class,
                                _ => {}
                            }
                            c.is_ascii_alphanumeric() || b"_*?[]".contains(&c)
                        })
                };
                if name.len() > abi::STP_MAX_SYMBOL_LEN as usize
                    || !part_ok(tp)
                    || system.is_some_and(|s| !part_ok(s))
                {
                    self.err(Diagnostic::semantic(
                        format!("invalid tracepoint name \"{name}\""),
                        tc.span,
                    ));
                    return None;
                }
                p.set_kind(abi::STP_PROBE_TRACEPOINT);
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
            // stap's guru-only absolute statement probe: a kprobe at an
            // address, which the loader turns into the text symbol holding
            // it plus the offset on the running kernel; the kernel's kprobe
            // checks (blacklist, instruction boundary) guard it, so stapvm
            // needs no guru mode for it. No target variables: without
            // DWARF nothing says where they are at that address.
            ["kernel" | "kprobe", "statement", "absolute"] if c[2].arg.is_none() => {
                match &c[1].arg {
                    Some(Literal::Num(a, _)) => {
                        p.set_kind(abi::STP_PROBE_KPROBE);
                        p.target = ProbeTarget::Address(*a as u64);
                        // An address reads as one: in hex, as stap's pp().
                        let (dec, hex) = (format!("({a})"), format!("({:#x})", *a as u64));
                        p.display = p.display.replacen(&dec, &hex, 1);
                        p.script = p.script.replacen(&dec, &hex, 1);
                        Some(p)
                    }
                    _ => mismatch(self, &c[1]),
                }
            }
            ["kernel", "data", ..] => self.watch_point(p, c, optional),
            ["kernel", "statement", ..] => {
                if first.arg.is_some() {
                    return mismatch(self, first);
                }
                self.statement_point(p, c, None)
            }
            ["kprobe", "statement", ..] => {
                self.unsupported("kprobe.statement probes without .absolute", span);
                None
            }
            ["timer", "profile", "tick"] => self.profile_point(p, c, 0),
            // A profile timer N times a second of CPU time: the period
            // as perf.sw.cpu_clock.sample's, in the same bounds.
            ["timer", "profile", "freq", "hz"] => match lit_num(&c[3]) {
                Some(n) if (1..=1_000_000_000 / 100_000).contains(&n) => {
                    self.profile_point(p, &c[..3], (1_000_000_000 / n) as u64)
                }
                Some(_) => {
                    self.err(
                        Diagnostic::semantic("while resolving probe point", span)
                            .with_note("interval value out of range (1, 10000)", None),
                    );
                    None
                }
                None => mismatch(self, &c[3]),
            },
            ["perf", ..] => self.perf_point(p, c, optional),
            ["netfilter", ..] => self.netfilter_point(p, c, optional),
            ["procfs", ..] => self.procfs_point(p, c, span),
            // input.char / input.line are aliases (tapset/kernel/input.stp)
            // of these, which the consumer's standard input fires.
            ["__stapvm_input", which @ ("char" | "line")] if c.iter().all(|x| x.arg.is_none()) => {
                p.set_kind(if *which == "char" {
                    abi::STP_PROBE_INPUT_CHAR
                } else {
                    abi::STP_PROBE_INPUT_LINE
                });
                p.flags = 0;
                Some(p)
            }
            ["java" | "python2" | "python3" | "input" | "syscall_any" | "nd_syscall_any"
            | "tp_syscall" | "debuginfod" | "lsm" | "prometheus", ..] => {
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

    /// `process("PATH").function("F")` with `.call` / `.return`, and
    /// `process("PATH").statement(ADDR).absolute`: a uprobe (uretprobe) in
    /// the binary PATH, which the loader finds (through `$PATH` when it has
    /// no `/`) and in whose symbol table it finds F (a glob) or maps ADDR
    /// to a file offset (`ProbeTarget::User`).
    /// `process` without a path is the `-c`/`-x` target's executable (an
    /// empty path; the loader finds it and counts in the target only).
    fn user_point(&mut self, mut p: Point, c: &[Component]) -> Option<Point> {
        let path = match &c[0].arg {
            None => String::new(),
            Some(_) => lit_str(&c[0])?.to_string(),
        };
        if (c[0].arg.is_some() && path.is_empty())
            || path.len() > abi::STP_MAX_UPROBE_PATH as usize
            || path.contains('\0')
        {
            self.err(Diagnostic::semantic(
                format!("invalid process path \"{path}\""),
                c[0].span,
            ));
            return None;
        }
        // `.library("LIB")`: the site is the component after it.
        let (library, k) = if c[1].name == "library" {
            let Some(l) = lit_str(&c[1]).filter(|l| !l.is_empty() && !l.contains('\0')) else {
                self.mismatch(c, &c[1]);
                return None;
            };
            (Some(l.to_string()), 2)
        } else {
            (None, 1)
        };
        let Some(sc) = c.get(k) else {
            self.mismatch(c, &c[k - 1]);
            return None;
        };
        let site = match sc.name.as_str() {
            "function" => {
                let Some(f) = lit_str(sc) else {
                    self.mismatch(c, sc);
                    return None;
                };
                if f.contains('@') || f.contains(':') {
                    self.unsupported(
                        "user-space function probes with a source file or line (they need the binary's DWARF)",
                        sc.span,
                    );
                    return None;
                }
                if f.is_empty()
                    || !f
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"_.$*?".contains(&b))
                {
                    self.err(Diagnostic::semantic(
                        format!("invalid function name \"{f}\""),
                        sc.span,
                    ));
                    return None;
                }
                UserSite::Function(f.to_string())
            }
            "mark" | "provider" => {
                let (provider, mc) = if sc.name == "provider" {
                    let Some(p) = lit_str(sc) else {
                        self.mismatch(c, sc);
                        return None;
                    };
                    let Some(mc) = c.get(k + 1).filter(|m| m.name == "mark") else {
                        self.mismatch(c, c.get(k + 1).unwrap_or(sc));
                        return None;
                    };
                    (Some(p.to_string()), mc)
                } else {
                    (None, sc)
                };
                let Some(name) = lit_str(mc) else {
                    self.mismatch(c, mc);
                    return None;
                };
                let ok = |s: &str| {
                    !s.is_empty()
                        && s.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b"_-.*?".contains(&b))
                };
                if !ok(name) || provider.as_deref().is_some_and(|p| !ok(p)) {
                    self.err(Diagnostic::semantic(
                        format!("invalid marker name \"{name}\""),
                        mc.span,
                    ));
                    return None;
                }
                let used = k + if provider.is_some() { 2 } else { 1 };
                if let Some(extra) = c.get(used) {
                    self.mismatch(c, extra);
                    return None;
                }
                UserSite::Mark {
                    provider,
                    name: name.to_string(),
                }
            }
            "statement" => match &sc.arg {
                Some(Literal::Num(a, _))
                    if c.len() == k + 2
                        && c[k + 1].name == "absolute"
                        && c[k + 1].arg.is_none() =>
                {
                    // An address reads as one: in hex, as stap's pp().
                    let (dec, hex) = (format!("({a})"), format!("({:#x})", *a as u64));
                    p.display = p.display.replacen(&dec, &hex, 1);
                    p.script = p.script.replacen(&dec, &hex, 1);
                    UserSite::Address(*a as u64)
                }
                _ => {
                    self.mismatch(c, sc);
                    return None;
                }
            },
            _ => {
                self.mismatch(c, sc);
                return None;
            }
        };
        let mut ret = false;
        if matches!(site, UserSite::Function(_)) {
            for (i, comp) in c[k + 1..].iter().enumerate() {
                match comp.name.as_str() {
                    "call" if i == 0 && comp.arg.is_none() => {}
                    "return" if !ret && comp.arg.is_none() => ret = true,
                    _ => {
                        self.mismatch(c, comp);
                        return None;
                    }
                }
            }
        }
        p.set_kind(if ret {
            abi::STP_PROBE_URETPROBE
        } else {
            abi::STP_PROBE_UPROBE
        });
        p.target = ProbeTarget::User {
            path,
            library,
            site,
        };
        Some(p)
    }

    /// `kernel.statement("PAT")` and `module("m").statement("PAT")`, with
    /// `.nearest`: `c[1]` is the `statement` component, PAT
    /// `FUNC[@FILE[:LINE|:FIRST-LAST|:*|+REL]]`. The loader finds the
    /// lines' addresses in the target's debuginfo (`ProbeTarget::Statement`);
    /// a kprobe at each.
    fn statement_point(
        &mut self,
        mut p: Point,
        c: &[Component],
        module: Option<&Component>,
    ) -> Option<Point> {
        let sc = &c[1];
        let Some(pat) = lit_str(sc) else {
            self.mismatch(c, sc);
            return None;
        };
        let mut nearest = false;
        for comp in &c[2..] {
            if comp.name == "nearest" && comp.arg.is_none() && !nearest {
                nearest = true;
            } else {
                self.mismatch(c, comp);
                return None;
            }
        }
        let spec = match module {
            Some(mc) => {
                let Some(m) = lit_str(mc) else {
                    self.mismatch(c, mc);
                    return None;
                };
                // kallsyms and kprobes spell module names with '_'.
                format!("{}:{pat}", m.replace('-', "_"))
            }
            None => pat.to_string(),
        };
        let bad = match vm_spec::program::StatementSpec::parse(&spec) {
            Err(why) => Some(why),
            Ok(s) if module.is_none() && s.module.is_some() => {
                Some(format!("invalid function name \"{}\"", pat))
            }
            Ok(_) if spec.len() > 2 * abi::STP_MAX_SYMBOL_LEN as usize => {
                Some("statement pattern too long".to_string())
            }
            Ok(_) => None,
        };
        if let Some(why) = bad {
            self.err(Diagnostic::semantic(
                format!("invalid statement probe \"{pat}\": {why}"),
                sc.span,
            ));
            return None;
        }
        p.target = ProbeTarget::Statement { spec, nearest };
        self.set_kprobe(&mut p, false);
        Some(p)
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
            r.mismatch(c, at);
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
                    .all(|c| c.is_ascii_alphanumeric() || b"_-*?".contains(&c))
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
                "inline" => {
                    // Inlined instances are found only through DWARF, which
                    // stapvm does not read.
                    let what = ".inline probe points (needs debuginfo)";
                    if p.flags & abi::STP_PROBE_F_OPTIONAL as u8 != 0 {
                        // Under `?` the point is dropped, as stap drops an
                        // optional point it cannot find, with a warning.
                        self.diags.push(Diagnostic::warning(
                            format!("not supported yet: {what}; optional point dropped"),
                            comp.span,
                        ));
                    } else {
                        self.unsupported(what, comp.span);
                    }
                    return None;
                }
                n @ ("exported" | "label" | "callee" | "callees") => {
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
            p.set_kind(abi::STP_PROBE_KRETPROBE);
        } else {
            p.set_kind(abi::STP_PROBE_KPROBE);
        }
    }
}
