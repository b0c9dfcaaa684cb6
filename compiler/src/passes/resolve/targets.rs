//! Target variables (`$x`, `$x->a[i]->b`, `&$x->a`), `@cast(addr,
//! "TYPE")->a` and `@defined(x)`: checked against the probe being walked
//! and recorded in `Resolved::target_vars` / `defined_consts` for the
//! loader, which resolves them against the kernel's BTF (a user-space
//! function's parameters against its binary's DWARF, converted to BTF).
//!
//! A probe with several points (or a wildcard point) gets one handler per
//! context; each of its probes resolves a variable on its own symbol at
//! load time (`userspace/src/targetvars.rs` gives the probes whose
//! constants differ copies of the handler), as stap resolves `$x` for each
//! point. A point that cannot have target variables (`begin`, a timer) is
//! an error, unless the use is guarded by a `@defined` of the same variable
//! (or of a prefix of its chain) earlier in the probe (`@choose_defined`,
//! `@defined($x) ? $x->a : …`), which is 0 there.
use super::*;

/// The member chain of a recorded use: a member name per `->member`,
/// `[]` per index (`vm_spec::program::TargetVar::fields`).
type Chain = Vec<String>;

impl Resolver<'_> {
    /// Walks with `f` under condition `cond` (a `@defined` question, see
    /// `defined_cond`) being `holds`: the target variables used there run
    /// only when the answer is `holds` (`Resolved::target_conds`).
    pub(super) fn under(
        &mut self,
        cond: &Option<(String, Chain, bool)>,
        holds: bool,
        f: impl FnOnce(&mut Self),
    ) {
        match cond {
            Some((n, c, pol)) => {
                self.conds.push(TargetCond {
                    name: n.clone(),
                    fields: c.clone(),
                    defined: *pol == holds,
                });
                f(self);
                self.conds.pop();
            }
            None => f(self),
        }
    }

    /// `@defined(x)`: whether target variable (or `@cast` chain) `x`
    /// exists. In a probe without target variables (begin, timer ...) it
    /// is 0, `@defined($return)` is whether the probe is a return probe,
    /// `@defined(@entry(x))` outside a `.return` probe is 0 (tapset/entry.rs
    /// rewrote the ones inside); otherwise `x` is recorded like any use and
    /// the loader answers from BTF, for each probe.
    pub(super) fn defined(&mut self, e: &Expr, args: &[Expr]) {
        let Some(a) = args.first() else { return };
        // `@defined(&x)`: whether `x` exists (stap's type_defined.stpm).
        let (a, addr) = match &a.kind {
            ExprKind::AddrOf(inner) => (&**inner, true),
            _ => (a, false),
        };
        let (base, comps) = match &a.kind {
            ExprKind::Deref { base, comps } => (&**base, comps.as_slice()),
            _ => (a, &[][..]),
        };
        match &base.kind {
            ExprKind::Target(n) if n == "$return" && comps.is_empty() => {
                let ret = self.ctxs.contains(&(abi::STP_CTX_KRETPROBE as u8))
                    || self.ctxs.contains(&(abi::STP_CTX_URETPROBE as u8));
                self.defined_consts.insert(e.id, ret);
            }
            ExprKind::Target(n) => {
                self.guards.push((n.clone(), chain_of(comps)));
                if !self.cur_points.is_empty()
                    && self.cur_points.iter().all(|p| site_of(p).is_none())
                {
                    // No point of this probe has target variables.
                    self.defined_consts.insert(e.id, false);
                } else {
                    self.target_var(a, n, comps);
                }
            }
            ExprKind::AtOp { op, .. } if op == "@cast" && (!comps.is_empty() || addr) => {
                self.cast(a, base, comps)
            }
            ExprKind::AtOp { op, .. } if op == "@var" => self.kernel_var(a, base, comps),
            ExprKind::AtOp { op, .. } if op == "@entry" && comps.is_empty() => {
                self.defined_consts.insert(e.id, false);
                self.entry_guarded = true;
            }
            // A perf counter of the probe (`.counter("NAME")`), which
            // stapvm has none of: never defined.
            ExprKind::AtOp { op, .. } if op == "@perf" && comps.is_empty() => {
                self.defined_consts.insert(e.id, false);
            }
            _ => self.err(Diagnostic::semantic(
                "@defined takes a target variable ($x, $x->a) or a @cast(...)->a expression",
                a.span,
            )),
        }
    }

    /// `&x`: the address of target value `x`, a member or element of a
    /// struct in memory (`&$p->a`, `&@cast(p, "T")->a[i]`, `&@cast(p,
    /// "T")`); lowered as `x` without its last read (`TargetVar::addr_of`).
    pub(super) fn addr_of(&mut self, e: &Expr, inner: &Expr) {
        let (base, comps) = match &inner.kind {
            ExprKind::Deref { base, comps } => (&**base, comps.as_slice()),
            _ => (inner, &[][..]),
        };
        match &base.kind {
            ExprKind::Target(n) if n != "$return" && !comps.is_empty() => {
                self.target_var(inner, n, comps)
            }
            ExprKind::Target(_) => self.err(Diagnostic::semantic(
                "cannot take address of object in register",
                e.span,
            )),
            ExprKind::AtOp { op, .. } if op == "@cast" => self.cast(inner, base, comps),
            ExprKind::AtOp { op, .. } if op == "@var" => self.kernel_var(inner, base, comps),
            _ => {
                self.expr(inner, true);
                self.err(Diagnostic::semantic(
                    "the operand of '&' must be a target variable ($x->a) or a @cast(...) value",
                    e.span,
                ))
            }
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
        let Some(fields) = self.field_chain(comps, e.span) else {
            return;
        };
        self.target_vars
            .insert(e.id, (TargetSite::Cast(ty), fields));
        if !self.conds.is_empty() {
            self.target_conds.insert(e.id, self.conds.clone());
        }
    }

    /// Checks `@var("NAME")` or `@var("NAME@FILE")` (`base`, with the
    /// chain `comps` after it) and records it: the loader takes the
    /// variable's address from /proc/kallsyms and its type from BTF. The
    /// `@FILE` part (stap's choice of compile unit) is dropped: kallsyms
    /// names a global once. Valid in functions too: it needs no probe.
    pub(super) fn kernel_var(&mut self, e: &Expr, base: &Expr, comps: &[TargetComp]) {
        let ExprKind::AtOp { args, .. } = &base.kind else {
            return;
        };
        let name = match args.as_slice() {
            [Expr {
                kind: ExprKind::Str(s),
                ..
            }] => String::from_utf8_lossy(s).into_owned(),
            [_, _, ..] => {
                return self.unsupported(
                    "@var with a module argument (kernel modules' variables)",
                    base.span,
                )
            }
            _ => {
                return self.err(Diagnostic::semantic(
                    "@var takes a variable name (a string literal)",
                    base.span,
                ))
            }
        };
        let name = name.split_once('@').map_or(name.as_str(), |(n, _)| n);
        let valid = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return self.err(Diagnostic::semantic(
                format!("invalid variable name '{name}' in @var"),
                base.span,
            ));
        }
        let Some(fields) = self.field_chain(comps, e.span) else {
            return;
        };
        self.target_vars
            .insert(e.id, (TargetSite::Var(name.to_string()), fields));
    }

    /// The steps of a `->a[i]` chain (`Chain`), its index expressions
    /// walked; a pretty-printing suffix (`$`) in it is reported as not
    /// supported yet, and gives `None`.
    fn field_chain(&mut self, comps: &[TargetComp], span: Span) -> Option<Chain> {
        let mut fields = Vec::new();
        for c in comps {
            match c {
                TargetComp::Field(f, _) => fields.push(f.clone()),
                TargetComp::Index(i) => {
                    self.expr(i, true);
                    fields.push("[]".to_string());
                }
                // tapset/listings.rs took every other suffix off.
                TargetComp::Pretty(..) => {
                    self.unsupported("pretty-printing of this target expression", span);
                    return None;
                }
            }
        }
        Some(fields)
    }

    /// Checks a target variable `name` (with `$`) and its chain in the
    /// probe being walked and records where it comes from; the loader
    /// resolves it against the kernel's BTF, for each probe of the handler.
    pub(super) fn target_var(&mut self, e: &Expr, name: &str, comps: &[TargetComp]) {
        // `$$parms`, `$$vars`, `$$locals`, `$$return` and the first three's
        // pretty-printing forms were rewritten (tapset/listings.rs).
        if let Some(rest) = name.strip_prefix("$$") {
            let what = if rest.contains('$') {
                format!("{name} (pretty-printing of this listing)")
            } else {
                format!("{name} (target variable listings)")
            };
            self.unsupported(&what, e.span);
            return;
        }
        // The lexer keeps a `$`/`$$` suffix in the name: `$var$`.
        if name.len() > 1 && name.ends_with('$') {
            return self.unsupported(&format!("{name} (pretty-printing)"), e.span);
        }
        let Some(fields) = self.field_chain(comps, e.span) else {
            return;
        };
        if self.cur_points.is_empty() {
            return self.err(Diagnostic::semantic(
                format!("target variable {name} is not available in a function"),
                e.span,
            ));
        }
        // `@defined($x)` guards `$x->a` too: without `$x`, no `$x->a`.
        let guarded = self
            .guards
            .iter()
            .any(|(n, f)| n == name && fields.starts_with(f));
        let mut site = None;
        for point in &self.cur_points {
            // stap's netfilter context variables (tapset-netfilter.cxx).
            if u32::from(point.ctx) == abi::STP_CTX_NETFILTER
                && !super::netfilter::NF_ARGS.contains(&name.trim_start_matches('$'))
            {
                return self.err(Diagnostic::semantic(
                    format!(
                        "unsupported context variable {name}: a netfilter probe has $hooknum, \
                         $skb, $in, $out, $okfn and $verdict"
                    ),
                    e.span,
                ));
            }
            if point.ctx == abi::STP_CTX_KRETPROBE as u8
                || point.ctx == abi::STP_CTX_URETPROBE as u8
            {
                return self.unsupported(
                    &format!("target variable {name} in a .return probe (@entry)"),
                    e.span,
                );
            }
            match site_of(point) {
                Some(s) => {
                    site.get_or_insert(s);
                }
                // `@defined` is 0 at this point: the use never runs there.
                None if guarded => {}
                None if matches!(
                    point.target,
                    ProbeTarget::User {
                        site: vm_spec::program::UserSite::Mark { .. },
                        ..
                    }
                ) =>
                {
                    return self.unsupported(&format!("USDT marker arguments ({name})"), e.span);
                }
                None if matches!(point.target, ProbeTarget::User { .. }) => {
                    return self.unsupported(
                        &format!(
                            "target variable {name} of a user-space statement probe (target \
                             variables are read at function probes, from the binary's DWARF; \
                             use uint_arg(N), pointer_arg(N), register(\"NAME\") or returnval())"
                        ),
                        e.span,
                    );
                }
                None => {
                    let display = point.display.clone();
                    return self.err(Diagnostic::semantic(
                        format!(
                            "probe point '{display}' has no target variables (while resolving {name})"
                        ),
                        e.span,
                    ));
                }
            }
        }
        match site {
            Some(site) => {
                self.target_vars.insert(e.id, (site, fields));
                if !self.conds.is_empty() {
                    self.target_conds.insert(e.id, self.conds.clone());
                }
            }
            None => {
                self.dead_targets.insert(e.id);
            }
        }
    }
}

/// `@defined($x...)` (`&` allowed) as (name, chain, true), `!` of one as
/// false: a condition whose answer the loader knows for each probe.
pub(super) fn defined_cond(e: &Expr) -> Option<(String, Chain, bool)> {
    match &e.kind {
        ExprKind::Unary(UnOp::Not, x) => defined_cond(x).map(|(n, c, p)| (n, c, !p)),
        ExprKind::AtOp { op, args } if op == "@defined" => {
            let a = args.first()?;
            let a = match &a.kind {
                ExprKind::AddrOf(inner) => &**inner,
                _ => a,
            };
            let (base, comps) = match &a.kind {
                ExprKind::Deref { base, comps } => (&**base, comps.as_slice()),
                _ => (a, &[][..]),
            };
            match &base.kind {
                ExprKind::Target(n) if n != "$return" => Some((n.clone(), chain_of(comps), true)),
                // A `@cast` chain's answer depends on its type alone.
                ExprKind::AtOp { op, args } if op == "@cast" && !comps.is_empty() => {
                    match args.get(1).map(|a| &a.kind) {
                        Some(ExprKind::Str(t)) => Some((
                            vm_spec::program::cast_cond_name(&String::from_utf8_lossy(t)),
                            chain_of(comps),
                            true,
                        )),
                        _ => None,
                    }
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The `Chain` of `comps`, without walking its index expressions.
fn chain_of(comps: &[TargetComp]) -> Chain {
    comps
        .iter()
        .map(|c| match c {
            TargetComp::Field(f, _) => f.clone(),
            _ => "[]".to_string(),
        })
        .collect()
}

/// Where the target variables of `point` come from, or `None` when it has
/// none: a kernel function (a name, a wildcard or a `module:` pattern; the
/// loader resolves each function it expands to), a tracepoint (its
/// arguments), a syscall's wrapper (its arguments, from the saved
/// registers), a netfilter hook (its arguments), a user-space function
/// (its parameters: the loader reads the binary's DWARF).
fn site_of(point: &Point) -> Option<TargetSite> {
    if u32::from(point.ctx) == abi::STP_CTX_NETFILTER {
        return Some(TargetSite::Netfilter);
    }
    if point.ctx == abi::STP_CTX_UPROBE as u8 {
        return match &point.target {
            ProbeTarget::User {
                site: vm_spec::program::UserSite::Function(f),
                ..
            } => Some(TargetSite::Function(f.clone())),
            _ => None,
        };
    }
    if point.ctx != abi::STP_CTX_KPROBE as u8 {
        return None;
    }
    match &point.target {
        // `f@FILEPAT` names functions (the file only selects them).
        ProbeTarget::Symbol { name, offset: 0 } => Some(TargetSite::Function(
            vm_spec::program::split_source_file(name).0.to_string(),
        )),
        ProbeTarget::FirstOf(v) => v
            .first()
            .and_then(|f| f.strip_prefix("__x64_sys_"))
            .map(|s| TargetSite::Syscall(s.to_string())),
        _ => None,
    }
}
