//! Calls: argument runs (the contiguous register runs PRINTF, SPRINTF and
//! FCALL* take), user functions (FCALL, FCALLI, FCALLS) and the built-ins
//! lowered in place; the tapset and tier-1 built-ins that need more are in
//! `tapset.rs` and `tier1.rs`.
use super::*;

impl Gen<'_> {
    /// Evaluates `args` into a fresh integer run and a fresh string run
    /// (as PRINTF, SPRINTF and FCALL* take them); returns the run bases
    /// (0 for an empty run). `kinds[k]` is true for a string argument.
    pub(super) fn arg_runs(&mut self, args: &[Expr], kinds: &[bool]) -> (u8, u8) {
        let nstr = kinds.iter().filter(|k| **k).count();
        let nint = kinds.len() - nstr;
        let rb = self.next_r;
        let sc = self.next_s;
        for _ in 0..nint {
            self.alloc_r();
        }
        for _ in 0..nstr {
            self.alloc_s();
        }
        let (mut ri, mut si) = (rb, sc);
        for (a, is_str) in args.iter().zip(kinds) {
            if *is_str {
                self.str_into(a, si);
                si = si.saturating_add(1);
            } else {
                self.int_into(a, ri);
                ri = ri.saturating_add(1);
            }
        }
        (if nint > 0 { rb } else { 0 }, if nstr > 0 { sc } else { 0 })
    }

    /// Calls a user function; the result goes to `dst` or `sdst`.
    fn call_func(&mut self, f: usize, args: &[Expr], dst: Option<u8>, sdst: Option<u8>) {
        use abi::*;
        let Some(h) = self.func_handlers.get(f).copied().flatten() else {
            self.fail("internal error: function not lowered");
            return;
        };
        let scope = self.res.probes.len() + f;
        let kinds: Vec<bool> = (0..args.len())
            .map(|k| self.types.locals.get(scope).and_then(|l| l.get(k)).copied() == Some(Ty::Str))
            .collect();
        let (rb, sc) = self.arg_runs(args, &kinds);
        match self.types.funcs.get(f).copied().unwrap_or_default() {
            Ty::Long => {
                let d = dst.unwrap_or_else(|| self.alloc_r());
                self.emit(STP_OP_FCALLI, d, rb, sc, h as i32);
            }
            Ty::Str => {
                let d = sdst.unwrap_or_else(|| self.alloc_s());
                self.emit(STP_OP_FCALLS, d, rb, sc, h as i32);
            }
            _ => {
                self.emit(STP_OP_FCALL, 0, rb, sc, h as i32);
                if let Some(d) = dst {
                    self.load_int(d, 0);
                }
                if let Some(d) = sdst {
                    let k = self.tabs.string(b"");
                    self.emit(STP_OP_SLDK, d, 0, 0, k);
                }
            }
        }
    }

    /// Loads `of` of the probe's points into `sdst` (or a fresh string
    /// register) as a constant: one handler may serve several points, so
    /// they must all give the same string (else `several` fails), and a
    /// function has no points (`in_func` fails).
    pub(super) fn point_const(
        &mut self,
        sdst: Option<u8>,
        of: fn(&Point) -> &str,
        several: &str,
        in_func: &str,
    ) {
        let shown: Vec<&str> = self
            .res
            .probes
            .get(self.probe)
            .map(|p| p.points.iter().map(of).collect())
            .unwrap_or_default();
        match shown.first() {
            Some(first) if shown.iter().all(|x| x == first) => {
                let k = self.tabs.string(first.as_bytes());
                let d = sdst.unwrap_or_else(|| self.alloc_s());
                self.emit(abi::STP_OP_SLDK, d, 0, 0, k);
            }
            Some(_) => self.fail(several),
            None => self.fail(in_func),
        }
    }

    /// Calls a built-in; the result goes to `dst` or `sdst` by its kind.
    pub(super) fn call(&mut self, e: &Expr, args: &[Expr], dst: Option<u8>, sdst: Option<u8>) {
        use abi::*;
        if let Ref::Func(f) = self.r#ref(e) {
            return self.call_func(f, args, dst, sdst);
        }
        let Ref::Builtin(b) = self.r#ref(e) else {
            self.fail("internal error: unresolved call");
            return;
        };
        match b {
            Builtin::Substr => {
                let d = sdst.unwrap_or_else(|| self.alloc_s());
                let s = self.str(&args[0]);
                let pair = self.alloc_r();
                self.alloc_r();
                self.int_into(&args[1], pair);
                self.int_into(&args[2], pair + 1);
                self.emit(STP_OP_SSUB, d, s, pair, 0);
            }
            Builtin::Isinstr | Builtin::Strpos => {
                let d = dst.unwrap_or_else(|| self.alloc_r());
                let a = self.str(&args[0]);
                let b2 = self.str(&args[1]);
                self.emit(STP_OP_SFIND, d, a, b2, 0);
                if b == Builtin::Isinstr {
                    let z = self.alloc_r();
                    self.load_int(z, 0);
                    self.emit(STP_OP_GE, d, d, z, 0);
                }
            }
            Builtin::Strtol | Builtin::Stringat => {
                let d = dst.unwrap_or_else(|| self.alloc_r());
                let a = self.str(&args[0]);
                let r = self.int(&args[1]);
                let op = if b == Builtin::Strtol {
                    STP_OP_STOL
                } else {
                    STP_OP_SCHAR
                };
                self.emit(op, d, a, r, 0);
            }
            Builtin::StrReplace => {
                let d = self.alloc_s();
                let a = self.str(&args[0]);
                let pair = self.alloc_s();
                self.alloc_s();
                self.str_into(&args[1], pair);
                self.str_into(&args[2], pair + 1);
                self.emit(STP_OP_SREPL, d, a, pair, 0);
                if let Some(t) = sdst {
                    self.emit(STP_OP_SMOV, t, d, 0, 0);
                }
            }
            Builtin::TextStr => {
                let d = self.alloc_s();
                let a = self.str(&args[0]);
                self.emit(STP_OP_STEXT, d, a, 0, 0);
                if let Some(t) = sdst {
                    self.emit(STP_OP_SMOV, t, d, 0, 0);
                }
            }
            Builtin::Error => {
                let a = self.str(&args[0]);
                self.emit(STP_OP_ERROR, 0, a, 0, 0);
                if let Some(d) = dst {
                    self.load_int(d, 0);
                }
            }
            Builtin::System => {
                let a = self.str(&args[0]);
                self.emit(STP_OP_SYSTEM, 0, a, 0, 0);
            }
            Builtin::Matched | Builtin::MatchedStr => {
                let d = sdst.unwrap_or_else(|| self.alloc_s());
                let n = match args.first() {
                    Some(a) => self.int(a),
                    None => {
                        let z = self.alloc_r();
                        self.load_int(z, 0);
                        z
                    }
                };
                self.emit(STP_OP_MATCHED, d, n, 0, 0);
            }
            Builtin::Ngroups => {
                let d = dst.unwrap_or_else(|| self.alloc_r());
                self.emit(STP_OP_NGROUPS, d, 0, 0, 0);
            }
            Builtin::PrintChar
            | Builtin::Endian { .. }
            | Builtin::TextStrn
            | Builtin::StringQuoted
            | Builtin::Pretty { .. }
            | Builtin::Tokenize => self.call_tapset(b, args, dst, sdst),
            // The probe that fired names itself (helpers.h PP): the loader
            // gives each probe its pp string once wildcards have expanded
            // (`kernel.function("vfs_read")` for `vfs_*`), and a probe with
            // several points or a function called from several probes
            // sees the one that fired.
            Builtin::Pp => {
                let d = sdst.unwrap_or_else(|| self.alloc_s());
                self.emit(STP_OP_CALLS, d, 0, 0, STP_HLP_PP as i32);
            }
            Builtin::Pn => self.point_const(
                sdst,
                |x| &x.script,
                "not supported yet: pn() in a probe with several points",
                "not supported yet: pn() in a function",
            ),
            Builtin::Helper { id, arg } => {
                let ra = match (arg, args.first()) {
                    (true, Some(a)) => self.int(a),
                    _ => 0,
                };
                let faults = id == abi::STP_HLP_KERNEL_STRING || id == abi::STP_HLP_USER_STRING;
                match (dst, sdst) {
                    // Under a try, a failed copy must leave the variable
                    // as it was (stap), not empty (the VM): a temporary.
                    (_, Some(s)) if faults && !self.tries.is_empty() => {
                        let t = self.alloc_s();
                        self.emit(STP_OP_CALLS, t, ra, 0, id as i32);
                        self.emit(STP_OP_SMOV, s, t, 0, 0)
                    }
                    (_, Some(s)) => self.emit(STP_OP_CALLS, s, ra, 0, id as i32),
                    (Some(d), _) => self.emit(STP_OP_CALLI, d, ra, 0, id as i32),
                    (None, None) => {
                        let t = self.alloc_r();
                        self.emit(STP_OP_CALLI, t, ra, 0, id as i32)
                    }
                };
            }
            Builtin::HelperDiv { id, div } => {
                let d = dst.unwrap_or_else(|| self.alloc_r());
                self.emit(STP_OP_CALLI, d, 0, 0, id as i32);
                let k = self.alloc_r();
                self.load_int(k, div);
                self.emit(STP_OP_DIV, d, d, k, 0);
            }
            Builtin::Strlen => {
                let d = dst.unwrap_or_else(|| self.alloc_r());
                let s = match args.first() {
                    Some(a) => self.str(a),
                    None => 0,
                };
                self.emit(STP_OP_SLEN, d, s, 0, 0);
            }
            Builtin::Exit => {
                self.emit(STP_OP_EXIT, 0, 0, 0, 0);
                if let Some(d) = dst {
                    self.load_int(d, 0);
                }
            }
            Builtin::Abort | Builtin::Warn | Builtin::ProbeType => {
                self.call_tier1(b, args, dst, sdst)
            }
            Builtin::Target => {
                let k = self.tabs.target_konst();
                let d = dst.unwrap_or_else(|| self.alloc_r());
                self.emit(STP_OP_LDK, d, 0, 0, k);
            }
            Builtin::Loader { uid } => {
                let k = self.tabs.loader_konst(uid);
                let d = dst.unwrap_or_else(|| self.alloc_r());
                self.emit(STP_OP_LDK, d, 0, 0, k);
            }
            Builtin::Tz { name } => {
                let k = self.tabs.tz_konst(name);
                let d = dst.unwrap_or_else(|| self.alloc_r());
                self.emit(STP_OP_LDK, d, 0, 0, k);
            }
            Builtin::SwitchFile => {
                let f = self.tabs.switch_format();
                self.emit(STP_OP_PRINTF, 0, 0, 0, f);
                if let Some(d) = dst {
                    self.load_int(d, 0);
                }
            }
        }
    }
}
