//! Target variables (`$x`, `$x->a->b`), `@cast(addr, "TYPE")->a` and
//! `@defined(x)`: checked against the probe being walked and recorded in
//! `Resolved::target_vars` / `defined_consts` for the loader, which
//! resolves them against the kernel's BTF.
use super::*;

impl Resolver<'_> {
    /// `@defined(x)`: whether target variable (or `@cast` chain) `x`
    /// exists. In a probe without target variables (begin, timer ...) it
    /// is 0, `@defined($return)` is whether the probe is a return probe;
    /// otherwise `x` is recorded like any use and the loader answers from
    /// BTF.
    pub(super) fn defined(&mut self, e: &Expr, args: &[Expr]) {
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
    pub(super) fn cast(&mut self, e: &Expr, base: &Expr, comps: &[TargetComp]) {
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
        let Some(fields) = self.field_chain(
            comps,
            "indexing @cast values (@cast(...)->a[n])",
            "pretty-printing @cast values (->a$)",
            e.span,
        ) else {
            return;
        };
        self.target_vars
            .insert(e.id, (TargetSite::Cast(ty), fields));
    }

    /// The field names of a `->` chain; the first index (`[n]`) or
    /// pretty-printing suffix (`$`) in it is reported as the unsupported
    /// `index` or `pretty` feature, and gives `None`.
    fn field_chain(
        &mut self,
        comps: &[TargetComp],
        index: &str,
        pretty: &str,
        span: Span,
    ) -> Option<Vec<String>> {
        let mut fields = Vec::new();
        for c in comps {
            match c {
                TargetComp::Field(f, _) => fields.push(f.clone()),
                TargetComp::Index(_) => {
                    self.unsupported(index, span);
                    return None;
                }
                TargetComp::Pretty(..) => {
                    self.unsupported(pretty, span);
                    return None;
                }
            }
        }
        Some(fields)
    }

    /// Checks a target variable `name` (with `$`) and its `->` chain in
    /// the probe being walked and records where it comes from; the loader
    /// resolves it against the kernel's BTF.
    pub(super) fn target_var(&mut self, e: &Expr, name: &str, comps: &[TargetComp]) {
        if name.starts_with("$$") {
            self.unsupported(&format!("{name} (target variable listings)"), e.span);
            return;
        }
        let Some(fields) = self.field_chain(
            comps,
            "indexing target variables ($var[n])",
            "pretty-printing target variables ($var$)",
            e.span,
        ) else {
            return;
        };
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
}
