//! Global arrays: element references (keys walked, arity bounded), writes
//! (refused inside a `foreach` over the same array), `foreach` over an
//! array or a histogram's buckets, and `delete`.
use super::*;

impl Resolver<'_> {
    /// The global array `base` names with `keys` (walked), or an error.
    pub(super) fn array_ref(
        &mut self,
        base: &Expr,
        keys: &[Option<Expr>],
        at: Span,
    ) -> Option<usize> {
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
        match self.global_idx.get(name.as_str()).copied() {
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
    pub(super) fn array_write(&mut self, g: usize, at: Span) {
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
    pub(super) fn foreach(&mut self, f: &Foreach, span: Span) {
        if matches!(&f.array.kind, ExprKind::Stat { op, .. } if op.starts_with("@hist")) {
            return self.foreach_hist(f);
        }
        if let Some(slice) = &f.slice {
            // `foreach ([a, b] in arr[1, *])`: the fixed keys are walked
            // here; lowering filters on them (passes/lower/foreach.rs `foreach`).
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
    /// indexes of a statistic's histogram, a scalar's or an array
    /// element's (`@hist_log(a[k])`).
    fn foreach_hist(&mut self, f: &Foreach) {
        self.expr(&f.array, true);
        let ok = matches!(&f.array.kind, ExprKind::Stat { args, .. }
        if args.first().is_some_and(|a| match &a.kind {
            ExprKind::Var(_) => true,
            ExprKind::Index { base, .. } => matches!(base.kind, ExprKind::Var(_)),
            _ => false,
        }));
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
    pub(super) fn delete(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Index { base, keys } if matches!(base.kind, ExprKind::Var(_)) => {
                // A slice (`delete a[k, *]`) deletes every entry whose fixed
                // keys match (lower/maps.rs); `*` stands in for a key here.
                let nkeys = slice_keys(keys, e.span);
                if let Some(g) = self.array_ref(base, &nkeys, e.span) {
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
}

/// A slice's keys with each `*` (None) replaced by a placeholder number, so
/// that the array's key types and arity resolve as for a plain index; the
/// lowering (lower/maps.rs) matches only the fixed keys.
pub(super) fn slice_keys(keys: &[Option<Expr>], span: Span) -> Vec<Option<Expr>> {
    keys.iter()
        .map(|k| {
            k.clone().or(Some(Expr {
                kind: ExprKind::Num(0),
                span,
                id: u32::MAX,
            }))
        })
        .collect()
}
