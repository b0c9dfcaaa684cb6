//! Statistics: the globals (and array elements) used with `<<<` and the
//! extractors, and the literal parameters of `@variance` and the
//! histograms, which must agree across uses (stap).
use super::*;
use crate::parse::STAT_EXTRACTORS;

/// The histogram operators of statistics.
const HIST_OPS: &[&str] = &["@hist_log", "@hist_linear"];

/// Whether `op` is an operator on a statistic: an extractor
/// (`parse::STAT_EXTRACTORS`) or a histogram (`HIST_OPS`).
fn is_stat_op(op: &str) -> bool {
    STAT_EXTRACTORS.contains(&op) || HIST_OPS.contains(&op)
}

impl Resolver<'_> {
    /// The statistic `a` names (a global, made a statistic here), or an
    /// error. `a[k...]` names an element of a statistics array.
    pub(super) fn stat_operand(&mut self, a: &Expr) -> Option<usize> {
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
    pub(super) fn stat_expr(&mut self, e: &Expr, op: &str, args: &[Expr]) {
        use vm_spec::program::Hist;
        let nparams = match op {
            "@hist_linear" => 3,
            "@variance" => args.len().saturating_sub(1).min(1),
            _ => 0,
        };
        if !is_stat_op(op) || args.len() != nparams + 1 {
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
}
