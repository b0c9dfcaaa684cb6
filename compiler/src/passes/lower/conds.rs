//! Conditions: `branch_false` / `branch_true` lower a condition to jump
//! lists patched once the target is known (Lua's `lcode.c`); `&&`, `||`,
//! `!` and constant conditions become jumps, not values.
use super::*;

impl Gen<'_> {
    /// Code that falls through when `e` is true; returns the jumps taken
    /// when it is false.
    pub(super) fn branch_false(&mut self, e: &Expr) -> Vec<usize> {
        let saved = self.enter(e.span);
        let mark = self.mark();
        let out = match &e.kind {
            ExprKind::And(a, b) => {
                let mut f = self.branch_false(a);
                f.extend(self.branch_false(b));
                f
            }
            ExprKind::Or(a, b) => {
                let t = self.branch_true(a);
                let f = self.branch_false(b);
                self.patch_here(&t);
                f
            }
            ExprKind::Unary(UnOp::Not, a) => self.branch_true(a),
            ExprKind::Num(v) if *v != 0 => Vec::new(),
            ExprKind::Num(_) => vec![self.jump(abi::STP_OP_JMP, 0)],
            _ => {
                let r = self.int(e);
                vec![self.jump(abi::STP_OP_JZ, r)]
            }
        };
        self.release(mark);
        self.leave(saved);
        out
    }

    /// Code that falls through when `e` is false; returns the jumps taken
    /// when it is true.
    fn branch_true(&mut self, e: &Expr) -> Vec<usize> {
        let saved = self.enter(e.span);
        let mark = self.mark();
        let out = match &e.kind {
            ExprKind::Or(a, b) => {
                let mut t = self.branch_true(a);
                t.extend(self.branch_true(b));
                t
            }
            ExprKind::And(a, b) => {
                let f = self.branch_false(a);
                let t = self.branch_true(b);
                self.patch_here(&f);
                t
            }
            ExprKind::Unary(UnOp::Not, a) => self.branch_false(a),
            ExprKind::Num(v) if *v != 0 => vec![self.jump(abi::STP_OP_JMP, 0)],
            ExprKind::Num(_) => Vec::new(),
            _ => {
                let r = self.int(e);
                vec![self.jump(abi::STP_OP_JNZ, r)]
            }
        };
        self.release(mark);
        self.leave(saved);
        out
    }
}
