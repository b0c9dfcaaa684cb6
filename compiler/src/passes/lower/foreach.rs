//! `foreach` loops: over a global array (MITER / MNEXT on the iterator of
//! the nesting level, with slices, sorting, `limit` and the value), and
//! over the buckets of a histogram (a counted loop).
use super::*;
use vm_spec::tables::imm_pack;

impl Gen<'_> {
    /// `foreach ([v =] [k...] in a [+|-] [limit n]) body`: MITER fills
    /// iterator `depth` (the nesting level), then MNEXT, JZ, body, LOOP.
    pub(super) fn foreach(&mut self, f: &Foreach, span: Span) {
        use abi::*;
        if matches!(f.array.kind, ExprKind::Stat { .. }) {
            return self.foreach_hist(f, span);
        }
        let Some(g) = self.array_of(&f.array) else {
            self.fail("internal error: foreach over a non-array");
            return;
        };
        if u32::from(self.iter_depth) >= STP_MAX_ITERS {
            self.fail(&format!(
                "not supported yet: foreach nested more than {STP_MAX_ITERS} deep"
            ));
            return;
        }
        let map = self.map_id(g);
        let depth = self.iter_depth;
        self.iter_depth += 1;
        let mark = self.mark();
        let mit = imm_pack(map as u16, u16::from(depth));
        let kinds: Vec<Ty> = self.types.keys.get(g).cloned().unwrap_or_default();
        // A slice's fixed keys, evaluated once, before the limit (stap's
        // order): (key column, register, is_str).
        let fixed = self.slice_fixed(f.slice.iter().flatten(), &kinds);
        let rl = self.alloc_r();
        match &f.limit {
            Some(l) => self.int_into(l, rl),
            None => self.load_int(rl, i64::from(i32::MAX)),
        }
        // A statistics array sorted by an extractor (`a @sum-`): opcodes.h
        // SORT bits 4..6; @count is the stored value. `@variance` sorts by
        // @count, as stap 5.x does (translate.cxx has no SORT_VARIANCE).
        let sortx = match f.stat.as_ref().map(|(op, _)| op.as_str()) {
            Some("@sum") => abi::STP_SORTX_SUM,
            Some("@min") => abi::STP_SORTX_MIN,
            Some("@max") => abi::STP_SORTX_MAX,
            Some("@avg") => abi::STP_SORTX_AVG,
            _ => abi::STP_SORTX_COUNT,
        } as u8;
        let sort = match f.sort {
            None => 0u8,
            Some((SortBy::Value, asc)) => 15 | (sortx << 4) | if asc { 0 } else { 0x80 },
            Some((SortBy::Key(i), asc)) => (i as u8 + 1) | if asc { 0 } else { 0x80 },
        };
        self.emit(STP_OP_MITER, 0, rl, sort, mit);
        let (rb, sc, top, exit) = self.mnext_loop(&kinds, mit);
        let locals = self.res.body_locals(self.probe).to_vec();
        let local = |name: &str| locals.iter().position(|(n, _)| n == name);
        let (mut li, mut si) = (rb, sc);
        for (i, (name, _)) in f.keys.iter().enumerate() {
            let is_str = kinds.get(i) == Some(&Ty::Str);
            let src = if is_str { si } else { li };
            if is_str {
                si += 1;
            } else {
                li += 1;
            }
            if let Some(l) = local(name) {
                let x = self.local(l);
                let op = if is_str { STP_OP_SMOV } else { STP_OP_MOV };
                self.emit(op, x, src, 0, 0);
            }
        }
        if let Some(l) = f.value.as_ref().and_then(|(name, _)| local(name)) {
            let x = self.local(l);
            if self.types.globals.get(g) == Some(&Ty::Str) {
                self.emit(STP_OP_MGETS, x, rb, sc, map);
            } else {
                self.emit(STP_OP_MGET, x, rb, sc, map);
            }
        }
        // A slice: entries whose fixed keys differ are passed over.
        let skips = self.slice_skips(&fixed, &kinds, rb, sc);
        self.loops.push(LoopJumps {
            continues: skips,
            ..LoopJumps::default()
        });
        self.stmt(&f.body);
        let jumps = self.loops.pop().unwrap_or_default();
        self.patch_here(&jumps.continues);
        self.enter(span);
        let back = top as i64 - (self.pc() as i64 + 1);
        self.emit(
            STP_OP_LOOP,
            0,
            0,
            0,
            i32::try_from(back).unwrap_or(i32::MIN),
        );
        self.patch_here(&[exit]);
        self.patch_here(&jumps.breaks);
        self.release(mark);
        self.iter_depth -= 1;
    }

    /// `foreach (b in @hist_*(s) [limit n]) body`: b from 0 while below
    /// the number of buckets and the limit (evaluated once), LOOP back.
    fn foreach_hist(&mut self, f: &Foreach, span: Span) {
        use abi::*;
        let Some((_, nb, _)) = self.hist_of(&f.array) else {
            self.fail("not supported yet: foreach over this histogram form");
            return;
        };
        let mark = self.mark();
        let (rl, rn, ri, t) = (
            self.alloc_r(),
            self.alloc_r(),
            self.alloc_r(),
            self.alloc_r(),
        );
        match &f.limit {
            Some(l) => self.int_into(l, rl),
            None => self.load_int(rl, nb),
        }
        self.load_int(rn, nb);
        self.load_int(ri, 0);
        let top = self.pc();
        self.emit(STP_OP_LT, t, ri, rn, 0);
        let exit1 = self.jump(STP_OP_JZ, t);
        self.emit(STP_OP_LT, t, ri, rl, 0);
        let exit2 = self.jump(STP_OP_JZ, t);
        let locals = self.res.body_locals(self.probe).to_vec();
        if let Some(l) = f
            .keys
            .first()
            .and_then(|(name, _)| locals.iter().position(|(n, _)| n == name))
        {
            let x = self.local(l);
            self.emit(STP_OP_MOV, x, ri, 0, 0);
        }
        self.loops.push(LoopJumps::default());
        self.stmt(&f.body);
        let jumps = self.loops.pop().unwrap_or_default();
        self.patch_here(&jumps.continues);
        self.enter(span);
        self.emit(STP_OP_ADDI, ri, ri, 0, 1);
        let back = top as i64 - (self.pc() as i64 + 1);
        self.emit(
            STP_OP_LOOP,
            0,
            0,
            0,
            i32::try_from(back).unwrap_or(i32::MIN),
        );
        self.patch_here(&[exit1, exit2]);
        self.patch_here(&jumps.breaks);
        self.release(mark);
    }
}

impl Gen<'_> {
    /// The head of a loop over map iterator `mit` (after its MITER): the
    /// registers MNEXT fills with an entry's keys, the long keys from `rb`
    /// and the string keys from `sc` (0 where there are none), then MNEXT
    /// and the jump out when it finds no more. Returns (rb, sc, the loop's
    /// top, the exit jump to patch).
    pub(super) fn mnext_loop(&mut self, kinds: &[Ty], mit: i32) -> (u8, u8, usize, usize) {
        use abi::{STP_OP_JZ, STP_OP_MNEXT};
        let nstr = kinds.iter().filter(|t| **t == Ty::Str).count();
        let nlong = kinds.len() - nstr;
        let rb = self.next_r;
        for _ in 0..nlong {
            self.alloc_r();
        }
        let sc = self.next_s;
        for _ in 0..nstr {
            self.alloc_s();
        }
        let rb = if nlong > 0 { rb } else { 0 };
        let sc = if nstr > 0 { sc } else { 0 };
        let flag = self.alloc_r();
        let top = self.pc();
        self.emit(STP_OP_MNEXT, flag, rb, sc, mit);
        let exit = self.jump(STP_OP_JZ, flag);
        (rb, sc, top, exit)
    }

    /// A slice's fixed keys (`None` is `*`) evaluated into registers:
    /// (key column, register, is_str) for each.
    pub(super) fn slice_fixed<'e>(
        &mut self,
        keys: impl Iterator<Item = &'e Option<Expr>>,
        kinds: &[Ty],
    ) -> Vec<(usize, u8, bool)> {
        let mut fixed = Vec::new();
        for (i, k) in keys.enumerate() {
            let Some(k) = k else { continue };
            if kinds.get(i) == Some(&Ty::Str) {
                let s = self.alloc_s();
                self.str_into(k, s);
                fixed.push((i, s, true));
            } else {
                let r = self.alloc_r();
                self.int_into(k, r);
                fixed.push((i, r, false));
            }
        }
        fixed
    }

    /// A slice's test of the entry MNEXT loaded (keys from `rb`/`sc`):
    /// for each fixed key `(index, register, is_str)`, a jump taken when
    /// the entry's key differs. Returns the jumps, to patch to the next
    /// entry.
    pub(super) fn slice_skips(
        &mut self,
        fixed: &[(usize, u8, bool)],
        kinds: &[Ty],
        rb: u8,
        sc: u8,
    ) -> Vec<usize> {
        use abi::{STP_OP_JNZ, STP_OP_NE, STP_OP_SCMP};
        let mut skips = Vec::new();
        for &(i, reg, is_str) in fixed {
            let col = kinds[..i]
                .iter()
                .filter(|t| (**t == Ty::Str) == is_str)
                .count() as u8;
            let t = self.alloc_r();
            if is_str {
                self.emit(STP_OP_SCMP, t, sc + col, reg, 0);
            } else {
                self.emit(STP_OP_NE, t, rb + col, reg, 0);
            }
            skips.push(self.jump(STP_OP_JNZ, t));
        }
        skips
    }
}
