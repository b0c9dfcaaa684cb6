//! Lowering of the tapset functions that need more than one instruction or
//! a string opcode of their own: `print_char` (a one-conversion PRINTF),
//! `big_endian*` / `little_endian*` (byte swaps as shift-and-mask
//! sequences: no opcode), `text_strn` and `string_quoted` (STEXTN) and
//! `tokenize` (STOK, whose state is the CPU's tokenizer in the VM).
//!
//! A child module of `lower`: it extends the lowering of one handler.
use super::*;

impl Gen<'_> {
    /// Calls tapset built-in `b`; the result goes to `dst` or `sdst` by
    /// its kind (see `resolve::Builtin`).
    pub(super) fn call_tapset(
        &mut self,
        b: Builtin,
        args: &[Expr],
        dst: Option<u8>,
        sdst: Option<u8>,
    ) {
        use abi::*;
        match b {
            Builtin::PrintChar => {
                // stap's _stp_print_char: the low byte, as %c writes it.
                let r = self.alloc_r();
                if let Some(a) = args.first() {
                    self.int_into(a, r);
                }
                let f = self.tabs.format("%c", vec![ArgKind::Int]);
                self.emit(STP_OP_PRINTF, 0, r, 0, f);
                if let Some(d) = dst {
                    self.load_int(d, 0);
                }
            }
            Builtin::Endian { bytes, big } => {
                let d = dst.unwrap_or_else(|| self.alloc_r());
                let v = self.alloc_r();
                if let Some(a) = args.first() {
                    self.int_into(a, v);
                }
                self.endian(d, v, bytes, big);
            }
            Builtin::TextStrn | Builtin::StringQuoted => {
                let d = self.alloc_s();
                let s = match args.first() {
                    Some(a) => self.str(a),
                    None => return,
                };
                let pair = self.alloc_r();
                self.alloc_r();
                if b == Builtin::TextStrn && args.len() == 3 {
                    self.int_into(&args[1], pair);
                    self.int_into(&args[2], pair + 1);
                } else {
                    self.load_int(pair, 0);
                    self.load_int(pair + 1, 1);
                }
                self.emit(STP_OP_STEXTN, d, s, pair, 0);
                if let Some(t) = sdst {
                    self.emit(STP_OP_SMOV, t, d, 0, 0);
                }
            }
            Builtin::Tokenize => {
                let d = sdst.unwrap_or_else(|| self.alloc_s());
                let (input, delim) = match args {
                    [i, dl] => (self.str(i), self.str(dl)),
                    [dl] => {
                        let e = self.alloc_s();
                        let k = self.tabs.string(b"");
                        self.emit(STP_OP_SLDK, e, 0, 0, k);
                        (e, self.str(dl))
                    }
                    _ => return,
                };
                self.emit(STP_OP_STOK, d, input, delim, 0);
            }
            _ => self.fail("internal error: not a tapset built-in"),
        }
    }

    /// `d := v`'s low `bytes` bytes, swapped when `big` (the target is
    /// little-endian), as an unsigned number: for each byte k,
    /// `((v >> 8k) & 0xff) << 8(bytes-1-k)` (unswapped: `<< 8k`), ORed.
    fn endian(&mut self, d: u8, v: u8, bytes: u8, big: bool) {
        use abi::*;
        let (t, sh, mask) = (self.alloc_r(), self.alloc_r(), self.alloc_r());
        self.load_int(d, 0);
        self.load_int(mask, 0xff);
        for k in 0..i64::from(bytes) {
            self.load_int(sh, 8 * k);
            self.emit(STP_OP_SHR, t, v, sh, 0);
            self.emit(STP_OP_AND, t, t, mask, 0);
            let to = if big { i64::from(bytes) - 1 - k } else { k };
            self.load_int(sh, 8 * to);
            self.emit(STP_OP_SHL, t, t, sh, 0);
            self.emit(STP_OP_OR, d, d, t, 0);
        }
    }
}

impl Gen<'_> {
    /// The histogram of `@hist_*(s)` for a scalar statistic `s`: its
    /// STATS index and number of buckets.
    fn hist_of(&self, stat: &Expr) -> Option<(i32, i64)> {
        let ExprKind::Stat { op, args } = &stat.kind else {
            return None;
        };
        if !op.starts_with("@hist") {
            return None;
        }
        let st = self.stat_of(args.first()?)?;
        let nb = self.res.stats.get(st as usize)?.hist.nbuckets();
        Some((st, i64::from(nb)))
    }

    /// `@hist_*(s)[i]`: bucket `i`'s count (STBKT) into `dst`.
    pub(super) fn hist_bucket(&mut self, base: &Expr, keys: &[Option<Expr>], dst: u8) {
        let (Some((st, _)), [Some(k)]) = (self.hist_of(base), keys) else {
            self.fail("not supported yet: a bucket of this histogram form");
            return;
        };
        let i = self.int(k);
        self.emit(abi::STP_OP_STBKT, dst, i, 0, st);
    }

    /// `foreach (b in @hist_*(s) [limit n]) body`: b from 0 while below
    /// the number of buckets and the limit (evaluated once), LOOP back.
    pub(super) fn foreach_hist(&mut self, f: &Foreach, span: Span) {
        use abi::*;
        let Some((_, nb)) = self.hist_of(&f.array) else {
            self.fail("not supported yet: foreach over this histogram form");
            return;
        };
        let mark = (self.next_r, self.next_s);
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
        self.next_r = mark.0;
        self.next_s = mark.1;
    }
}

impl Gen<'_> {
    /// `sprint(...)` / `sprintln(...)` with a histogram among its
    /// arguments: each piece (STHISTS for a histogram, else the argument
    /// as `sprint` formats it) appended to `dst` with SCAT.
    pub(super) fn sprint_hist(&mut self, e: &Expr, dst: u8) {
        use abi::*;
        let ExprKind::Format { name, args, .. } = &e.kind else {
            return;
        };
        if name != "sprint" && name != "sprintln" {
            self.fail("not supported yet: a histogram in a formatted string");
            return;
        }
        let mark = (self.next_r, self.next_s);
        let piece = self.alloc_s();
        let empty = self.tabs.string(b"");
        self.emit(STP_OP_SLDK, dst, 0, 0, empty);
        for a in args {
            let is_hist = matches!(&a.kind, ExprKind::Stat { op, .. } if op.starts_with("@hist"));
            if is_hist {
                let elem = match &a.kind {
                    ExprKind::Stat { args: sargs, .. } => sargs.first().and_then(|x| {
                        let ExprKind::Index { keys, .. } = &x.kind else {
                            return None;
                        };
                        self.stat_elem(x).map(|g| (g, keys))
                    }),
                    _ => None,
                };
                if let Some((g, keys)) = elem {
                    // `sprint(@hist_log(a[k]))`: MSTHISTS, keys in runs
                    // of their own (freed after it).
                    let mark = (self.next_r, self.next_s);
                    let (rb, sc) = self.key_runs(g, keys);
                    let map = self.map_id(g);
                    self.emit(STP_OP_MSTHISTS, piece, rb, sc, map);
                    self.next_r = mark.0;
                    self.next_s = mark.1;
                } else if let Some((st, _)) = self.hist_of(a) {
                    self.emit(STP_OP_STHISTS, piece, 0, 0, st);
                } else {
                    self.fail("internal error: a histogram of no statistic");
                    return;
                }
            } else {
                let one = Expr {
                    kind: ExprKind::Format {
                        name: "sprint".into(),
                        format: None,
                        args: vec![a.clone()],
                    },
                    span: e.span,
                    id: e.id,
                };
                self.sprint(&one, piece);
            }
            self.emit(STP_OP_SCAT, dst, dst, piece, 0);
        }
        if name == "sprintln" {
            let nl = self.tabs.string(b"\n");
            self.emit(STP_OP_SLDK, piece, 0, 0, nl);
            self.emit(STP_OP_SCAT, dst, dst, piece, 0);
        }
        self.next_r = mark.0;
        self.next_s = mark.1;
    }
}
