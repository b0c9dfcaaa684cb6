//! The walk over probe and function bodies: every expression and
//! statement, with its names resolved, its uses recorded (written, used,
//! read) and the errors of this stage reported; each construct with rules
//! of its own has its file (`builtins.rs`, `targets.rs`, `stats.rs`,
//! `arrays.rs`).
use super::targets::defined_cond;
use super::*;

impl Resolver<'_> {
    /// Every point of the probe being walked has `$value` (procfs and
    /// input probes); false in a function.
    fn value_ctx(&self) -> bool {
        !self.cur_points.is_empty() && self.cur_points.iter().all(|p| super::is_value_ctx(p.ctx))
    }

    /// Some point of the probe being walked is a netfilter hook: its
    /// `$verdict` is the verdict (helpers.h VERDICT), wherever the other
    /// points are (`check_ctx` refuses a mix); false in a function.
    fn nf_ctx(&self) -> bool {
        self.cur_points
            .iter()
            .any(|p| u32::from(p.ctx) == abi::STP_CTX_NETFILTER)
    }

    /// `$verdict = rhs` in a netfilter probe (VERDICT_SET): only a plain
    /// assignment, and a constant only NF_DROP (0) or NF_ACCEPT (1), the
    /// verdicts that cannot lose or hold the packet (abi.h: netfilter
    /// hooks; a computed value is checked at run time). stap accepts any
    /// write only with -g.
    fn verdict_write(&mut self, lhs: &Expr, op: Option<AssignOp>, rhs: Option<&Expr>) {
        if op != Some(AssignOp::Set) {
            return self.err(Diagnostic::semantic(
                "the netfilter verdict can only be assigned ($verdict = NF_DROP or NF_ACCEPT)",
                lhs.span,
            ));
        }
        let constant = rhs.and_then(|r| match &r.kind {
            ExprKind::Num(n) => Some(*n),
            ExprKind::Unary(UnOp::Neg, x) => match x.kind {
                ExprKind::Num(n) => Some(n.wrapping_neg()),
                _ => None,
            },
            _ => None,
        });
        if let Some(v) = constant.filter(|v| !matches!(v, 0 | 1)) {
            let name = match v {
                2 => " (NF_STOLEN)",
                3 => " (NF_QUEUE)",
                4 => " (NF_REPEAT)",
                5 => " (NF_STOP)",
                _ => "",
            };
            return self.err(Diagnostic::semantic(
                format!(
                    "netfilter verdict {v}{name} is not allowed: $verdict can only be set to \
                     NF_DROP (0) or NF_ACCEPT (1)"
                ),
                rhs.map_or(lhs.span, |r| r.span),
            ));
        }
        self.check_ctx(abi::STP_HLP_VERDICT_SET, "$verdict", lhs.span);
        self.verdict_exprs.insert(lhs.id);
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
            // Writing kernel or user memory: stap needs -g (crate::guru).
            // Not walked: it is refused whatever it names.
            // A procfs read probe sets its file's content (VALUE_SET,
            // VALUE_APPEND); elsewhere `$value` is only read.
            ExprKind::Target(name) if self.procfs && name == "$value" && self.value_ctx() => {
                let all_read = self
                    .cur_points
                    .iter()
                    .all(|p| u32::from(p.ctx) == abi::STP_CTX_PROCFS_READ);
                if all_read {
                    self.value_exprs.insert(e.id);
                } else {
                    self.err(Diagnostic::semantic(
                        "$value can only be set in a procfs read probe (a write or input probe's is what was written)",
                        e.span,
                    ));
                }
            }
            ExprKind::Target(name) if self.procfs && name == "$value" => self.expr(e, true),
            // Elsewhere `$value` is the procfs buffer the JSON and
            // Prometheus macros (parse/tapset.stpm) write to.
            ExprKind::Target(name) if name == "$value" => {
                self.unsupported("$value outside a procfs read probe (procfs probes)", e.span)
            }
            _ if crate::guru::is_target_value(e) => {
                self.err(Diagnostic::semantic(crate::guru::target_write(), e.span));
            }
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
    pub(super) fn expr(&mut self, e: &Expr, used: bool) {
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
            ExprKind::Target(name) if name == "$value" && self.value_ctx() => {
                self.value_exprs.insert(e.id);
            }
            ExprKind::Target(name) if name == "$verdict" && self.nf_ctx() => {
                self.check_ctx(abi::STP_HLP_VERDICT, "$verdict", e.span);
                self.verdict_exprs.insert(e.id);
            }
            ExprKind::Target(name) => {
                if name == "$return" {
                    self.check_ctx(abi::STP_HLP_RETVAL, "$return", e.span);
                } else {
                    self.target_var(e, name, &[]);
                }
            }
            ExprKind::Call { name, args } => self.call(e, name, args),
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
            ExprKind::Binary(_, a, b) | ExprKind::Cmp(_, a, b) | ExprKind::Concat(a, b) => {
                self.expr(a, true);
                self.expr(b, true);
            }
            ExprKind::And(a, b) => {
                self.expr(a, true);
                let cond = defined_cond(a);
                self.under(&cond, true, |r| r.expr(b, true));
            }
            ExprKind::Or(a, b) => {
                self.expr(a, true);
                let cond = defined_cond(a);
                self.under(&cond, false, |r| r.expr(b, true));
            }
            ExprKind::Ternary(c, a, b) => {
                self.expr(c, true);
                let cond = defined_cond(c);
                self.under(&cond, true, |r| r.expr(a, used));
                self.under(&cond, false, |r| r.expr(b, used));
            }
            ExprKind::Assign(op, lhs, rhs) => {
                self.expr(rhs, true);
                if matches!(&lhs.kind, ExprKind::Target(n) if n == "$verdict") && self.nf_ctx() {
                    self.verdict_write(lhs, Some(*op), Some(rhs));
                } else {
                    self.lvalue(lhs, e.span, used, *op != AssignOp::Set);
                }
            }
            ExprKind::PreIncr(_, a) | ExprKind::PostIncr(_, a)
                if matches!(&a.kind, ExprKind::Target(n) if n == "$verdict") && self.nf_ctx() =>
            {
                self.verdict_write(a, None, None);
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
            // `i in @hist_log(s)`: stap's `@hist_log(s)[i]`, nonzero
            // when bucket i holds samples (lower/stats.rs).
            ExprKind::In { keys, array } if matches!(array.kind, ExprKind::Stat { .. }) => {
                self.exprs(keys.iter().flatten());
                self.expr(array, true);
                let hist =
                    matches!(&array.kind, ExprKind::Stat { op, .. } if op.starts_with("@hist"));
                if !hist || keys.len() != 1 || keys.iter().any(Option::is_none) {
                    self.unsupported(
                        "this form of `in` on a statistic (one bucket index of a histogram)",
                        e.span,
                    );
                }
            }
            ExprKind::In { keys, array } => {
                // `[k, *] in a`: any entry with those fixed keys
                // (lower/maps.rs); `*` stands in for a key here.
                let keys = super::arrays::slice_keys(keys, e.span);
                if let Some(g) = self.array_ref(array, &keys, e.span) {
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
            ExprKind::Deref { base, comps } if matches!(&base.kind, ExprKind::Target(n) if n != "$return") => {
                if let ExprKind::Target(name) = &base.kind {
                    self.target_var(e, name, comps);
                }
            }
            ExprKind::Deref { base, comps } if matches!(&base.kind, ExprKind::AtOp { op, .. } if op == "@cast") =>
            {
                self.cast(e, base, comps);
            }
            ExprKind::Deref { base, comps } if matches!(&base.kind, ExprKind::AtOp { op, .. } if op == "@var") =>
            {
                self.kernel_var(e, base, comps);
            }
            ExprKind::AtOp { op, .. } if op == "@var" => self.kernel_var(e, e, &[]),
            ExprKind::Deref { base, .. } => {
                let what = match &base.kind {
                    ExprKind::Target(_) => "target variables",
                    ExprKind::AtOp { op, .. } if op == "@var" => "@var",
                    _ => "@cast",
                };
                self.unsupported(what, base.span);
            }
            ExprKind::AddrOf(inner) => self.addr_of(e, inner),
            ExprKind::AtOp { op, args } if op == "@defined" => self.defined(e, args),
            // Outside a `.return` probe (tapset/entry.rs rewrote those),
            // after a `@defined(@entry(...))`, which is 0 here: dead code.
            ExprKind::AtOp { op, .. } if op == "@entry" && self.entry_guarded => {
                self.dead_targets.insert(e.id);
            }
            ExprKind::AtOp { op, .. } => self.unsupported(op, e.span),
        }
    }

    /// Walks operands whose values are used.
    pub(super) fn exprs<'e>(&mut self, es: impl IntoIterator<Item = &'e Expr>) {
        for a in es {
            self.expr(a, true);
        }
    }

    /// Walks a block. After `if (@defined(x)) <jump>` without an `else`
    /// (a `return`, `next`, `break` or `continue` ends the branch), the
    /// rest of the block runs only when the condition fails, as if it
    /// were the `else` (`TargetVar::conds`): stap folds the condition, so
    /// a fallback after the early return is never resolved where `x`
    /// exists.
    fn block(&mut self, b: &[Stmt]) {
        let depth = self.conds.len();
        for s in b {
            self.stmt(s);
            if let StmtKind::If {
                cond,
                then,
                els: None,
            } = &s.kind
            {
                if let Some((name, fields, pol)) = defined_cond(cond).filter(|_| always_jumps(then))
                {
                    self.conds.push(TargetCond {
                        name,
                        fields,
                        defined: !pol,
                    });
                }
            }
        }
        self.conds.truncate(depth);
    }

    pub(super) fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Null | StmtKind::Next => {}
            StmtKind::Block(b) => self.block(b),
            StmtKind::Expr(e) => self.expr(e, false),
            StmtKind::If { cond, then, els } => {
                self.expr(cond, true);
                let c = defined_cond(cond);
                self.under(&c, true, |r| r.stmt(then));
                if let Some(e) = els {
                    self.under(&c, false, |r| r.stmt(e));
                }
            }
            StmtKind::Loop(l) => {
                let (init, cond, incr, body) = (&l.init, &l.cond, &l.incr, &l.body);
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

/// Whether `s` always leaves the code after it: it ends in `return`,
/// `next`, `break` or `continue` (a block: its last statement does).
fn always_jumps(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Return(_) | StmtKind::Next | StmtKind::Break | StmtKind::Continue => true,
        StmtKind::Block(b) => b.last().is_some_and(always_jumps),
        _ => false,
    }
}
