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
            Builtin::Pretty { deep } => self.pretty(args, deep, sdst),
            _ => self.fail("internal error: not a tapset built-in"),
        }
    }

    /// `$x$` / `$x$$` into `sdst`: the value of target expression `x`
    /// (its ordinary code: for a struct, union or array its address), then
    /// `PRETTY` with the type node the loader puts in a relocated constant
    /// of the same use (`RelocKind::Pretty`). A use that is never resolved
    /// here (a handler whose points have no target variables) is "".
    fn pretty(&mut self, args: &[Expr], deep: bool, sdst: Option<u8>) {
        use abi::*;
        let d = sdst.unwrap_or_else(|| self.alloc_s());
        let Some(a) = args.first() else {
            return self.fail("internal error: __stp_pretty without an operand");
        };
        let v = self.alloc_r();
        if matches!(&a.kind, ExprKind::Target(n) if n == "$return") {
            return self.pretty_return(a, v, d, deep);
        }
        let before = self.tabs.target_vars.len();
        self.int_into(a, v);
        if self.tabs.target_vars.len() == before {
            if !self.res.target_vars.contains_key(&a.id) && !self.res.dead_targets.contains(&a.id) {
                return self.fail("internal error: __stp_pretty of a non-target value");
            }
            let k = self.tabs.string(b"");
            self.emit(STP_OP_SLDK, d, 0, 0, k);
            return;
        }
        let konst = self.tabs.reloc_konst();
        if let Some(tv) = self.tabs.target_vars.last_mut() {
            tv.relocs.push(Reloc {
                konst: konst as u32,
                kind: RelocKind::Pretty { deep },
            });
        }
        let t = self.alloc_r();
        self.emit(STP_OP_LDK, t, 0, 0, konst);
        self.emit(STP_OP_PRETTY, d, v, t, i32::from(deep));
    }

    /// `$return$` into `d` (`v` a free register): RETVAL, then PRETTY with
    /// the node of the function's BTF return type, a use named `return`
    /// at the probe's function (or syscall) whose only relocation is the
    /// node (the loader: `targetvars::return_fill`).
    fn pretty_return(&mut self, a: &Expr, v: u8, d: u8, deep: bool) {
        use abi::*;
        let site = self
            .res
            .probes
            .get(self.probe)
            .and_then(|p| p.points.first())
            .and_then(|p| match &p.target {
                ProbeTarget::Symbol { name, .. } => Some(TargetSite::Function(
                    vm_spec::program::split_source_file(name).0.to_string(),
                )),
                ProbeTarget::FirstOf(v) => v
                    .first()
                    .and_then(|f| f.strip_prefix("__x64_sys_"))
                    .map(|s| TargetSite::Syscall(s.to_string())),
                ProbeTarget::User {
                    site: vm_spec::program::UserSite::Function(f),
                    ..
                } => Some(TargetSite::Function(f.clone())),
                ProbeTarget::None
                | ProbeTarget::File { .. }
                | ProbeTarget::Address(_)
                | ProbeTarget::Statement { .. }
                | ProbeTarget::User { .. }
                | ProbeTarget::Process { .. } => None,
            });
        let Some(site) = site else {
            return self.fail("not supported yet: $return$ outside a function's return probe");
        };
        self.emit(STP_OP_CALLI, v, 0, 0, STP_HLP_RETVAL as i32);
        let konst = self.tabs.reloc_konst();
        let t = self.alloc_r();
        self.emit(STP_OP_LDK, t, 0, 0, konst);
        self.emit(STP_OP_PRETTY, d, v, t, i32::from(deep));
        let relocs = vec![Reloc {
            konst: konst as u32,
            kind: RelocKind::Pretty { deep },
        }];
        self.record_target_var("$return", &site, &[], a.span, relocs, false);
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
