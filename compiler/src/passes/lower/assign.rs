//! Assignments (`=`, `op=`, `.=`) and increments (`++`, `--`): of locals
//! and globals here, of array elements with `maps.rs`'s `assign_elem` (or
//! MOPR for an increment), of string globals with `strglobals.rs`.
use super::*;
use vm_spec::tables::imm_pack;

impl Gen<'_> {
    /// `lhs op= rhs`; returns the register holding the assigned value (only
    /// meaningful when `want` is set).
    pub(super) fn assign(&mut self, e: &Expr, want: bool) -> u8 {
        use abi::*;
        let ExprKind::Assign(op, lhs, rhs) = &e.kind else {
            return 0;
        };
        // `$value = e` / `$value .= e` in a procfs read probe: the file's
        // content (helpers.h VALUE_SET / VALUE_APPEND).
        if matches!(lhs.kind, ExprKind::Target(_)) && self.res.value_exprs.contains(&lhs.id) {
            let v = self.str(rhs);
            let n = self.alloc_r();
            let h = if matches!(op, AssignOp::Concat) {
                STP_HLP_VALUE_APPEND
            } else {
                STP_HLP_VALUE_SET
            };
            self.emit(STP_OP_CALLI, n, v, 0, h as i32);
            return v;
        }
        // `$verdict = e` in a netfilter probe (helpers.h VERDICT_SET: NF_DROP
        // or NF_ACCEPT, any other value a run-time error; resolve refused
        // the other constants and operators).
        if matches!(lhs.kind, ExprKind::Target(_)) && self.res.verdict_exprs.contains(&lhs.id) {
            let v = self.int(rhs);
            let n = self.alloc_r();
            self.emit(STP_OP_CALLI, n, v, 0, STP_HLP_VERDICT_SET as i32);
            return n;
        }
        let target = self.r#ref(lhs);
        let is_str = self.ty(lhs) == Ty::Str || matches!(op, AssignOp::Concat);
        if let ExprKind::Index { base, keys } = &lhs.kind {
            if let Some(g) = self.array_of(base) {
                return self.assign_elem(g, keys, *op, rhs, is_str);
            }
        }
        if is_str {
            let l = match target {
                Ref::Local(l) => l,
                Ref::Global(g) => return self.sglobal_assign(g, *op, rhs),
                _ => {
                    self.fail("internal error: bad string assignment");
                    return 0;
                }
            };
            let x = self.local(l);
            let v = self.str(rhs);
            match op {
                AssignOp::Concat => {
                    let t = self.alloc_s();
                    self.emit(STP_OP_SCAT, t, x, v, 0);
                    self.emit(STP_OP_SMOV, x, t, 0, 0);
                }
                _ => {
                    if v != x {
                        self.emit(STP_OP_SMOV, x, v, 0, 0);
                    }
                }
            }
            return x;
        }
        match (op, target) {
            (AssignOp::Set, Ref::Local(l)) => {
                let x = self.local(l);
                if direct(rhs) {
                    self.int_into(rhs, x);
                } else {
                    let v = self.int(rhs);
                    if v != x {
                        self.emit(STP_OP_MOV, x, v, 0, 0);
                    }
                }
                x
            }
            (AssignOp::Set, Ref::Global(g)) => {
                let v = self.int(rhs);
                self.emit(STP_OP_STG, v, 0, 0, g as i32);
                v
            }
            (AssignOp::Bin(b), Ref::Local(l)) => {
                let x = self.local(l);
                let v = self.int(rhs);
                self.emit(binop(*b), x, x, v, 0);
                x
            }
            (AssignOp::Bin(BinOp::Add | BinOp::Sub), Ref::Global(g)) => {
                let v = self.int(rhs);
                let d = self.alloc_r();
                let add = if matches!(op, AssignOp::Bin(BinOp::Sub)) {
                    self.emit(STP_OP_NEG, d, v, 0, 0);
                    d
                } else {
                    v
                };
                self.emit(STP_OP_GADD, d, add, 0, g as i32);
                d
            }
            (AssignOp::Bin(b), Ref::Global(g)) => {
                let v = self.int(rhs);
                let d = self.alloc_r();
                self.emit(STP_OP_LDG, d, 0, 0, g as i32);
                self.emit(binop(*b), d, d, v, 0);
                self.emit(STP_OP_STG, d, 0, 0, g as i32);
                d
            }
            _ => {
                if want {
                    self.fail("internal error: bad assignment");
                }
                0
            }
        }
    }

    /// `++x`, `x--` ...; the value goes to `dst` when given.
    pub(super) fn incr(&mut self, e: &Expr, dst: Option<u8>) {
        use abi::*;
        let (pre, up, a) = match &e.kind {
            ExprKind::PreIncr(up, a) => (true, *up, a),
            ExprKind::PostIncr(up, a) => (false, *up, a),
            _ => return,
        };
        let delta: i32 = if up { 1 } else { -1 };
        if let ExprKind::Index { base, keys } = &a.kind {
            if let Some(g) = self.array_of(base) {
                let d = self.alloc_r();
                self.load_int(d, i64::from(delta));
                let (rb, sc) = self.key_runs(g, keys);
                let mop = imm_pack(self.map_id(g) as u16, STP_OP_ADD as u16);
                self.emit(STP_OP_MOPR, d, rb, sc, mop);
                if let Some(x) = dst {
                    if pre {
                        self.emit(STP_OP_MOV, x, d, 0, 0);
                    } else {
                        self.emit(STP_OP_ADDI, x, d, 0, -delta);
                    }
                }
                return;
            }
        }
        match self.r#ref(a) {
            Ref::Local(l) => {
                let x = self.local(l);
                if let (Some(d), false) = (dst, pre) {
                    self.emit(STP_OP_MOV, d, x, 0, 0);
                }
                self.emit(STP_OP_ADDI, x, x, 0, delta);
                if let (Some(d), true) = (dst, pre) {
                    self.emit(STP_OP_MOV, d, x, 0, 0);
                }
            }
            Ref::Global(g) => {
                let one = self.alloc_r();
                self.load_int(one, i64::from(delta));
                let d = dst.unwrap_or(one);
                self.emit(STP_OP_GADD, d, one, 0, g as i32);
                if let (Some(d), false) = (dst, pre) {
                    self.emit(STP_OP_ADDI, d, d, 0, -delta);
                }
            }
            _ => self.fail("internal error: bad increment"),
        }
    }
}

/// An integer expression whose code writes its destination only in its
/// last instruction, so it may be evaluated straight into a local.
fn direct(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Num(_) | ExprKind::Var(_) | ExprKind::Unary(..) | ExprKind::Binary(..)
    )
}
