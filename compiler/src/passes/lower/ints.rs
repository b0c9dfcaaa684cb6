//! Integer expressions: `Gen::int` / `int_into` (literals, variables,
//! operators, comparisons, `&&` / `||`, `?:`, the statistics extractors,
//! array reads and `in`, calls, assignments), target variables and
//! `@defined` (relocated constants the loader fills from BTF), and
//! `binop`, the opcode of each binary operator.
use super::*;
use vm_spec::tables::imm_pack;

impl Gen<'_> {
    /// A target variable (`$x`, `$x->a[i]->b`, a `@cast(...)` chain) into
    /// `dst`, through constants the loader fills from BTF
    /// (`vm_spec::program::TargetVar` documents the code): `ARG`, then per
    /// step an offset (for an index, the index times the element size)
    /// and an optional 8-byte `KERNEL_LONG` (`USER_LONG` for a user-space
    /// function's parameters), then shifts and a mask that
    /// narrow the value to its C type (sign- or zero-extended). With
    /// `addr_of` (`&x`), the address of the last member or element: its
    /// step reads nothing and nothing narrows it.
    fn target_var(&mut self, e: &Expr, dst: u8, addr_of: bool) {
        use abi::*;
        if self.res.dead_targets.contains(&e.id) {
            return self.load_int(dst, 0);
        }
        let Some((site, fields)) = self.res.target_vars.get(&e.id) else {
            self.fail("internal error: unresolved target variable");
            return;
        };
        if self.no_target_vars_here(site) {
            return self.load_int(dst, 0);
        }
        // `$name`, or `@cast`'s address operand; the chain's steps.
        // `@var`: no operand, its address is a relocated constant.
        let (name, cast_addr, comps) = match (&e.kind, site) {
            (ExprKind::AtOp { .. }, TargetSite::Var(v)) => (v.clone(), None, &[][..]),
            (ExprKind::Deref { comps, .. }, TargetSite::Var(v)) => {
                (v.clone(), None, comps.as_slice())
            }
            (ExprKind::Target(n), _) => (n.clone(), None, &[][..]),
            (ExprKind::AtOp { args, .. }, _) => match (args.first(), site) {
                (Some(a), TargetSite::Cast(t)) => (t.clone(), Some(a), &[][..]),
                _ => return self.fail("internal error: @cast without an address"),
            },
            (ExprKind::Deref { base, comps }, _) => match (&base.kind, site) {
                (ExprKind::Target(n), _) => (n.clone(), None, comps.as_slice()),
                (ExprKind::AtOp { args, .. }, TargetSite::Cast(t)) => match args.first() {
                    Some(a) => (t.clone(), Some(a), comps.as_slice()),
                    None => return self.fail("internal error: @cast without an address"),
                },
                _ => return self.fail("internal error: unresolved target variable"),
            },
            _ => return self.fail("internal error: unresolved target variable"),
        };
        // A user-space function's parameters point into its process's
        // memory (a fault reads 0, as `user_long`); `@cast` and `@var`
        // chains are the kernel's.
        let read = if self.ctx == STP_CTX_UPROBE as u8
            && !matches!(site, TargetSite::Cast(_) | TargetSite::Var(_))
        {
            STP_HLP_USER_LONG as i32
        } else {
            STP_HLP_KERNEL_LONG as i32
        };
        let mut relocs = Vec::new();
        let t = self.alloc_r();
        let mut k = |g: &mut Self, kind: RelocKind| {
            let konst = g.tabs.reloc_konst();
            relocs.push(Reloc {
                konst: konst as u32,
                kind,
            });
            g.emit(STP_OP_LDK, t, 0, 0, konst);
        };
        match cast_addr {
            Some(a) => self.int_into(a, dst),
            None if matches!(site, TargetSite::Var(_)) => {
                k(self, RelocKind::SymAddr);
                self.emit(STP_OP_MOV, dst, t, 0, 0);
            }
            None => {
                k(self, RelocKind::ArgIndex);
                self.emit(STP_OP_CALLI, dst, t, 0, STP_HLP_ARG as i32);
            }
        }
        let last = fields.len() as u32;
        for step in 0..=last {
            let index = step
                .checked_sub(1)
                .and_then(|i| comps.get(i as usize))
                .and_then(|c| match c {
                    TargetComp::Index(x) => Some(&**x),
                    _ => None,
                });
            match index {
                Some(x) => {
                    let i = self.alloc_r();
                    self.int_into(x, i);
                    k(self, RelocKind::ElemSize(step));
                    self.emit(STP_OP_MUL, i, i, t, 0);
                    self.emit(STP_OP_ADD, dst, dst, i, 0);
                }
                None => {
                    k(self, RelocKind::Offset(step));
                    self.emit(STP_OP_ADD, dst, dst, t, 0);
                }
            }
            if addr_of && step == last {
                break;
            }
            k(self, RelocKind::Deref(step));
            self.emit(STP_OP_JZ, t, 0, 0, 1);
            self.emit(STP_OP_CALLI, dst, dst, 0, read);
        }
        if !addr_of {
            k(self, RelocKind::Shift);
            self.emit(STP_OP_SHL, dst, dst, t, 0);
            k(self, RelocKind::RShift);
            self.emit(STP_OP_SHR, dst, dst, t, 0);
            k(self, RelocKind::Mask);
            self.emit(STP_OP_AND, dst, dst, t, 0);
        }
        let conds = self
            .res
            .target_conds
            .get(&e.id)
            .map(|cs| {
                cs.iter()
                    .map(|c| TargetCond {
                        name: c.name.trim_start_matches('$').to_string(),
                        ..c.clone()
                    })
                    .collect()
            })
            .unwrap_or_default();
        self.record_target_var(&name, site, fields, e.span, relocs, addr_of);
        if let Some(tv) = self.tabs.target_vars.last_mut() {
            tv.conds = conds;
        }
    }

    /// Whether a use at `site` sits in a handler whose points have no
    /// target variables (the `begin` handler of `probe begin,
    /// kernel.function("f")`): resolve let only guarded uses through, and
    /// `@defined` is 0 there, so both are 0 in this handler.
    fn no_target_vars_here(&self, site: &TargetSite) -> bool {
        !matches!(site, TargetSite::Cast(_) | TargetSite::Var(_))
            && self.ctx != abi::STP_CTX_KPROBE as u8
            && self.ctx != abi::STP_CTX_UPROBE as u8
            && u32::from(self.ctx) != abi::STP_CTX_NETFILTER
    }

    /// Records one use of target variable `name` (`$x` or a `@cast` type)
    /// at `span` for the loader: its relocated constants, and the probe
    /// point and place its messages name (the handler is set later).
    pub(super) fn record_target_var(
        &mut self,
        name: &str,
        site: &TargetSite,
        fields: &[String],
        span: Span,
        relocs: Vec<Reloc>,
        addr_of: bool,
    ) {
        let probe_point = self
            .res
            .probes
            .get(self.probe)
            .and_then(|p| p.points.first())
            .map(|p| p.display.clone())
            .unwrap_or_default();
        let (line, col) = self.lines.line_col(span.lo);
        self.tabs.target_vars.push(TargetVar {
            name: name.trim_start_matches('$').to_string(),
            fields: fields.to_vec(),
            handler: u32::MAX,
            site: site.clone(),
            probe_point,
            loc: SrcLoc { line, col },
            relocs,
            addr_of,
            conds: Vec::new(),
        });
    }

    /// `@defined(x)` into `dst`: a constant, or one relocated constant the
    /// loader sets to 1 when BTF has `x` (`RelocKind::Exists`).
    fn defined(&mut self, e: &Expr, args: &[Expr], dst: u8) {
        if let Some(&v) = self.res.defined_consts.get(&e.id) {
            return self.load_int(dst, i64::from(v));
        }
        let Some(a) = args.first() else {
            return self.fail("internal error: @defined without an operand");
        };
        // `@defined(&x)` asks about `x`.
        let a = match &a.kind {
            ExprKind::AddrOf(inner) => &**inner,
            _ => a,
        };
        let Some((site, fields)) = self.res.target_vars.get(&a.id) else {
            return self.fail("internal error: unresolved @defined operand");
        };
        if self.no_target_vars_here(site) {
            return self.load_int(dst, 0);
        }
        let name = match (&a.kind, site) {
            (_, TargetSite::Cast(t)) | (_, TargetSite::Var(t)) => t.clone(),
            (ExprKind::Target(n), _) => n.clone(),
            (ExprKind::Deref { base, .. }, _) => match &base.kind {
                ExprKind::Target(n) => n.clone(),
                _ => return self.fail("internal error: unresolved @defined operand"),
            },
            _ => return self.fail("internal error: unresolved @defined operand"),
        };
        let konst = self.tabs.reloc_konst();
        self.emit(abi::STP_OP_LDK, dst, 0, 0, konst);
        let relocs = vec![Reloc {
            konst: konst as u32,
            kind: RelocKind::Exists,
        }];
        self.record_target_var(&name, site, fields, a.span, relocs, false);
    }

    /// The register holding the value of integer expression `e`: a local's
    /// own register, or a new temporary.
    pub(super) fn int(&mut self, e: &Expr) -> u8 {
        if let (ExprKind::Var(_), Ref::Local(l)) = (&e.kind, self.r#ref(e)) {
            return self.local(l);
        }
        let t = self.alloc_r();
        self.int_into(e, t);
        t
    }

    /// Evaluates integer expression `e` into `dst` (a temporary).
    pub(super) fn int_into(&mut self, e: &Expr, dst: u8) {
        let saved = self.enter(e.span);
        let mark = self.mark();
        self.int_into_inner(e, dst);
        self.release(mark);
        self.leave(saved);
    }

    fn int_into_inner(&mut self, e: &Expr, dst: u8) {
        use abi::*;
        match &e.kind {
            ExprKind::Num(v) => self.load_int(dst, *v),
            ExprKind::Var(_) => match self.r#ref(e) {
                Ref::Global(g) => {
                    self.emit(STP_OP_LDG, dst, 0, 0, g as i32);
                }
                Ref::Local(l) => {
                    let r = self.local(l);
                    self.emit(STP_OP_MOV, dst, r, 0, 0);
                }
                _ => self.load_int(dst, 0),
            },
            ExprKind::Target(n) if n == "$return" => {
                self.emit(STP_OP_CALLI, dst, 0, 0, STP_HLP_RETVAL as i32);
            }
            // A netfilter probe's `$verdict` (resolve: verdict_exprs).
            ExprKind::Target(_) if self.res.verdict_exprs.contains(&e.id) => {
                self.emit(STP_OP_CALLI, dst, 0, 0, STP_HLP_VERDICT as i32);
            }
            ExprKind::Target(_) | ExprKind::Deref { .. } => self.target_var(e, dst, false),
            ExprKind::AtOp { op, .. } if op == "@var" => self.target_var(e, dst, false),
            ExprKind::AddrOf(inner) => self.target_var(inner, dst, true),
            ExprKind::AtOp { op, args } if op == "@defined" => self.defined(e, args, dst),
            ExprKind::AtOp { op, .. }
                if op == "@entry" && self.res.dead_targets.contains(&e.id) =>
            {
                self.load_int(dst, 0)
            }
            ExprKind::Stat { op, args } => {
                let opc = match op.as_str() {
                    "@count" => STP_OP_STCOUNT,
                    "@sum" => STP_OP_STSUM,
                    "@min" => STP_OP_STMIN,
                    "@max" => STP_OP_STMAX,
                    "@avg" => STP_OP_STAVG,
                    "@variance" => STP_OP_STVAR,
                    _ => {
                        self.fail("not supported yet: a histogram used as a value");
                        return;
                    }
                };
                if let Some((g, ExprKind::Index { keys, .. })) = args
                    .first()
                    .and_then(|a| self.stat_elem(a).map(|g| (g, &a.kind)))
                {
                    let (rb, sc) = self.key_runs(g, keys);
                    let msx = imm_pack(self.map_id(g) as u16, opc as u16);
                    self.emit(STP_OP_MSTX, dst, rb, sc, msx);
                    return;
                }
                match args.first().and_then(|a| self.stat_of(a)) {
                    Some(st) => {
                        self.emit(opc, dst, 0, 0, st);
                    }
                    None => self.load_int(dst, 0),
                }
            }
            ExprKind::Call { args, .. } => self.call(e, args, Some(dst), None),
            ExprKind::Index { base, keys } if self.array_of(base).is_some() => {
                let g = self.array_of(base).unwrap_or_default();
                let (rb, sc) = self.key_runs(g, keys);
                let map = self.map_id(g);
                self.emit(STP_OP_MGET, dst, rb, sc, map);
            }
            ExprKind::Index { base, keys } if matches!(base.kind, ExprKind::Stat { .. }) => {
                self.hist_bucket(base, keys, dst)
            }
            // stap: `i in @hist_op(...)` is `@hist_op(...)[i]`, the count.
            ExprKind::In { keys, array } if matches!(array.kind, ExprKind::Stat { .. }) => {
                self.hist_bucket(array, keys, dst)
            }
            ExprKind::In { keys, array } => match self.array_of(array) {
                Some(g) if keys.iter().any(Option::is_none) => self.slice_scan(g, keys, Some(dst)),
                Some(g) => {
                    let (rb, sc) = self.key_runs(g, keys);
                    let map = self.map_id(g);
                    self.emit(STP_OP_MHAS, dst, rb, sc, map);
                }
                None => self.load_int(dst, 0),
            },
            ExprKind::Print { .. } | ExprKind::Format { .. } => {
                self.print(e);
                self.load_int(dst, 0);
            }
            ExprKind::Unary(op, a) => {
                let ra = self.int_operand(a, dst);
                let opc = match op {
                    UnOp::Neg => STP_OP_NEG,
                    UnOp::Plus => STP_OP_MOV,
                    UnOp::Not => STP_OP_LNOT,
                    UnOp::BitNot => STP_OP_NOT,
                };
                self.emit(opc, dst, ra, 0, 0);
            }
            ExprKind::Binary(op, a, b) if self.operand_chain(Some(*op), a, b, dst) => {}
            ExprKind::Binary(op, a, b) => {
                let (ra, rb) = self.int_operands(a, b, dst);
                self.emit(binop(*op), dst, ra, rb, 0);
            }
            ExprKind::Regex { negate, lhs, re } => {
                let s = self.str(lhs);
                match self.tabs.regex(re) {
                    Ok(k) => {
                        let op = if self.tabs.regex_groups {
                            STP_OP_REMATCHS
                        } else {
                            STP_OP_REMATCH
                        };
                        self.emit(op, dst, s, 0, k);
                        if *negate {
                            self.emit(STP_OP_LNOT, dst, dst, 0, 0);
                        }
                    }
                    Err(msg) => self.fail(&msg),
                }
            }
            ExprKind::Cmp(op, a, b) => {
                let opc = match op {
                    CmpOp::Eq => STP_OP_EQ,
                    CmpOp::Ne => STP_OP_NE,
                    CmpOp::Lt => STP_OP_LT,
                    CmpOp::Le => STP_OP_LE,
                    CmpOp::Gt => STP_OP_GT,
                    CmpOp::Ge => STP_OP_GE,
                };
                if self.ty(a) == Ty::Str || self.ty(b) == Ty::Str {
                    let sa = self.str(a);
                    let sb = self.str(b);
                    self.emit(STP_OP_SCMP, dst, sa, sb, 0);
                    let z = self.alloc_r();
                    self.load_int(z, 0);
                    self.emit(opc, dst, dst, z, 0);
                } else {
                    let (ra, rb) = self.int_operands(a, b, dst);
                    self.emit(opc, dst, ra, rb, 0);
                }
            }
            ExprKind::And(a, b) | ExprKind::Or(a, b) => {
                let and = matches!(e.kind, ExprKind::And(..));
                // dst := short-circuit value; both operands jump out early.
                self.load_int(dst, if and { 0 } else { 1 });
                let jop = if and { STP_OP_JZ } else { STP_OP_JNZ };
                let ra = self.int(a);
                let j1 = self.jump(jop, ra);
                let rb = self.int(b);
                let j2 = self.jump(jop, rb);
                self.load_int(dst, if and { 1 } else { 0 });
                self.patch_here(&[j1, j2]);
            }
            ExprKind::Ternary(c, a, b) => {
                let f = self.branch_false(c);
                self.int_into(a, dst);
                let j = self.jump(STP_OP_JMP, 0);
                self.patch_here(&f);
                self.int_into(b, dst);
                self.patch_here(&[j]);
            }
            ExprKind::Assign(..) => {
                let r = self.assign(e, true);
                if r != dst {
                    self.emit(STP_OP_MOV, dst, r, 0, 0);
                }
            }
            ExprKind::PreIncr(..) | ExprKind::PostIncr(..) => self.incr(e, Some(dst)),
            _ => {
                self.fail("internal error: not an integer expression");
                self.load_int(dst, 0);
            }
        }
    }
}

pub(super) fn binop(op: BinOp) -> abi::stp_opcode {
    use abi::*;
    match op {
        BinOp::Add => STP_OP_ADD,
        BinOp::Sub => STP_OP_SUB,
        BinOp::Mul => STP_OP_MUL,
        BinOp::Div => STP_OP_DIV,
        BinOp::Mod => STP_OP_MOD,
        BinOp::Shl => STP_OP_SHL,
        BinOp::Shr => STP_OP_SHR,
        BinOp::And => STP_OP_AND,
        BinOp::Or => STP_OP_OR,
        BinOp::Xor => STP_OP_XOR,
    }
}
