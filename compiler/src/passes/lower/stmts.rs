//! Statements: expressions evaluated for their effect, blocks, `if`,
//! `for` / `while` (forward jumps plus one LOOP back edge), `break` /
//! `continue`, `next` and `return`; `foreach` is in `foreach.rs`, `delete`
//! in `maps.rs`, `try` in `trycatch.rs`.
use super::*;

impl Gen<'_> {
    /// Evaluates `e` for its effect only.
    fn effect(&mut self, e: &Expr) {
        let saved = self.enter(e.span);
        let mark = self.mark();
        match &e.kind {
            ExprKind::Print { .. } | ExprKind::Format { .. } => self.print(e),
            ExprKind::Append(a, b) => {
                if let Some((g, ExprKind::Index { keys, .. })) =
                    self.stat_elem(a).map(|g| (g, &a.kind))
                {
                    let (rb, sc) = self.key_runs(g, keys);
                    let v = self.int(b);
                    let map = self.map_id(g);
                    self.emit(abi::STP_OP_MSTADD, v, rb, sc, map);
                } else {
                    let v = self.int(b);
                    if let Some(st) = self.stat_of(a) {
                        self.emit(abi::STP_OP_STADD, v, 0, 0, st);
                    }
                }
            }
            ExprKind::Assign(..) => {
                self.assign(e, false);
            }
            ExprKind::PreIncr(..) => self.incr(e, None),
            ExprKind::PostIncr(up, a) => {
                // The old value is not needed: same as the prefix form.
                let pre = Expr {
                    kind: ExprKind::PreIncr(*up, a.clone()),
                    span: e.span,
                    id: e.id,
                };
                self.incr(&pre, None)
            }
            ExprKind::Call { args, .. } => {
                if self.ty(e) == Ty::Str {
                    let s = self.alloc_s();
                    self.call(e, args, None, Some(s));
                } else {
                    self.call(e, args, None, None);
                }
            }
            ExprKind::Num(_) | ExprKind::Str(_) | ExprKind::Var(_) => {}
            _ => {
                if self.ty(e) == Ty::Str {
                    self.str(e);
                } else {
                    self.int(e);
                }
            }
        }
        self.release(mark);
        self.leave(saved);
    }

    pub(super) fn stmt(&mut self, s: &Stmt) {
        use abi::*;
        let saved = self.enter(s.span);
        match &s.kind {
            StmtKind::Null | StmtKind::Unsupported(_) => {}
            StmtKind::Foreach(f) => self.foreach(f, s.span),
            StmtKind::Delete(e) => self.delete(e),
            StmtKind::Try { body, var, handler } => self.try_stmt(body, var.as_ref(), handler),
            StmtKind::Return(e) => self.ret_stmt(e.as_ref()),
            StmtKind::Block(b) => b.iter().for_each(|s| self.stmt(s)),
            StmtKind::Expr(e) => self.effect(e),
            StmtKind::If { cond, then, els } => {
                let f = self.branch_false(cond);
                self.stmt(then);
                match els {
                    Some(els) => {
                        let j = self.jump(STP_OP_JMP, 0);
                        self.patch_here(&f);
                        self.stmt(els);
                        self.patch_here(&[j]);
                    }
                    None => self.patch_here(&f),
                }
            }
            StmtKind::Loop(l) => {
                let (init, cond, incr, body) = (&l.init, &l.cond, &l.incr, &l.body);
                if let Some(e) = init {
                    self.effect(e);
                }
                let top = self.pc();
                let exits = self.branch_false(cond);
                self.loops.push(LoopJumps::default());
                self.stmt(body);
                let jumps = self.loops.pop().unwrap_or_default();
                self.patch_here(&jumps.continues);
                if let Some(e) = incr {
                    self.effect(e);
                }
                self.enter(s.span);
                let back = top as i64 - (self.pc() as i64 + 1);
                self.emit(
                    STP_OP_LOOP,
                    0,
                    0,
                    0,
                    i32::try_from(back).unwrap_or(i32::MIN),
                );
                self.patch_here(&exits);
                self.patch_here(&jumps.breaks);
            }
            StmtKind::Break | StmtKind::Continue => {
                self.restore_for_jump();
                let j = self.jump(STP_OP_JMP, 0);
                let brk = matches!(s.kind, StmtKind::Break);
                match self.loops.last_mut() {
                    Some(l) if brk => l.breaks.push(j),
                    Some(l) => l.continues.push(j),
                    None => self.fail("internal error: break outside loop"),
                }
            }
            StmtKind::Next if self.ret.is_some() => {
                self.fail("not supported yet: next in a function");
            }
            StmtKind::Next => {
                self.emit(STP_OP_RET, 0, 0, 0, 0);
            }
        }
        self.leave(saved);
    }

    /// `return [e]` in a function (resolve refuses it elsewhere); with no
    /// value in a function returning one, the value is 0 or "".
    pub(super) fn ret_stmt(&mut self, e: Option<&Expr>) {
        use abi::*;
        let mark = self.mark();
        match self.ret {
            Some(Ty::Long) => {
                let r = match e {
                    Some(e) => self.int(e),
                    None => {
                        let t = self.alloc_r();
                        self.load_int(t, 0);
                        t
                    }
                };
                self.emit(STP_OP_RETI, r, 0, 0, 0);
            }
            Some(Ty::Str) => {
                let s = match e {
                    Some(e) => self.str(e),
                    None => {
                        let t = self.alloc_s();
                        let k = self.tabs.string(b"");
                        self.emit(STP_OP_SLDK, t, 0, 0, k);
                        t
                    }
                };
                self.emit(STP_OP_RETS, s, 0, 0, 0);
            }
            Some(_) => {
                if let Some(e) = e {
                    self.effect(e);
                }
                self.emit(STP_OP_RET, 0, 0, 0, 0);
            }
            None => self.fail("internal error: return outside a function"),
        }
        self.release(mark);
    }
}
