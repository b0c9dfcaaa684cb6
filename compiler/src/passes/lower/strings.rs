//! String expressions: `Gen::str` / `str_into` (literals, variables,
//! concatenation, calls, array reads, `sprint*`, `?:`, assignments).
use super::*;

impl Gen<'_> {
    /// The string register holding the value of `e`.
    pub(super) fn str(&mut self, e: &Expr) -> u8 {
        if let (ExprKind::Var(_), Ref::Local(l)) = (&e.kind, self.r#ref(e)) {
            return self.local(l);
        }
        let t = self.alloc_s();
        self.str_into(e, t);
        t
    }

    /// Evaluates string expression `e` into `dst` (a temporary).
    pub(super) fn str_into(&mut self, e: &Expr, dst: u8) {
        use abi::*;
        let saved = self.enter(e.span);
        let mark = self.mark();
        match &e.kind {
            ExprKind::Str(s) => {
                let k = self.tabs.string(s);
                self.emit(STP_OP_SLDK, dst, 0, 0, k);
            }
            // A procfs or input probe's `$value` (resolve: value_exprs).
            ExprKind::Target(_) if self.res.value_exprs.contains(&e.id) => {
                self.emit(STP_OP_CALLS, dst, 0, 0, STP_HLP_VALUE as i32);
            }
            ExprKind::Var(_) => match self.r#ref(e) {
                Ref::Local(l) => {
                    let x = self.local(l);
                    self.emit(STP_OP_SMOV, dst, x, 0, 0);
                }
                Ref::Global(g) => self.sglobal_load(g, dst),
                _ => self.fail("internal error: bad string variable"),
            },
            ExprKind::Concat(a, b) if self.operand_chain(None, a, b, dst) => {}
            ExprKind::Concat(a, b) => {
                let (sa, sb) = self.str_operands(a, b, dst);
                self.emit(STP_OP_SCAT, dst, sa, sb, 0);
            }
            ExprKind::Call { args, .. } => self.call(e, args, None, Some(dst)),
            ExprKind::Index { base, keys } if self.array_of(base).is_some() => {
                let g = self.array_of(base).unwrap_or_default();
                let (rb, sc) = self.key_runs(g, keys);
                let map = self.map_id(g);
                self.emit(STP_OP_MGETS, dst, rb, sc, map);
            }
            ExprKind::Format { .. } => self.sprint(e, dst),
            ExprKind::Ternary(c, a, b) => {
                let f = self.branch_false(c);
                self.str_into(a, dst);
                let j = self.jump(STP_OP_JMP, 0);
                self.patch_here(&f);
                self.str_into(b, dst);
                self.patch_here(&[j]);
            }
            ExprKind::Assign(..) => {
                let x = self.assign(e, true);
                self.emit(STP_OP_SMOV, dst, x, 0, 0);
            }
            _ => {
                self.fail("internal error: not a string expression");
                let k = self.tabs.string(b"");
                self.emit(STP_OP_SLDK, dst, 0, 0, k);
            }
        }
        self.release(mark);
        self.leave(saved);
    }
}
