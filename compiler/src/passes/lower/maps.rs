//! Global arrays (the MAP* instructions): an array's map id and key runs,
//! element assignment (`a[k] = v`, `a[k] op= v`, `a[k] .= s`), and
//! `delete` of an element, a whole array or a scalar.
use super::*;
use vm_spec::tables::imm_pack;

impl Gen<'_> {
    /// The MAP id of global array `g` (arrays numbered in declaration order).
    pub(super) fn map_id(&self, g: usize) -> i32 {
        self.res.globals.iter().take(g).filter(|x| x.array).count() as i32
    }

    /// The global array an `Index`/`In` base names.
    pub(super) fn array_of(&self, base: &Expr) -> Option<usize> {
        match self.r#ref(base) {
            Ref::Global(g) if self.res.globals.get(g).is_some_and(|x| x.array) => Some(g),
            _ => None,
        }
    }

    /// Evaluates the keys of an access to array `g` into its key runs.
    pub(super) fn key_runs(&mut self, g: usize, keys: &[Option<Expr>]) -> (u8, u8) {
        let kinds: Vec<bool> = self
            .types
            .keys
            .get(g)
            .map(|k| k.iter().map(|t| *t == Ty::Str).collect())
            .unwrap_or_default();
        let ks: Vec<Expr> = keys.iter().flatten().cloned().collect();
        self.arg_runs(&ks, &kinds)
    }

    /// `a[k] op= rhs` (or `=`); returns the register of the value.
    pub(super) fn assign_elem(
        &mut self,
        g: usize,
        keys: &[Option<Expr>],
        op: AssignOp,
        rhs: &Expr,
        is_str: bool,
    ) -> u8 {
        use abi::*;
        let map = self.map_id(g);
        if is_str {
            let v = self.alloc_s();
            if op == AssignOp::Concat {
                let (rb, sc) = self.key_runs(g, keys);
                self.emit(STP_OP_MGETS, v, rb, sc, map);
                let r = self.str(rhs);
                let t = self.alloc_s();
                self.emit(STP_OP_SCAT, t, v, r, 0);
                self.emit(STP_OP_SMOV, v, t, 0, 0);
                self.emit(STP_OP_MSETS, v, rb, sc, map);
            } else {
                self.str_into(rhs, v);
                let (rb, sc) = self.key_runs(g, keys);
                self.emit(STP_OP_MSETS, v, rb, sc, map);
            }
            return v;
        }
        let v = self.alloc_r();
        self.int_into(rhs, v);
        let (rb, sc) = self.key_runs(g, keys);
        match op {
            AssignOp::Bin(b) => {
                let mop = imm_pack(map as u16, binop(b) as u16);
                self.emit(STP_OP_MOPR, v, rb, sc, mop);
            }
            _ => {
                self.emit(STP_OP_MSET, v, rb, sc, map);
            }
        }
        v
    }

    /// `delete e`: an element, a whole array, or a scalar.
    pub(super) fn delete(&mut self, e: &Expr) {
        use abi::*;
        let mark = self.mark();
        match &e.kind {
            ExprKind::Index { base, keys } if keys.iter().any(Option::is_none) => {
                if let Some(g) = self.array_of(base) {
                    self.slice_scan(g, keys, None);
                }
            }
            ExprKind::Index { base, keys } => {
                if let Some(g) = self.array_of(base) {
                    let (rb, sc) = self.key_runs(g, keys);
                    let map = self.map_id(g);
                    self.emit(STP_OP_MDEL, 0, rb, sc, map);
                }
            }
            ExprKind::Var(_) => match self.r#ref(e) {
                Ref::Global(g) if self.res.globals.get(g).is_some_and(|x| x.array) => {
                    let map = self.map_id(g);
                    self.emit(STP_OP_MCLEAR, 0, 0, 0, map);
                }
                Ref::Global(g) if self.sglobal_delete(g) => {}
                Ref::Global(g) => match self.stat_of(e) {
                    // A scalar statistic: every CPU's copy emptied; its
                    // integer slot is never read.
                    Some(st) => {
                        self.emit(STP_OP_STCLR, 0, 0, 0, st);
                    }
                    None => {
                        let t = self.alloc_r();
                        self.load_int(t, 0);
                        self.emit(STP_OP_STG, t, 0, 0, g as i32);
                    }
                },
                Ref::Local(l) => {
                    let x = self.local(l);
                    let is_str =
                        self.types.locals.get(self.probe).and_then(|t| t.get(l)) == Some(&Ty::Str);
                    if is_str {
                        let k = self.tabs.string(b"");
                        self.emit(STP_OP_SLDK, x, 0, 0, k);
                    } else {
                        self.load_int(x, 0);
                    }
                }
                _ => {}
            },
            _ => self.fail("not supported yet: delete of this kind"),
        }
        self.release(mark);
    }

    /// `delete a[k, *]` (`found` None) or `[k, *] in a` (`found` Some(dst)):
    /// MITER over the map on the iterator of this nesting level, then for
    /// each entry whose fixed keys equal the slice's (evaluated once,
    /// first) MDEL it, or set dst to 1 and stop; LOOP back. Entries deleted
    /// since MITER are passed over (opcodes.h), so deleting while iterating
    /// is sound.
    pub(super) fn slice_scan(&mut self, g: usize, keys: &[Option<Expr>], found: Option<u8>) {
        use abi::*;
        use vm_spec::tables::imm_pack;
        let mark = self.mark();
        if let Some(d) = found {
            self.load_int(d, 0);
        }
        if u32::from(self.iter_depth) >= STP_MAX_ITERS {
            self.fail(&format!(
                "not supported yet: an array slice nested in foreach more than {} deep",
                STP_MAX_ITERS - 1
            ));
            return;
        }
        let map = self.map_id(g);
        let depth = self.iter_depth;
        let mit = imm_pack(map as u16, u16::from(depth));
        let kinds: Vec<Ty> = self.types.keys.get(g).cloned().unwrap_or_default();
        let fixed = self.slice_fixed(keys.iter(), &kinds);
        let rl = self.alloc_r();
        self.load_int(rl, i64::from(i32::MAX));
        self.emit(STP_OP_MITER, 0, rl, 0, mit);
        let (rb, sc, top, exit) = self.mnext_loop(&kinds, mit);
        let skips = self.slice_skips(&fixed, &kinds, rb, sc);
        let mut done = Vec::new();
        match found {
            Some(d) => {
                self.load_int(d, 1);
                done.push(self.jump(STP_OP_JMP, 0));
            }
            None => {
                self.emit(STP_OP_MDEL, 0, rb, sc, map);
            }
        }
        self.patch_here(&skips);
        let back = top as i64 - (self.pc() as i64 + 1);
        self.emit(
            STP_OP_LOOP,
            0,
            0,
            0,
            i32::try_from(back).unwrap_or(i32::MIN),
        );
        self.patch_here(&[exit]);
        self.patch_here(&done);
        self.release(mark);
    }
}
