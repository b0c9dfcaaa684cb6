//! Lowering: the typed script to a `vm_spec::program::Program`.
//!
//! Computes the handlers' code, the probe descriptors and the constant,
//! string, format and global tables. One handler is made per probe and per
//! distinct context of its points (points of one context share it). Locals
//! live in fixed registers at the bottom of the two register files (longs in
//! `r`, strings in `s`) and are cleared at handler entry, so no register is
//! read before it is written; temporaries are stacked above them and
//! released after each subexpression. `printf` arguments are evaluated into
//! a fresh contiguous run per call (integers from `rb`, strings from `sc`),
//! as `PRINTF` requires. Conditions compile to jump lists patched once the
//! target is known (Lua's `lcode.c`); loops are forward jumps plus one `LOOP`
//! back edge, the only backward jump the ISA has. Every instruction records
//! the source line/column of the expression or statement it came from.
//! Global initialisers become a `begin` handler that runs before the others.
//!
//! Needs: the `Script`, `Resolved` and `Types` of a script without errors,
//! and the limit values. Runs last; the result goes to the `.stpb` writer and,
//! at load time, to `vm_spec::image::build` and the kernel's verifier.
use super::resolve::{Builtin, Point, Ref, Resolved};
use super::types::{Ty, Types};
use crate::ast::*;
use crate::diag::{Diagnostic, LineIndex};
use std::collections::HashMap;
use vm_spec::abi;
use vm_spec::program::*;

mod strglobals;
mod tapset;
mod tier1;
mod trycatch;

/// The program's tables, shared by all handlers.
struct Tables {
    konsts: Vec<i64>,
    kidx: HashMap<i64, i32>,
    strings: Vec<Vec<u8>>,
    sidx: HashMap<Vec<u8>, i32>,
    formats: Vec<Format>,
    maxstr: usize,
    /// Target variables, their `handler` set once the handler is placed.
    target_vars: Vec<TargetVar>,
    /// Regular expressions (REMATCH's RX operand), one per pattern.
    regexes: Vec<RegexTable>,
    /// `Program::target_konst`, made by the first `target()`.
    target_konst: Option<i32>,
    /// `Program::switch_file_format`, made by the first `switch_file()`
    /// (never shared with a printf of the same text).
    switch_fmt: Option<i32>,
    /// `Program::warn_format`, made by the first `warn(msg)` (never shared
    /// either).
    warn_fmt: Option<i32>,
}

impl Tables {
    fn konst(&mut self, v: i64) -> i32 {
        if let Some(&i) = self.kidx.get(&v) {
            return i;
        }
        let i = self.konsts.len() as i32;
        self.konsts.push(v);
        self.kidx.insert(v, i);
        i
    }

    /// A fresh constant the loader patches (never shared).
    fn reloc_konst(&mut self) -> i32 {
        self.konsts.push(0);
        (self.konsts.len() - 1) as i32
    }

    /// A constant string, cut at a NUL (C semantics) and at MAXSTRINGLEN - 1
    /// bytes (the NUL counts, as in stap).
    fn string(&mut self, s: &[u8]) -> i32 {
        let mut b: Vec<u8> = s.iter().copied().take_while(|&c| c != 0).collect();
        b.truncate(self.maxstr);
        if let Some(&i) = self.sidx.get(&b) {
            return i;
        }
        let i = self.strings.len() as i32;
        self.strings.push(b.clone());
        self.sidx.insert(b, i);
        i
    }

    /// The DFA of a regex literal (`resolve` already refused a pattern
    /// that does not compile).
    fn regex(&mut self, pattern: &[u8]) -> Result<i32, String> {
        if let Some(i) = self.regexes.iter().position(|r| r.pattern == pattern) {
            return Ok(i as i32);
        }
        let t = crate::regex::compile(pattern).map_err(|e| e.to_string())?;
        self.regexes.push(t);
        Ok((self.regexes.len() - 1) as i32)
    }

    fn format(&mut self, text: &str, args: Vec<ArgKind>) -> i32 {
        let f = Format {
            text: text.to_string(),
            args,
        };
        let special = self.switch_fmt.map(|i| i as usize);
        let warn = self.warn_fmt.map(|i| i as usize);
        if let Some(i) = (0..self.formats.len())
            .find(|&i| self.formats[i] == f && Some(i) != special && Some(i) != warn)
        {
            return i as i32;
        }
        self.formats.push(f);
        (self.formats.len() - 1) as i32
    }

    /// The constant `target()` reads (the loader patches it).
    fn target_konst(&mut self) -> i32 {
        match self.target_konst {
            Some(k) => k,
            None => {
                let k = self.reloc_konst();
                self.target_konst = Some(k);
                k
            }
        }
    }

    /// The format of `switch_file()`'s PRINTF record.
    fn switch_format(&mut self) -> i32 {
        match self.switch_fmt {
            Some(f) => f,
            None => {
                self.formats.push(Format {
                    text: String::new(),
                    args: Vec::new(),
                });
                let f = (self.formats.len() - 1) as i32;
                self.switch_fmt = Some(f);
                f
            }
        }
    }
}

/// One loop being lowered: jumps waiting for its exit and its continue point.
#[derive(Default)]
struct LoopJumps {
    breaks: Vec<usize>,
    continues: Vec<usize>,
}

/// The lowering of one handler.
struct Gen<'a> {
    res: &'a Resolved,
    types: &'a Types,
    lines: &'a LineIndex<'a>,
    tabs: &'a mut Tables,
    probe: usize,
    code: Vec<Insn>,
    locs: Vec<SrcLoc>,
    cur: SrcLoc,
    /// Register of each local (integer or string file, by its type).
    local_reg: Vec<u8>,
    next_r: u8,
    next_s: u8,
    max_r: u8,
    max_s: u8,
    loops: Vec<LoopJumps>,
    error: Option<Diagnostic>,
    span: Span,
    /// Handler index of each user function (None: not lowered).
    func_handlers: &'a [Option<u32>],
    /// The result type when lowering a function body.
    ret: Option<Ty>,
    /// foreach loops open around the code being lowered (iterator ids).
    iter_depth: u8,
    /// try statements open around the code being lowered, innermost last.
    tries: Vec<trycatch::TryCtx>,
}

const NREGS: u8 = abi::STP_MAX_REGS as u8;
const NSREGS: u8 = abi::STP_MAX_SREGS as u8;

impl Gen<'_> {
    fn emit(&mut self, op: abi::stp_opcode, a: u8, b: u8, c: u8, imm: i32) -> usize {
        self.code.push(Insn::new(op, a, b, c, imm));
        self.locs.push(self.cur);
        self.code.len() - 1
    }

    fn pc(&self) -> usize {
        self.code.len()
    }

    /// Emits a forward jump to be patched later; returns its index.
    fn jump(&mut self, op: abi::stp_opcode, r: u8) -> usize {
        self.emit(op, r, 0, 0, 0)
    }

    /// Points the forward jumps in `list` at the next instruction.
    fn patch_here(&mut self, list: &[usize]) {
        let target = self.pc();
        for &j in list {
            let off = target as i64 - (j as i64 + 1);
            if let Some(insn) = self.code.get_mut(j) {
                insn.imm = i32::try_from(off).unwrap_or(i32::MAX);
            }
        }
    }

    fn fail(&mut self, msg: &str) {
        if self.error.is_none() {
            self.error = Some(Diagnostic::semantic(msg, self.span));
        }
    }

    fn alloc_r(&mut self) -> u8 {
        if self.next_r >= NREGS {
            self.fail("expression too complex: out of integer registers");
            return NREGS - 1;
        }
        let r = self.next_r;
        self.next_r += 1;
        self.max_r = self.max_r.max(self.next_r);
        r
    }

    fn alloc_s(&mut self) -> u8 {
        if self.next_s >= NSREGS {
            self.fail("expression too complex: out of string registers");
            return NSREGS - 1;
        }
        let s = self.next_s;
        self.next_s += 1;
        self.max_s = self.max_s.max(self.next_s);
        s
    }

    fn ty(&self, e: &Expr) -> Ty {
        self.types
            .exprs
            .get(e.id as usize)
            .copied()
            .unwrap_or_default()
    }

    /// The STAT index of the statistic `a` names.
    fn stat_of(&self, a: &Expr) -> Option<i32> {
        let Ref::Global(g) = self.r#ref(a) else {
            return None;
        };
        self.res
            .stats
            .iter()
            .position(|s| s.global == g)
            .map(|i| i as i32)
    }

    /// `a[k...]` naming an element of a statistics array: its global.
    fn stat_elem(&self, a: &Expr) -> Option<usize> {
        let ExprKind::Index { base, .. } = &a.kind else {
            return None;
        };
        let g = self.array_of(base)?;
        self.res
            .stats
            .iter()
            .any(|s| s.global == g && s.array)
            .then_some(g)
    }

    /// The MAP id of global array `g` (arrays numbered in declaration order).
    fn map_id(&self, g: usize) -> i32 {
        self.res.globals.iter().take(g).filter(|x| x.array).count() as i32
    }

    /// The global array an `Index`/`In` base names.
    fn array_of(&self, base: &Expr) -> Option<usize> {
        match self.r#ref(base) {
            Ref::Global(g) if self.res.globals.get(g).is_some_and(|x| x.array) => Some(g),
            _ => None,
        }
    }

    /// Evaluates the keys of an access to array `g` into its key runs.
    fn key_runs(&mut self, g: usize, keys: &[Option<Expr>]) -> (u8, u8) {
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
    fn assign_elem(
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
                let mop = map | ((binop(b) as i32) << 16);
                self.emit(STP_OP_MOPR, v, rb, sc, mop);
            }
            _ => {
                self.emit(STP_OP_MSET, v, rb, sc, map);
            }
        }
        v
    }

    /// `delete e`: an element, a whole array, or a scalar.
    fn delete(&mut self, e: &Expr) {
        use abi::*;
        let mark = (self.next_r, self.next_s);
        match &e.kind {
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
                Ref::Global(g) => {
                    let t = self.alloc_r();
                    self.load_int(t, 0);
                    self.emit(STP_OP_STG, t, 0, 0, g as i32);
                }
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
        self.next_r = mark.0;
        self.next_s = mark.1;
    }

    /// `foreach ([v =] [k...] in a [+|-] [limit n]) body`: MITER fills
    /// iterator `depth` (the nesting level), then MNEXT, JZ, body, LOOP.
    fn foreach(&mut self, f: &Foreach, span: Span) {
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
        let mark = (self.next_r, self.next_s);
        let mit = map | (i32::from(depth) << 16);
        let kinds: Vec<Ty> = self.types.keys.get(g).cloned().unwrap_or_default();
        // A slice's fixed keys, evaluated once, before the limit (stap's
        // order): (key column, register, is_str).
        let mut fixed = Vec::new();
        for (i, k) in f.slice.iter().flatten().enumerate() {
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
        let mut skips = Vec::new();
        for &(i, reg, is_str) in &fixed {
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
        self.next_r = mark.0;
        self.next_s = mark.1;
        self.iter_depth -= 1;
    }

    fn r#ref(&self, e: &Expr) -> Ref {
        self.res
            .refs
            .get(e.id as usize)
            .copied()
            .unwrap_or_default()
    }

    fn local(&self, l: usize) -> u8 {
        self.local_reg.get(l).copied().unwrap_or(0)
    }

    fn enter(&mut self, span: Span) -> (SrcLoc, Span) {
        let saved = (self.cur, self.span);
        // Library code (tapset/library.stp) has no place in the script:
        // line 0, so a run-time error there names the function.
        let (line, col) = if span == Span::default() {
            (0, 0)
        } else {
            self.lines.line_col(span.lo)
        };
        self.cur = SrcLoc { line, col };
        self.span = span;
        saved
    }

    fn leave(&mut self, saved: (SrcLoc, Span)) {
        self.cur = saved.0;
        self.span = saved.1;
    }

    fn load_int(&mut self, dst: u8, v: i64) {
        match i32::try_from(v) {
            Ok(imm) => self.emit(abi::STP_OP_LDI, dst, 0, 0, imm),
            Err(_) => {
                let k = self.tabs.konst(v);
                self.emit(abi::STP_OP_LDK, dst, 0, 0, k)
            }
        };
    }

    // ------------------------------------------------------------ integers

    /// A target variable (`$x`, `$x->a->b`) into `dst`, through constants
    /// the loader fills from BTF (`vm_spec::program::TargetVar` documents
    /// the code): `ARG`, then per step an offset and an optional 8-byte
    /// `KERNEL_LONG`, then shifts and a mask that narrow the value to its
    /// C type (sign- or zero-extended).
    fn target_var(&mut self, e: &Expr, dst: u8) {
        use abi::*;
        let Some((site, fields)) = self.res.target_vars.get(&e.id) else {
            self.fail("internal error: unresolved target variable");
            return;
        };
        // `$name`, or `@cast`'s address operand.
        let (name, cast_addr) = match &e.kind {
            ExprKind::Target(n) => (n.clone(), None),
            ExprKind::Deref { base, .. } => match (&base.kind, site) {
                (ExprKind::Target(n), _) => (n.clone(), None),
                (ExprKind::AtOp { args, .. }, TargetSite::Cast(t)) => match args.first() {
                    Some(a) => (t.clone(), Some(a)),
                    None => return self.fail("internal error: @cast without an address"),
                },
                _ => return self.fail("internal error: unresolved target variable"),
            },
            _ => return self.fail("internal error: unresolved target variable"),
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
            None => {
                k(self, RelocKind::ArgIndex);
                self.emit(STP_OP_CALLI, dst, t, 0, STP_HLP_ARG as i32);
            }
        }
        for step in 0..=fields.len() as u32 {
            k(self, RelocKind::Offset(step));
            self.emit(STP_OP_ADD, dst, dst, t, 0);
            k(self, RelocKind::Deref(step));
            self.emit(STP_OP_JZ, t, 0, 0, 1);
            self.emit(STP_OP_CALLI, dst, dst, 0, STP_HLP_KERNEL_LONG as i32);
        }
        k(self, RelocKind::Shift);
        self.emit(STP_OP_SHL, dst, dst, t, 0);
        self.emit(STP_OP_SHR, dst, dst, t, 0);
        k(self, RelocKind::Mask);
        self.emit(STP_OP_AND, dst, dst, t, 0);
        self.record_target_var(&name, site, fields, e.span, relocs);
    }

    /// Records one use of target variable `name` (`$x` or a `@cast` type)
    /// at `span` for the loader: its relocated constants, and the probe
    /// point and place its messages name (the handler is set later).
    fn record_target_var(
        &mut self,
        name: &str,
        site: &TargetSite,
        fields: &[String],
        span: Span,
        relocs: Vec<Reloc>,
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
        let Some((site, fields)) = self.res.target_vars.get(&a.id) else {
            return self.fail("internal error: unresolved @defined operand");
        };
        let name = match (&a.kind, site) {
            (_, TargetSite::Cast(t)) => t.clone(),
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
        self.record_target_var(&name, site, fields, a.span, relocs);
    }

    /// The register holding the value of integer expression `e`: a local's
    /// own register, or a new temporary.
    fn int(&mut self, e: &Expr) -> u8 {
        if let (ExprKind::Var(_), Ref::Local(l)) = (&e.kind, self.r#ref(e)) {
            return self.local(l);
        }
        let t = self.alloc_r();
        self.int_into(e, t);
        t
    }

    /// Evaluates integer expression `e` into `dst` (a temporary).
    fn int_into(&mut self, e: &Expr, dst: u8) {
        let saved = self.enter(e.span);
        let mark = (self.next_r, self.next_s);
        self.int_into_inner(e, dst);
        self.next_r = mark.0;
        self.next_s = mark.1;
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
            ExprKind::Target(_) | ExprKind::Deref { .. } => self.target_var(e, dst),
            ExprKind::AtOp { op, args } if op == "@defined" => self.defined(e, args, dst),
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
                    let msx = self.map_id(g) | ((opc as i32) << 16);
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
            ExprKind::In { keys, array } => match self.array_of(array) {
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
                let ra = self.int(a);
                let opc = match op {
                    UnOp::Neg => STP_OP_NEG,
                    UnOp::Plus => STP_OP_MOV,
                    UnOp::Not => STP_OP_LNOT,
                    UnOp::BitNot => STP_OP_NOT,
                };
                self.emit(opc, dst, ra, 0, 0);
            }
            ExprKind::Binary(op, a, b) => {
                let ra = self.int(a);
                let rb = self.int(b);
                self.emit(binop(*op), dst, ra, rb, 0);
            }
            ExprKind::Regex { negate, lhs, re } => {
                let s = self.str(lhs);
                match self.tabs.regex(re) {
                    Ok(k) => {
                        self.emit(STP_OP_REMATCH, dst, s, 0, k);
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
                    let ra = self.int(a);
                    let rb = self.int(b);
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

    /// Evaluates `args` into a fresh integer run and a fresh string run
    /// (as PRINTF, SPRINTF and FCALL* take them); returns the run bases
    /// (0 for an empty run). `kinds[k]` is true for a string argument.
    fn arg_runs(&mut self, args: &[Expr], kinds: &[bool]) -> (u8, u8) {
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

    /// Calls a built-in; the result goes to `dst` or `sdst` by its kind.
    fn call(&mut self, e: &Expr, args: &[Expr], dst: Option<u8>, sdst: Option<u8>) {
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
            Builtin::PrintChar
            | Builtin::Endian { .. }
            | Builtin::TextStrn
            | Builtin::StringQuoted
            | Builtin::Tokenize => self.call_tapset(b, args, dst, sdst),
            Builtin::Pp => {
                // One handler may serve several points of a probe: pp()
                // is their display when they all have the same one.
                let shown: Vec<&str> = self
                    .res
                    .probes
                    .get(self.probe)
                    .map(|p| p.points.iter().map(|x| x.display.as_str()).collect())
                    .unwrap_or_default();
                match shown.first() {
                    Some(first) if shown.iter().all(|x| x == first) => {
                        let k = self.tabs.string(first.as_bytes());
                        let d = sdst.unwrap_or_else(|| self.alloc_s());
                        self.emit(STP_OP_SLDK, d, 0, 0, k);
                    }
                    Some(_) => self.fail("not supported yet: pp() in a probe with several points"),
                    None => self.fail("not supported yet: pp() in a function"),
                }
            }
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
            Builtin::SwitchFile => {
                let f = self.tabs.switch_format();
                self.emit(STP_OP_PRINTF, 0, 0, 0, f);
                if let Some(d) = dst {
                    self.load_int(d, 0);
                }
            }
        }
    }

    /// `lhs op= rhs`; returns the register holding the assigned value (only
    /// meaningful when `want` is set).
    fn assign(&mut self, e: &Expr, want: bool) -> u8 {
        use abi::*;
        let ExprKind::Assign(op, lhs, rhs) = &e.kind else {
            return 0;
        };
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
    fn incr(&mut self, e: &Expr, dst: Option<u8>) {
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
                let mop = self.map_id(g) | ((STP_OP_ADD as i32) << 16);
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

    // ------------------------------------------------------------- strings

    /// The string register holding the value of `e`.
    fn str(&mut self, e: &Expr) -> u8 {
        if let (ExprKind::Var(_), Ref::Local(l)) = (&e.kind, self.r#ref(e)) {
            return self.local(l);
        }
        let t = self.alloc_s();
        self.str_into(e, t);
        t
    }

    /// Evaluates string expression `e` into `dst` (a temporary).
    fn str_into(&mut self, e: &Expr, dst: u8) {
        use abi::*;
        let saved = self.enter(e.span);
        let mark = (self.next_r, self.next_s);
        match &e.kind {
            ExprKind::Str(s) => {
                let k = self.tabs.string(s);
                self.emit(STP_OP_SLDK, dst, 0, 0, k);
            }
            ExprKind::Var(_) => match self.r#ref(e) {
                Ref::Local(l) => {
                    let x = self.local(l);
                    self.emit(STP_OP_SMOV, dst, x, 0, 0);
                }
                Ref::Global(g) => self.sglobal_load(g, dst),
                _ => self.fail("internal error: bad string variable"),
            },
            ExprKind::Concat(a, b) => {
                let sa = self.str(a);
                let sb = self.str(b);
                self.emit(STP_OP_SCAT, dst, sa, sb, 0);
            }
            ExprKind::Call { args, .. } => self.call(e, args, None, Some(dst)),
            ExprKind::Index { base, keys } if self.array_of(base).is_some() => {
                let g = self.array_of(base).unwrap_or_default();
                let (rb, sc) = self.key_runs(g, keys);
                let map = self.map_id(g);
                self.emit(STP_OP_MGETS, dst, rb, sc, map);
            }
            ExprKind::Format { .. } => self.sprint(e, dst),
            ExprKind::Ternary(c, a, b) => {
                let f = self.branch_false(c);
                self.str_into(a, dst);
                let j = self.jump(STP_OP_JMP, 0);
                self.patch_here(&f);
                self.str_into(b, dst);
                self.patch_here(&[j]);
            }
            ExprKind::Assign(..) => {
                let x = self.assign(e, true);
                self.emit(STP_OP_SMOV, dst, x, 0, 0);
            }
            _ => {
                self.fail("internal error: not a string expression");
                let k = self.tabs.string(b"");
                self.emit(STP_OP_SLDK, dst, 0, 0, k);
            }
        }
        self.next_r = mark.0;
        self.next_s = mark.1;
        self.leave(saved);
    }

    // ---------------------------------------------------------- conditions

    /// Code that falls through when `e` is true; returns the jumps taken
    /// when it is false.
    fn branch_false(&mut self, e: &Expr) -> Vec<usize> {
        let saved = self.enter(e.span);
        let mark = (self.next_r, self.next_s);
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
        self.next_r = mark.0;
        self.next_s = mark.1;
        self.leave(saved);
        out
    }

    /// Code that falls through when `e` is false; returns the jumps taken
    /// when it is true.
    fn branch_true(&mut self, e: &Expr) -> Vec<usize> {
        let saved = self.enter(e.span);
        let mark = (self.next_r, self.next_s);
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
        self.next_r = mark.0;
        self.next_s = mark.1;
        self.leave(saved);
        out
    }

    // ------------------------------------------------------------ printing

    /// The format text and argument kinds of a print-family expression:
    /// `printf`/`sprintf` take theirs; `print(a, b)` is `%s%d`, `println`
    /// adds a newline, `printd(d, a, b)` puts the delimiter between.
    fn format_of(&self, e: &Expr) -> Option<(String, Vec<ArgKind>, bool)> {
        let (name, format, args) = match &e.kind {
            ExprKind::Print { kind, format, args } => (
                match kind {
                    PrintKind::Printf => "printf",
                    PrintKind::Print => "print",
                    PrintKind::Println => "println",
                },
                format,
                args,
            ),
            ExprKind::Format { name, format, args } => (name.as_str(), format, args),
            _ => return None,
        };
        let to_string = name.starts_with('s');
        let base = name.trim_start_matches('s');
        if base == "printf" || name == "sprintf" {
            let text = String::from_utf8_lossy(format.as_deref().unwrap_or_default()).into_owned();
            let kinds = crate::printf::parse(&text).unwrap_or_default();
            return Some((text, kinds, to_string));
        }
        let delim = if base.starts_with("printd") {
            String::from_utf8_lossy(format.as_deref().unwrap_or_default()).replace('%', "%%")
        } else {
            String::new()
        };
        let mut text = String::new();
        let mut kinds = Vec::new();
        for (k, a) in args.iter().enumerate() {
            if k > 0 {
                text.push_str(&delim);
            }
            if self.ty(a) == Ty::Str {
                text.push_str("%s");
                kinds.push(ArgKind::Str);
            } else {
                text.push_str("%d");
                kinds.push(ArgKind::Int);
            }
        }
        if base.ends_with("ln") {
            text.push('\n');
        }
        Some((text, kinds, to_string))
    }

    /// `sprint`, `sprintf` ... into string register `dst`.
    fn sprint(&mut self, e: &Expr, dst: u8) {
        if let ExprKind::Format { args, .. } = &e.kind {
            if args
                .iter()
                .any(|a| matches!(&a.kind, ExprKind::Stat { op, .. } if op.starts_with("@hist")))
            {
                return self.sprint_hist(e, dst);
            }
        }
        let (ExprKind::Format { args, .. }, Some((text, kinds, _))) = (&e.kind, self.format_of(e))
        else {
            return;
        };
        if text.len() > self.tabs.maxstr || text.contains('\0') {
            self.fail("not supported yet: a sprintf format longer than MAXSTRINGLEN");
            return;
        }
        if kinds.len() > abi::STP_MAX_FMT_ARGS as usize {
            self.fail("too many arguments to sprintf");
            return;
        }
        let strs: Vec<bool> = kinds.iter().map(|k| *k == ArgKind::Str).collect();
        let (rb, sc) = self.arg_runs(args, &strs);
        let f = self.tabs.format(&text, kinds);
        // SPRINTF must not write one of its arguments: dst is older than
        // the runs, unless it is a local, which is not in them either.
        self.emit(abi::STP_OP_SPRINTF, dst, rb, sc, f);
    }

    /// `print(@hist_log(s))`, `println(@hist_linear(s, ...))`: one STHIST
    /// per histogram, each other argument printed as `print` would.
    fn print_hist(&mut self, kind: PrintKind, args: &[Expr], span: Span, id: ExprId) {
        for a in args {
            match &a.kind {
                ExprKind::Stat { op, args: sargs } if op.starts_with("@hist") => {
                    let saved = self.enter(a.span);
                    if let Some((g, ExprKind::Index { keys, .. })) = sargs
                        .first()
                        .and_then(|x| self.stat_elem(x).map(|g| (g, &x.kind)))
                    {
                        let mark = (self.next_r, self.next_s);
                        let (rb, sc) = self.key_runs(g, keys);
                        let map = self.map_id(g);
                        self.emit(abi::STP_OP_MSTHIST, 0, rb, sc, map);
                        self.next_r = mark.0;
                        self.next_s = mark.1;
                    } else if let Some(st) = sargs.first().and_then(|x| self.stat_of(x)) {
                        self.emit(abi::STP_OP_STHIST, 0, 0, 0, st);
                    }
                    self.leave(saved);
                }
                _ => {
                    let one = Expr {
                        kind: ExprKind::Print {
                            kind: PrintKind::Print,
                            format: None,
                            args: vec![a.clone()],
                        },
                        span,
                        id,
                    };
                    self.print(&one);
                }
            }
        }
        if matches!(kind, PrintKind::Println) {
            let f = self.tabs.format("\n", Vec::new());
            self.emit(abi::STP_OP_PRINTF, 0, 0, 0, f);
        }
    }

    /// `printf`, `print`, `println`, `printd`, `printdln`.
    fn print(&mut self, e: &Expr) {
        let (ExprKind::Print { args, .. } | ExprKind::Format { args, .. }) = &e.kind else {
            return;
        };
        let is_hist =
            |a: &Expr| matches!(&a.kind, ExprKind::Stat { op, .. } if op.starts_with("@hist"));
        if args.iter().any(is_hist) {
            match &e.kind {
                ExprKind::Print {
                    kind: kind @ (PrintKind::Print | PrintKind::Println),
                    ..
                } => self.print_hist(*kind, args, e.span, e.id),
                _ => self.fail("not supported yet: a histogram in a formatted print or a string"),
            }
            return;
        }
        let Some((text, kinds, to_string)) = self.format_of(e) else {
            return;
        };
        if to_string {
            // sprint* for its effect only.
            let t = self.alloc_s();
            self.sprint(e, t);
            return;
        }
        if kinds.len() > abi::STP_MAX_FMT_ARGS as usize {
            self.fail(&format!(
                "too many arguments to print ({}, at most {})",
                kinds.len(),
                abi::STP_MAX_FMT_ARGS
            ));
            return;
        }
        let nint = kinds.iter().filter(|k| **k == ArgKind::Int).count();
        let nstr = kinds.len() - nint;
        let rb = self.next_r;
        let sc = self.next_s;
        for _ in 0..nint {
            self.alloc_r();
        }
        for _ in 0..nstr {
            self.alloc_s();
        }
        let (mut ri, mut si) = (rb, sc);
        for (a, k) in args.iter().zip(&kinds) {
            match k {
                ArgKind::Int => {
                    self.int_into(a, ri);
                    ri = ri.saturating_add(1);
                }
                ArgKind::Str => {
                    self.str_into(a, si);
                    si = si.saturating_add(1);
                }
            }
        }
        let f = self.tabs.format(&text, kinds);
        self.emit(
            abi::STP_OP_PRINTF,
            0,
            if nint > 0 { rb } else { 0 },
            if nstr > 0 { sc } else { 0 },
            f,
        );
    }

    // ---------------------------------------------------------- statements

    /// Evaluates `e` for its effect only.
    fn effect(&mut self, e: &Expr) {
        let saved = self.enter(e.span);
        let mark = (self.next_r, self.next_s);
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
        self.next_r = mark.0;
        self.next_s = mark.1;
        self.leave(saved);
    }

    fn stmt(&mut self, s: &Stmt) {
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
            StmtKind::Loop {
                init,
                cond,
                incr,
                body,
            } => {
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
}

impl Gen<'_> {
    /// `return [e]` in a function (resolve refuses it elsewhere); with no
    /// value in a function returning one, the value is 0 or "".
    fn ret_stmt(&mut self, e: Option<&Expr>) {
        use abi::*;
        let mark = (self.next_r, self.next_s);
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
        self.next_r = mark.0;
        self.next_s = mark.1;
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

fn binop(op: BinOp) -> abi::stp_opcode {
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

/// What a handler is lowered from: a probe body for a context, or a
/// function body.
#[derive(Clone, Copy)]
enum Body {
    Probe(usize, u8),
    Func(usize),
}

/// The shared inputs of lowering.
struct Ctx<'a> {
    script: &'a Script,
    res: &'a Resolved,
    types: &'a Types,
    lines: &'a LineIndex<'a>,
    func_handlers: &'a [Option<u32>],
}

/// Lowers one probe body for its context, or one function body.
fn handler(
    cx: &Ctx,
    tabs: &mut Tables,
    body: Body,
    probe_point: String,
    oneshot: bool,
) -> Result<Handler, Diagnostic> {
    let (script, res, types, lines) = (cx.script, cx.res, cx.types, cx.lines);
    let lost = || Diagnostic::semantic("internal error: lost probe", Span::default());
    let (probe, ctx, locals, stmt, span, nparams, ret) = match body {
        Body::Probe(p, ctx) => {
            let rp = &res.probes[p];
            let Some(Item::Probe(decl)) = script.items.get(rp.item) else {
                return Err(lost());
            };
            (p, ctx, &rp.locals, &decl.body, decl.span, 0, None)
        }
        Body::Func(f) => {
            let rf = &res.funcs[f];
            let Some(Item::Function(decl)) = script.items.get(rf.item) else {
                return Err(lost());
            };
            let Some(b) = &decl.body else {
                return Err(lost());
            };
            let ret = types.funcs.get(f).copied().unwrap_or(Ty::Void);
            (
                res.probes.len() + f,
                abi::STP_CTX_FUNCTION as u8,
                &rf.locals,
                b,
                decl.span,
                rf.nparams,
                Some(ret),
            )
        }
    };
    let mut g = Gen {
        res,
        types,
        lines,
        tabs,
        probe,
        code: Vec::new(),
        locs: Vec::new(),
        cur: SrcLoc::default(),
        local_reg: Vec::new(),
        next_r: 0,
        next_s: 0,
        max_r: 0,
        max_s: 0,
        loops: Vec::new(),
        error: None,
        span,
        func_handlers: cx.func_handlers,
        ret,
        iter_depth: 0,
        tries: Vec::new(),
    };
    let saved = g.enter(span);
    // Parameters arrive in r[0..) and s[0..) in order per file; the other
    // locals get fixed registers after them, cleared at entry.
    let tys = types.locals.get(probe).cloned().unwrap_or_default();
    let mut regs = Vec::new();
    for ty in tys.iter().take(nparams) {
        regs.push(if *ty == Ty::Str {
            g.alloc_s()
        } else {
            g.alloc_r()
        });
    }
    g.local_reg = regs;
    for (l, ty) in tys.iter().enumerate().skip(nparams) {
        let span = locals.get(l).map(|x| x.1).unwrap_or(span);
        g.enter(span);
        let reg = if *ty == Ty::Str {
            let s = g.alloc_s();
            let k = g.tabs.string(b"");
            g.emit(abi::STP_OP_SLDK, s, 0, 0, k);
            s
        } else {
            let r = g.alloc_r();
            g.emit(abi::STP_OP_LDI, r, 0, 0, 0);
            r
        };
        g.local_reg.push(reg);
    }
    g.span = span;
    let _ = g.probe;
    g.stmt(stmt);
    g.leave(saved);
    let (line, col) = lines.line_col(stmt.span.lo);
    g.cur = SrcLoc { line, col };
    if oneshot {
        g.emit(abi::STP_OP_EXIT, 0, 0, 0, 0);
    }
    if ret.is_some() {
        // Falling off the end of a function returns 0, "" or nothing.
        g.ret_stmt(None);
    } else {
        g.emit(abi::STP_OP_RET, 0, 0, 0, 0);
    }
    if let Some(e) = g.error {
        return Err(e);
    }
    if g.code.len() > abi::STP_MAX_INSNS as usize {
        return Err(Diagnostic::semantic("probe handler too large", span));
    }
    Ok(Handler {
        ctx,
        // At least one of each: operands that are unused but must name a
        // register (a helper's absent argument, an empty printf run) name
        // r0 / s0, which must exist.
        nregs: g.max_r.max(1),
        nsregs: g.max_s.max(1),
        code: g.code,
        locs: g.locs,
        probe_point,
    })
}

/// stap's display of the statistics written and never read, as the `end`
/// probe it synthesises (after every other): `name @count=N @min=N @max=N
/// @sum=N @avg=N`, or `name @count=0x0` when empty.
fn stats_at_exit(prog: &Program, tabs: &mut Tables) -> Option<Handler> {
    use abi::*;
    let mut code = Vec::new();
    let (mut nregs, mut nsregs) = (5u8, 0u8);
    for (i, st) in prog.stats.iter().enumerate() {
        if !st.print_at_exit {
            continue;
        }
        if st.array {
            if let Some(h) = stat_array_at_exit(prog, tabs, i as u32, &mut code) {
                nregs = nregs.max(h.0);
                nsregs = nsregs.max(h.1);
            }
            continue;
        }
        let i = i as i32;
        let empty = tabs.format(
            &format!("{} @count=0x0\n", st.name.replace('%', "%%")),
            Vec::new(),
        );
        let full = tabs.format(
            &format!(
                "{} @count=%d @min=%d @max=%d @sum=%d @avg=%d\n",
                st.name.replace('%', "%%")
            ),
            vec![ArgKind::Int; 5],
        );
        code.push(Insn::new(STP_OP_STCOUNT, 0, 0, 0, i));
        code.push(Insn::new(STP_OP_JNZ, 0, 0, 0, 2));
        code.push(Insn::new(STP_OP_PRINTF, 0, 0, 0, empty));
        code.push(Insn::new(STP_OP_JMP, 0, 0, 0, 5));
        code.push(Insn::new(STP_OP_STMIN, 1, 0, 0, i));
        code.push(Insn::new(STP_OP_STMAX, 2, 0, 0, i));
        code.push(Insn::new(STP_OP_STSUM, 3, 0, 0, i));
        code.push(Insn::new(STP_OP_STAVG, 4, 0, 0, i));
        code.push(Insn::new(STP_OP_PRINTF, 0, 0, 0, full));
    }
    if code.is_empty() {
        return None;
    }
    code.push(Insn::new(STP_OP_RET, 0, 0, 0, 0));
    Some(Handler {
        ctx: STP_CTX_END as u8,
        nregs,
        nsregs,
        locs: vec![SrcLoc::default(); code.len()],
        code,
        probe_point: "end".into(),
    })
}

/// stap's display of a statistics array written and never read
/// (`foreach ([k...] in a-)`: by @count, descending, ties in insertion
/// order): `a[1,"x"] @count=N @min=N @max=N @sum=N @avg=N`. Appends the
/// loop to `code`; returns the registers it uses.
fn stat_array_at_exit(
    prog: &Program,
    tabs: &mut Tables,
    stat: u32,
    code: &mut Vec<Insn>,
) -> Option<(u8, u8)> {
    use abi::*;
    let id = prog
        .maps
        .iter()
        .position(|m| m.value == MapValue::Stat && m.stat == stat)?;
    let m = &prog.maps[id];
    let nstr = m.keys.iter().filter(|k| **k == ArgKind::Str).count() as u8;
    let nlong = m.keys.len() as u8 - nstr;
    if 2 * u32::from(nstr) > STP_MAX_SREGS {
        return None;
    }
    // r0 limit, r1 flag, r2.. the long keys, then the five values; s0.. the
    // string keys, then their escaped copies.
    let (rk, rv, sk, se) = (2u8, 2 + nlong, 0u8, nstr);
    let mut text = format!("{}[", m.name.replace('%', "%%"));
    let mut kinds = Vec::new();
    for (i, k) in m.keys.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        if *k == ArgKind::Str {
            text.push_str("\"%s\"");
        } else {
            text.push_str("%d");
        }
        kinds.push(*k);
    }
    text.push_str("] @count=%d @min=%d @max=%d @sum=%d @avg=%d\n");
    kinds.extend([ArgKind::Int; 5]);
    let f = tabs.format(&text, kinds);
    let mit = id as i32;
    code.push(Insn::new(STP_OP_LDI, 0, 0, 0, i32::MAX));
    code.push(Insn::new(STP_OP_MITER, 0, 0, 15 | 0x80, mit));
    let top = code.len();
    let b = if nlong > 0 { rk } else { 0 };
    let c = if nstr > 0 { sk } else { 0 };
    code.push(Insn::new(STP_OP_MNEXT, 1, b, c, mit));
    let jz = code.len();
    code.push(Insn::new(STP_OP_JZ, 1, 0, 0, 0));
    for j in 0..nstr {
        code.push(Insn::new(STP_OP_STEXT, se + j, sk + j, 0, 0));
    }
    for (j, x) in [
        STP_OP_STCOUNT,
        STP_OP_STMIN,
        STP_OP_STMAX,
        STP_OP_STSUM,
        STP_OP_STAVG,
    ]
    .into_iter()
    .enumerate()
    {
        code.push(Insn::new(
            STP_OP_MSTX,
            rv + j as u8,
            b,
            c,
            mit | ((x as i32) << 16),
        ));
    }
    let se_run = if nstr > 0 { se } else { 0 };
    code.push(Insn::new(
        STP_OP_PRINTF,
        0,
        if nlong > 0 { rk } else { rv },
        se_run,
        f,
    ));
    let back = top as i64 - (code.len() as i64 + 1);
    code.push(Insn::new(STP_OP_LOOP, 0, 0, 0, back as i32));
    let end = code.len();
    code[jz].imm = (end - (jz + 1)) as i32;
    Some((rv + 5, 2 * nstr))
}

/// The points of a probe grouped by context, in order of first appearance.
fn groups_of(rp: &super::resolve::RProbe) -> Vec<(u8, Vec<&Point>)> {
    let mut groups: Vec<(u8, Vec<&Point>)> = Vec::new();
    for p in &rp.points {
        match groups.iter_mut().find(|(c, _)| *c == p.ctx) {
            Some((_, v)) => v.push(p),
            None => groups.push((p.ctx, vec![p])),
        }
    }
    groups
}

/// Lowers a checked script into a `Program`; `limits` are the limit values
/// (`abi::STP_LIM_*` order).
pub fn run(
    script: &Script,
    res: &Resolved,
    types: &Types,
    source: &str,
    limits: &[u32],
) -> Result<Program, Vec<Diagnostic>> {
    let lines = LineIndex::new(source);
    // The longest string: MAXSTRINGLEN counts the NUL, as in stap, whose
    // string_t literals are cut (strlcpy) at MAXSTRINGLEN - 1 bytes.
    let maxstr = limits
        .get(abi::STP_LIM_MAXSTRINGLEN as usize)
        .copied()
        .unwrap_or(512)
        .saturating_sub(1) as usize;
    let mut tabs = Tables {
        konsts: Vec::new(),
        kidx: HashMap::new(),
        strings: Vec::new(),
        sidx: HashMap::new(),
        formats: Vec::new(),
        maxstr,
        target_vars: Vec::new(),
        regexes: Vec::new(),
        target_konst: None,
        switch_fmt: None,
        warn_fmt: None,
    };
    let mut prog = Program {
        limits: limits.to_vec(),
        ..Default::default()
    };
    for (i, g) in res.globals.iter().enumerate() {
        let is_stat = res.stats.iter().any(|s| s.global == i);
        prog.globals.push(Global {
            name: g.name.clone(),
            ty: if strglobals::is_string_scalar(res, types, i) {
                GlobalType::Str
            } else {
                GlobalType::Long
            },
            print_at_exit: g.written && !g.used && !is_stat && !g.array,
        });
    }
    let mut errors = Vec::new();
    let maxmap = limits
        .get(abi::STP_LIM_MAXMAPENTRIES as usize)
        .copied()
        .unwrap_or(2048);
    for (i, g) in res.globals.iter().enumerate().filter(|(_, g)| g.array) {
        let capacity = match g.size {
            Some(n) if n <= 0 || n > i64::from(abi::STP_MAX_MAP_ENTRIES) => {
                errors.push(Diagnostic::semantic(
                    format!(
                        "array size {n} of '{}' outside [1, {}]",
                        g.name,
                        abi::STP_MAX_MAP_ENTRIES
                    ),
                    g.span,
                ));
                1
            }
            Some(n) => n as u32,
            None => maxmap,
        };
        let keys = types
            .keys
            .get(i)
            .map(|k| {
                k.iter()
                    .map(|t| {
                        if *t == Ty::Str {
                            ArgKind::Str
                        } else {
                            ArgKind::Int
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        // An array used only where the types pass does not look (a function
        // never called) has no inferred key; no instruction names it, so one
        // long key stands in (a map has 1 to 9 keys: verify.c BAD_MAP).
        let keys = if Vec::is_empty(&keys) {
            vec![ArgKind::Int]
        } else {
            keys
        };
        let stat = res.stats.iter().position(|s| s.global == i && s.array);
        prog.maps.push(MapDecl {
            name: g.name.clone(),
            keys,
            value: if stat.is_some() {
                MapValue::Stat
            } else if types.globals.get(i) == Some(&Ty::Str) {
                MapValue::Str
            } else {
                MapValue::Long
            },
            capacity,
            sized: g.size.is_some(),
            wrap: g.wrap,
            // A statistics array is displayed by the compiler's `end`
            // handler (`stats_at_exit`), not from MAP_READ.
            print_at_exit: g.written && !g.used && stat.is_none(),
            stat: stat.unwrap_or(0) as u32,
        });
    }
    prog.maps.extend(strglobals::decls(res, types));
    for st in &res.stats {
        let g = &res.globals[st.global];
        prog.stats.push(Stat {
            name: g.name.clone(),
            hist: st.hist,
            variance: st.variance,
            shift: st.shift,
            print_at_exit: g.written && !g.used,
            array: st.array,
        });
    }
    // (sort key, probe) pairs: begin/end probes run in sequence order.
    let mut probes: Vec<(i64, Probe)> = Vec::new();
    // Global initialisers: a begin handler ahead of every other.
    let inits: Vec<(usize, i64, Span)> = res
        .globals
        .iter()
        .enumerate()
        .filter_map(|(i, g)| match g.init {
            Some(Literal::Num(v, span)) if v != 0 => Some((i, v, span)),
            _ => None,
        })
        .collect();
    // String initialisers (of string scalars): (map, string index, span).
    let str_inits: Vec<(i32, i32, Span)> = res
        .globals
        .iter()
        .enumerate()
        .filter(|(i, _)| strglobals::is_string_scalar(res, types, *i))
        .filter_map(|(i, g)| match &g.init {
            Some(Literal::Str(v, span)) if !v.is_empty() => {
                Some((strglobals::map_id(res, types, i), tabs.string(v), *span))
            }
            _ => None,
        })
        .collect();
    if !inits.is_empty() || !str_inits.is_empty() {
        let mut code = Vec::new();
        let mut locs = Vec::new();
        for (i, v, span) in &inits {
            let (line, col) = lines.line_col(span.lo);
            let loc = SrcLoc { line, col };
            match i32::try_from(*v) {
                Ok(imm) => code.push(Insn::new(abi::STP_OP_LDI, 0, 0, 0, imm)),
                Err(_) => {
                    let k = tabs.konst(*v);
                    code.push(Insn::new(abi::STP_OP_LDK, 0, 0, 0, k));
                }
            }
            code.push(Insn::new(abi::STP_OP_STG, 0, 0, 0, *i as i32));
            locs.extend([loc, loc]);
        }
        for (map, text, span) in &str_inits {
            let (line, col) = lines.line_col(span.lo);
            code.extend(strglobals::init_code(*map, *text));
            locs.extend([SrcLoc { line, col }; 3]);
        }
        code.push(Insn::new(abi::STP_OP_RET, 0, 0, 0, 0));
        locs.push(locs.last().copied().unwrap_or_default());
        prog.handlers.push(Handler {
            ctx: abi::STP_CTX_BEGIN as u8,
            nregs: 1,
            nsregs: 1,
            code,
            locs,
            probe_point: "begin".into(),
        });
        probes.push((
            i64::MIN,
            Probe {
                kind: abi::STP_PROBE_BEGIN as u8,
                flags: 0,
                handler: 0,
                target: ProbeTarget::None,
                maxactive: 0,
                period_ns: 0,
                display: "begin".into(),
            },
        ));
    }
    // One handler per probe and distinct context (in order of first
    // appearance), then one per used function: their indices are known
    // before any code that calls them is lowered.

    let nprobe_handlers = prog.handlers.len()
        + res
            .probes
            .iter()
            .map(|rp| groups_of(rp).len())
            .sum::<usize>();
    let mut func_handlers = vec![None; res.funcs.len()];
    let mut next = nprobe_handlers as u32;
    for (f, rf) in res.funcs.iter().enumerate() {
        if rf.used {
            func_handlers[f] = Some(next);
            next += 1;
        }
    }
    let cx = Ctx {
        script,
        res,
        types,
        lines: &lines,
        func_handlers: &func_handlers,
    };
    for (pi, rp) in res.probes.iter().enumerate() {
        for (ctx, points) in groups_of(rp) {
            let display = points
                .first()
                .map(|p| p.display.clone())
                .unwrap_or_default();
            let oneshot = points.iter().any(|p| p.oneshot);
            let ntv = tabs.target_vars.len();
            match handler(&cx, &mut tabs, Body::Probe(pi, ctx), display, oneshot) {
                Ok(h) => {
                    let hidx = prog.handlers.len() as u32;
                    for tv in &mut tabs.target_vars[ntv..] {
                        tv.handler = hidx;
                    }
                    prog.handlers.push(h);
                    for p in points {
                        let key = if p.kind == abi::STP_PROBE_BEGIN as u8
                            || p.kind == abi::STP_PROBE_END as u8
                            || p.kind == abi::STP_PROBE_ERROR as u8
                        {
                            p.sequence
                        } else {
                            0
                        };
                        probes.push((
                            key,
                            Probe {
                                kind: p.kind,
                                flags: p.flags,
                                handler: hidx,
                                target: p.target.clone(),
                                maxactive: p.maxactive,
                                period_ns: p.period_ns,
                                display: p.display.clone(),
                            },
                        ));
                    }
                }
                Err(d) => {
                    if !errors.contains(&d) {
                        errors.push(d);
                        // Keep handler indices: functions follow.
                        prog.handlers.push(Handler::default());
                    }
                }
            }
        }
    }
    for (f, rf) in res.funcs.iter().enumerate() {
        let Some(h) = func_handlers[f] else { continue };
        match handler(
            &cx,
            &mut tabs,
            Body::Func(f),
            format!("function {}", rf.name),
            false,
        ) {
            Ok(hd) => {
                let tys = types.locals.get(res.probes.len() + f);
                let nstr = (0..rf.nparams)
                    .filter(|&k| tys.and_then(|t| t.get(k)) == Some(&Ty::Str))
                    .count();
                prog.funcs.push(FuncSig {
                    handler: h,
                    name: rf.name.clone(),
                    nparams: (rf.nparams - nstr) as u8,
                    nsparams: nstr as u8,
                    ret: match types.funcs.get(f) {
                        Some(Ty::Long) => abi::STP_RET_LONG,
                        Some(Ty::Str) => abi::STP_RET_STR,
                        _ => abi::STP_RET_NONE,
                    } as u8,
                });
                prog.handlers.push(hd);
            }
            Err(d) => {
                if !errors.contains(&d) {
                    errors.push(d);
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if let Some(h) = stats_at_exit(&prog, &mut tabs) {
        let hidx = prog.handlers.len() as u32;
        prog.handlers.push(h);
        probes.push((
            i64::MAX,
            Probe {
                kind: abi::STP_PROBE_END as u8,
                flags: 0,
                handler: hidx,
                target: ProbeTarget::None,
                maxactive: 0,
                period_ns: 0,
                display: "end".into(),
            },
        ));
    }
    probes.sort_by_key(|(k, _)| *k);
    prog.probes = probes.into_iter().map(|(_, p)| p).collect();
    prog.konsts = tabs.konsts;
    prog.strings = tabs.strings;
    prog.formats = tabs.formats;
    prog.target_vars = tabs.target_vars;
    prog.regexes = tabs.regexes;
    prog.target_konst = tabs.target_konst.map(|k| k as u32);
    prog.switch_file_format = tabs.switch_fmt.map(|f| f as u32);
    prog.warn_format = tabs.warn_fmt.map(|f| f as u32);
    Ok(prog)
}
