//! The print family: `print`, `println`, `printf`, `printd`, `printdln`
//! (one PRINTF of a fresh argument run), `sprint*` (SPRINTF into a string
//! register), and histograms printed whole (STHIST / MSTHIST, or STHISTS /
//! MSTHISTS pieces of a `sprint`).
use super::*;

impl Gen<'_> {
    /// The format text and argument kinds of a print-family expression:
    /// `printf`/`sprintf` take theirs; `print(a, b)` is `%s%d`, `println`
    /// adds a newline, `printd(d, a, b)` puts the delimiter between.
    fn format_of(&mut self, e: &Expr) -> Option<(String, Vec<ArgKind>, bool)> {
        let (name, format, args) = match &e.kind {
            ExprKind::Print { kind, format, args } => (
                match kind {
                    PrintKind::Printf => "printf",
                    PrintKind::Print => "print",
                    PrintKind::Println => "println",
                },
                format,
                args,
            ),
            ExprKind::Format { name, format, args } => (name.as_str(), format, args),
            _ => return None,
        };
        let to_string = name.starts_with('s');
        let base = name.trim_start_matches('s');
        if base == "printf" || name == "sprintf" {
            let text = String::from_utf8_lossy(format.as_deref().unwrap_or_default()).into_owned();
            let kinds = match self.tabs.printf_kinds.get(&text) {
                Some(k) => k.clone(),
                None => {
                    let k = crate::printf::parse(&text).unwrap_or_default();
                    self.tabs.printf_kinds.insert(text.clone(), k.clone());
                    k
                }
            };
            return Some((text, kinds, to_string));
        }
        let delim = if base.starts_with("printd") {
            String::from_utf8_lossy(format.as_deref().unwrap_or_default()).replace('%', "%%")
        } else {
            String::new()
        };
        let mut text = String::new();
        let mut kinds = Vec::new();
        for (k, a) in args.iter().enumerate() {
            if k > 0 {
                text.push_str(&delim);
            }
            if self.ty(a) == Ty::Str {
                text.push_str("%s");
                kinds.push(ArgKind::Str);
            } else {
                text.push_str("%d");
                kinds.push(ArgKind::Int);
            }
        }
        if base.ends_with("ln") {
            text.push('\n');
        }
        Some((text, kinds, to_string))
    }

    /// `sprint`, `sprintf` ... into string register `dst`.
    pub(super) fn sprint(&mut self, e: &Expr, dst: u8) {
        if let ExprKind::Format { args, .. } = &e.kind {
            if args
                .iter()
                .any(|a| matches!(&a.kind, ExprKind::Stat { op, .. } if op.starts_with("@hist")))
            {
                return self.sprint_hist(e, dst);
            }
        }
        let (ExprKind::Format { args, .. }, Some((text, kinds, _))) = (&e.kind, self.format_of(e))
        else {
            return;
        };
        if text.len() > self.tabs.maxstr || text.contains('\0') {
            self.fail("not supported yet: a sprintf format longer than MAXSTRINGLEN");
            return;
        }
        if kinds.len() > abi::STP_MAX_FMT_ARGS as usize {
            self.fail("too many arguments to sprintf");
            return;
        }
        let strs: Vec<bool> = kinds.iter().map(|k| *k == ArgKind::Str).collect();
        let (rb, sc) = self.arg_runs(args, &strs);
        let f = self.tabs.format(&text, kinds);
        // SPRINTF must not write one of its arguments: dst is older than
        // the runs, unless it is a local, which is not in them either.
        self.emit(abi::STP_OP_SPRINTF, dst, rb, sc, f);
    }

    /// `print(@hist_log(s))`, `println(@hist_linear(s, ...))`: one STHIST
    /// per histogram, each other argument printed as `print` would.
    fn print_hist(&mut self, kind: PrintKind, args: &[Expr], span: Span, id: ExprId) {
        for a in args {
            match &a.kind {
                ExprKind::Stat { op, args: sargs } if op.starts_with("@hist") => {
                    let saved = self.enter(a.span);
                    if let Some((g, ExprKind::Index { keys, .. })) = sargs
                        .first()
                        .and_then(|x| self.stat_elem(x).map(|g| (g, &x.kind)))
                    {
                        let mark = self.mark();
                        let (rb, sc) = self.key_runs(g, keys);
                        let map = self.map_id(g);
                        self.emit(abi::STP_OP_MSTHIST, 0, rb, sc, map);
                        self.release(mark);
                    } else if let Some(st) = sargs.first().and_then(|x| self.stat_of(x)) {
                        self.emit(abi::STP_OP_STHIST, 0, 0, 0, st);
                    }
                    self.leave(saved);
                }
                _ => {
                    let one = Expr {
                        kind: ExprKind::Print {
                            kind: PrintKind::Print,
                            format: None,
                            args: vec![a.clone()],
                        },
                        span,
                        id,
                    };
                    self.print(&one);
                }
            }
        }
        if matches!(kind, PrintKind::Println) {
            let f = self.tabs.format("\n", Vec::new());
            self.emit(abi::STP_OP_PRINTF, 0, 0, 0, f);
        }
    }

    /// `printf`, `print`, `println`, `printd`, `printdln`.
    pub(super) fn print(&mut self, e: &Expr) {
        let (ExprKind::Print { args, .. } | ExprKind::Format { args, .. }) = &e.kind else {
            return;
        };
        let is_hist =
            |a: &Expr| matches!(&a.kind, ExprKind::Stat { op, .. } if op.starts_with("@hist"));
        if args.iter().any(is_hist) {
            match &e.kind {
                ExprKind::Print {
                    kind: kind @ (PrintKind::Print | PrintKind::Println),
                    ..
                } => self.print_hist(*kind, args, e.span, e.id),
                _ => self.fail("not supported yet: a histogram in a formatted print or a string"),
            }
            return;
        }
        let Some((text, kinds, to_string)) = self.format_of(e) else {
            return;
        };
        if to_string {
            // sprint* for its effect only.
            let t = self.alloc_s();
            self.sprint(e, t);
            return;
        }
        if kinds.len() > abi::STP_MAX_FMT_ARGS as usize {
            self.fail(&format!(
                "too many arguments to print ({}, at most {})",
                kinds.len(),
                abi::STP_MAX_FMT_ARGS
            ));
            return;
        }
        let strs: Vec<bool> = kinds.iter().map(|k| *k == ArgKind::Str).collect();
        let (rb, sc) = self.arg_runs(args, &strs);
        let f = self.tabs.format(&text, kinds);
        self.emit(abi::STP_OP_PRINTF, 0, rb, sc, f);
    }

    /// `sprint(...)` / `sprintln(...)` with a histogram among its
    /// arguments: each piece (STHISTS for a histogram, else the argument
    /// as `sprint` formats it) appended to `dst` with SCAT.
    fn sprint_hist(&mut self, e: &Expr, dst: u8) {
        use abi::*;
        let ExprKind::Format { name, args, .. } = &e.kind else {
            return;
        };
        if name != "sprint" && name != "sprintln" {
            self.fail("not supported yet: a histogram in a formatted string");
            return;
        }
        let mark = self.mark();
        let piece = self.alloc_s();
        let empty = self.tabs.string(b"");
        self.emit(STP_OP_SLDK, dst, 0, 0, empty);
        for a in args {
            let is_hist = matches!(&a.kind, ExprKind::Stat { op, .. } if op.starts_with("@hist"));
            if is_hist {
                let elem = match &a.kind {
                    ExprKind::Stat { args: sargs, .. } => sargs.first().and_then(|x| {
                        let ExprKind::Index { keys, .. } = &x.kind else {
                            return None;
                        };
                        self.stat_elem(x).map(|g| (g, keys))
                    }),
                    _ => None,
                };
                if let Some((g, keys)) = elem {
                    // `sprint(@hist_log(a[k]))`: MSTHISTS, keys in runs
                    // of their own (freed after it).
                    let mark = self.mark();
                    let (rb, sc) = self.key_runs(g, keys);
                    let map = self.map_id(g);
                    self.emit(STP_OP_MSTHISTS, piece, rb, sc, map);
                    self.release(mark);
                } else if let Some((st, _, None)) = self.hist_of(a) {
                    self.emit(STP_OP_STHISTS, piece, 0, 0, st);
                } else {
                    self.fail("internal error: a histogram of no statistic");
                    return;
                }
            } else {
                let one = Expr {
                    kind: ExprKind::Format {
                        name: "sprint".into(),
                        format: None,
                        args: vec![a.clone()],
                    },
                    span: e.span,
                    id: e.id,
                };
                self.sprint(&one, piece);
            }
            self.emit(STP_OP_SCAT, dst, dst, piece, 0);
        }
        if name == "sprintln" {
            let nl = self.tabs.string(b"\n");
            self.emit(STP_OP_SLDK, piece, 0, 0, nl);
            self.emit(STP_OP_SCAT, dst, dst, piece, 0);
        }
        self.release(mark);
    }
}
