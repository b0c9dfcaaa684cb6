//! The operands of a binary operator (integer `+ - * / …` and
//! comparisons, string `.`) and the order they are evaluated in, so that
//! an expression needs few temporaries.
//!
//! When the operator's destination is a temporary (`Gen::temps_r` /
//! `temps_s`: above the locals, read by nothing else), the first operand is
//! evaluated straight into it and the second into one more temporary,
//! released once combined: a left-leaning chain (`a + b + c + …`, `x . y .
//! z . …`) then needs two registers whatever its length. A destination
//! that is a local (`x = a + b` lowered straight into `x`) must keep its
//! value until the last instruction (the operands may read it), so both
//! operands then go to temporaries, as before.
//!
//! A chain of one associative operator (`+ * & | ^`, which wrap in
//! two's complement, and `.`, whose cut at MAXSTRINGLEN keeps a prefix of
//! the whole either way) that also leans right (`a + (b + c)`) is
//! re-associated: its operands are evaluated left to right, as written,
//! each folded into the destination as it comes (`operand_chain`), so any
//! shape of such a chain needs two registers and its order is stap's.
//!
//! stap evaluates operands left to right, and so does this, except where
//! the order cannot be seen: when both operands are pure (`pure_int` /
//! `pure_str`: literals, variables and the operators that cannot fail on
//! them) and the second needs more temporaries than the first, the second
//! is evaluated first (Sethi–Ullman order), so a right-leaning or balanced
//! pure tree needs O(log n) registers instead of O(n). Operands with side
//! effects or that can fail (calls, assignments, `++`, `/`, `%`, target
//! variables, array reads) keep the left-to-right order; a tree of those
//! deeper than the register file is refused ("expression too complex"):
//! the ISA has no spill slot.
use super::*;

/// At most this many temporaries are counted (more than either file has).
const MANY: u32 = 255;

/// A leaf: evaluated without a temporary of its own (a literal or a
/// variable); nothing is gained by evaluating another operand before it.
fn leaf(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Num(_) | ExprKind::Str(_) | ExprKind::Var(_)
    )
}

/// An integer expression whose evaluation has no side effect and cannot
/// fail, so it may be evaluated before an operand to its left.
fn pure_int(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Num(_) | ExprKind::Var(_) => true,
        ExprKind::Unary(_, a) => pure_int(a),
        ExprKind::Binary(op, a, b) => {
            !matches!(op, BinOp::Div | BinOp::Mod) && pure_int(a) && pure_int(b)
        }
        _ => false,
    }
}

/// `pure_int` for a string expression.
fn pure_str(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Str(_) | ExprKind::Var(_) => true,
        ExprKind::Concat(a, b) => pure_str(a) && pure_str(b),
        _ => false,
    }
}

/// `+ * & | ^`: the same value whatever the grouping.
fn associative(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Add | BinOp::Mul | BinOp::And | BinOp::Or | BinOp::Xor
    )
}

/// The operands, left to right, of the chain of `op` (or, with `None`, of
/// `.`) that `e` heads.
fn chain<'e>(e: &'e Expr, op: Option<BinOp>, out: &mut Vec<&'e Expr>) {
    match (&e.kind, op) {
        (ExprKind::Binary(o, a, b), Some(op)) if *o == op => {
            chain(a, Some(op), out);
            chain(b, Some(op), out);
        }
        (ExprKind::Concat(a, b), None) => {
            chain(a, None, out);
            chain(b, None, out);
        }
        _ => out.push(e),
    }
}

/// Whether `b`, the second operand of `op` (`None`: `.`), continues a
/// chain of that associative operator.
fn continues(op: Option<BinOp>, b: &Expr) -> bool {
    match (&b.kind, op) {
        (ExprKind::Binary(o, ..), Some(op)) => *o == op && associative(op),
        (ExprKind::Concat(..), None) => true,
        _ => false,
    }
}

impl Gen<'_> {
    /// The temporaries of `operand_chain` for the chain `e` heads.
    fn chain_cost(&mut self, e: &Expr, op: Option<BinOp>) -> u32 {
        let strs = op.is_none();
        let mut terms = Vec::new();
        chain(e, op, &mut terms);
        let mut n = 0;
        for (i, t) in terms.into_iter().enumerate() {
            n = n.max(if i == 0 {
                self.reuse_cost(t, strs)
            } else {
                self.temp_cost(t, strs)
            });
        }
        n
    }

    /// Lowers `a op b` (`op` associative; `None` is `.`) into temporary
    /// `dst` as one left-to-right chain when `b` continues the chain (so
    /// it leans right somewhere); false, with nothing emitted, otherwise.
    pub(super) fn operand_chain(&mut self, op: Option<BinOp>, a: &Expr, b: &Expr, dst: u8) -> bool {
        let strs = op.is_none();
        if !continues(op, b) || dst < if strs { self.temps_s } else { self.temps_r } {
            return false;
        }
        let mut terms = Vec::new();
        chain(a, op, &mut terms);
        chain(b, op, &mut terms);
        let mut acc = None;
        for t in terms {
            let Some(x) = acc else {
                acc = Some(if strs {
                    self.str_reuse(t, dst)
                } else {
                    self.int_reuse(t, dst)
                });
                continue;
            };
            let mark = self.mark();
            match op {
                Some(op) => {
                    let r = self.int(t);
                    self.emit(binop(op), dst, x, r, 0);
                }
                None => {
                    let s = self.str(t);
                    self.emit(abi::STP_OP_SCAT, dst, x, s, 0);
                }
            }
            self.release(mark);
            acc = Some(dst);
        }
        true
    }

    /// A local variable's register (`e` is read where it is).
    fn local_of(&self, e: &Expr) -> Option<u8> {
        match (&e.kind, self.r#ref(e)) {
            (ExprKind::Var(_), Ref::Local(l)) => Some(self.local(l)),
            _ => None,
        }
    }

    /// The temporaries (of the file of `e`) that evaluating `e` into a
    /// temporary destination needs above it; exact for the pure
    /// expressions, an estimate for the others (it only orders pure
    /// operands, whose subexpressions are all pure).
    fn need_of(&mut self, e: &Expr, strs: bool) -> u32 {
        if let Some(n) = self.need.get(e.id) {
            return n;
        }
        let n = match &e.kind {
            ExprKind::Num(_) | ExprKind::Str(_) | ExprKind::Var(_) => 0,
            ExprKind::Unary(_, a) if !strs => self.reuse_cost(a, false),
            ExprKind::Binary(op, _, b) if !strs && continues(Some(*op), b) => {
                self.chain_cost(e, Some(*op))
            }
            ExprKind::Concat(_, b) if strs && continues(None, b) => self.chain_cost(e, None),
            ExprKind::Binary(_, a, b) if !strs => self.pair_cost(a, b, false).0,
            ExprKind::Concat(a, b) if strs => self.pair_cost(a, b, true).0,
            _ => 2,
        };
        self.need.insert(e.id, n);
        n
    }

    /// Temporaries to evaluate `e` into the operator's own destination.
    fn reuse_cost(&mut self, e: &Expr, strs: bool) -> u32 {
        if self.local_of(e).is_some() {
            0
        } else {
            self.need_of(e, strs)
        }
    }

    /// Temporaries to evaluate `e` into a temporary of its own.
    fn temp_cost(&mut self, e: &Expr, strs: bool) -> u32 {
        if self.local_of(e).is_some() {
            0
        } else {
            (1 + self.need_of(e, strs)).min(MANY)
        }
    }

    /// The temporaries operands `a`, `b` need into a temporary
    /// destination, and whether `b` goes first (fewer that way, and
    /// neither order can be seen).
    fn pair_cost(&mut self, a: &Expr, b: &Expr, strs: bool) -> (u32, bool) {
        let left = self.reuse_cost(a, strs).max(self.temp_cost(b, strs));
        let pure = if strs {
            pure_str(a) && pure_str(b)
        } else {
            pure_int(a) && pure_int(b)
        };
        if leaf(b) || !pure {
            return (left, false);
        }
        let right = self.reuse_cost(b, strs).max(self.temp_cost(a, strs));
        if right < left {
            (right, true)
        } else {
            (left, false)
        }
    }

    /// Evaluates integer `e` for an operator whose result goes to `dst`
    /// (a temporary): a local is read in place, anything else goes to
    /// `dst`.
    fn int_reuse(&mut self, e: &Expr, dst: u8) -> u8 {
        match self.local_of(e) {
            Some(r) => r,
            None => {
                self.int_into(e, dst);
                dst
            }
        }
    }

    /// `int_reuse` for a string.
    fn str_reuse(&mut self, e: &Expr, dst: u8) -> u8 {
        match self.local_of(e) {
            Some(s) => s,
            None => {
                self.str_into(e, dst);
                dst
            }
        }
    }

    /// The registers of integer operands `a`, `b` of an operator whose
    /// result goes to `dst`; their temporaries stay allocated until the
    /// caller's release.
    pub(super) fn int_operands(&mut self, a: &Expr, b: &Expr, dst: u8) -> (u8, u8) {
        if dst < self.temps_r {
            let ra = self.int(a);
            let rb = self.int(b);
            return (ra, rb);
        }
        if self.pair_cost(a, b, false).1 {
            let rb = self.int_reuse(b, dst);
            let ra = self.int(a);
            (ra, rb)
        } else {
            let ra = self.int_reuse(a, dst);
            let rb = self.int(b);
            (ra, rb)
        }
    }

    /// The register of the operand of a unary operator whose result goes
    /// to `dst`.
    pub(super) fn int_operand(&mut self, a: &Expr, dst: u8) -> u8 {
        if dst < self.temps_r {
            self.int(a)
        } else {
            self.int_reuse(a, dst)
        }
    }

    /// `int_operands` for the operands of a concatenation into `dst`.
    pub(super) fn str_operands(&mut self, a: &Expr, b: &Expr, dst: u8) -> (u8, u8) {
        if dst < self.temps_s {
            let sa = self.str(a);
            let sb = self.str(b);
            return (sa, sb);
        }
        if self.pair_cost(a, b, true).1 {
            let sb = self.str_reuse(b, dst);
            let sa = self.str(a);
            (sa, sb)
        } else {
            let sa = self.str_reuse(a, dst);
            let sb = self.str(b);
            (sa, sb)
        }
    }
}
