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
//! and the limit values. Runs next: `verify` (compiler/src/verify.rs, the
//! module's verifier on the stand-in image); the result then goes to the
//! `.stpb` writer and, at load time, to `vm_spec::image::build` and the
//! kernel's verifier.
//!
//! This file holds the lowering state (`Gen`, one per handler), its
//! register, jump and source-location primitives, the setup of one handler
//! (`handler`) and the entry point `run`. Each kind of construct is lowered
//! in a file of its own: `ints.rs`, `strings.rs` (with `operands.rs`, the
//! operands of a binary operator and their order), `conds.rs`, `calls.rs`,
//! `assign.rs`, `printing.rs`, `stmts.rs`, `maps.rs` (arrays), `foreach.rs`,
//! `stats.rs` (statistics and histograms), `strglobals.rs` (string
//! globals), `tapset.rs` and `tier1.rs` (built-ins that need code of their
//! own) and `trycatch.rs`; `tables.rs` holds the program's shared tables.
use super::resolve::{Builtin, Point, Ref, Resolved};
use super::types::{Ty, Types};
use crate::ast::*;
use crate::diag::{Diagnostic, LineIndex};
use rustc_hash::FxHashMap;
use vm_spec::abi;
use vm_spec::program::*;

mod assign;
mod calls;
mod conds;
mod foreach;
mod ints;
mod maps;
mod operands;
mod printing;
mod stats;
mod stmts;
mod strglobals;
mod strings;
mod tables;
mod tapset;
mod tier1;
mod trycatch;

use ints::binop;
use stats::stats_at_exit;
use tables::Tables;

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
    /// `abi::STP_CTX_*` of the handler.
    ctx: u8,
    code: Vec<Insn>,
    locs: Vec<SrcLoc>,
    cur: SrcLoc,
    /// Register of each local (integer or string file, by its type).
    local_reg: Vec<u8>,
    next_r: u8,
    next_s: u8,
    max_r: u8,
    max_s: u8,
    /// The first integer and string registers above the locals: a
    /// destination at or above them is a temporary that nothing else
    /// reads, so an operator may evaluate its first operand into it.
    temps_r: u8,
    temps_s: u8,
    /// Temporaries an expression needs above its destination (by
    /// expression id), for the order of a pure operator's operands: what
    /// this handler computed (`NeedCache`, its entries of this `stamp`).
    need: &'a mut NeedCache,
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

/// The `need` of each expression, by id, for one handler at a time: an
/// entry counts only if it has the stamp of the handler being lowered, so
/// no handler sees another's and none has to clear it.
struct NeedCache {
    /// (stamp, temporaries) by expression id.
    slots: Vec<(u32, u32)>,
    /// The stamp of the handler being lowered (never 0).
    stamp: u32,
}

impl NeedCache {
    fn get(&self, id: u32) -> Option<u32> {
        match self.slots.get(id as usize) {
            Some(&(stamp, n)) if stamp == self.stamp => Some(n),
            _ => None,
        }
    }

    fn insert(&mut self, id: u32, n: u32) {
        let i = id as usize;
        if i >= self.slots.len() {
            self.slots.resize(i + 1, (0, 0));
        }
        self.slots[i] = (self.stamp, n);
    }
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

    /// The first free integer and string registers: what [`Gen::release`]
    /// frees the temporaries allocated after it back to.
    fn mark(&self) -> (u8, u8) {
        (self.next_r, self.next_s)
    }

    /// Frees the temporaries allocated since `mark` (from [`Gen::mark`]).
    fn release(&mut self, mark: (u8, u8)) {
        self.next_r = mark.0;
        self.next_s = mark.1;
    }

    fn ty(&self, e: &Expr) -> Ty {
        self.types
            .exprs
            .get(e.id as usize)
            .copied()
            .unwrap_or_default()
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
    need: &mut NeedCache,
    body: Body,
    probe_point: String,
    oneshot: bool,
) -> Result<Handler, Diagnostic> {
    let (script, res, types, lines) = (cx.script, cx.res, cx.types, cx.lines);
    need.stamp += 1;
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
        ctx,
        code: Vec::with_capacity(64),
        locs: Vec::with_capacity(64),
        cur: SrcLoc::default(),
        local_reg: Vec::new(),
        next_r: 0,
        next_s: 0,
        max_r: 0,
        max_s: 0,
        temps_r: 0,
        temps_s: 0,
        need,
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
    (g.temps_r, g.temps_s) = g.mark();
    g.span = span;
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
        kidx: FxHashMap::default(),
        strings: Vec::new(),
        sidx: FxHashMap::default(),
        formats: Vec::new(),
        fidx: FxHashMap::default(),
        printf_kinds: FxHashMap::default(),
        maxstr,
        target_vars: Vec::new(),
        regexes: Vec::new(),
        regex_groups: res.refs.iter().any(|r| {
            matches!(
                r,
                Ref::Builtin(Builtin::Matched | Builtin::MatchedStr | Builtin::Ngroups)
            )
        }),
        target_konst: None,
        tz_konsts: None,
        loader_konsts: None,
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
                randomize: 0,
                perf: None,
                watch: None,
                netfilter: None,
                uprobe: None,
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
    let mut need = NeedCache {
        slots: vec![(0, 0); script.nexprs as usize],
        stamp: 0,
    };
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
            match handler(
                &cx,
                &mut tabs,
                &mut need,
                Body::Probe(pi, ctx),
                display,
                oneshot,
            ) {
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
                                randomize: p.randomize,
                                perf: p.perf,
                                watch: p.watch,
                                netfilter: p.netfilter,
                                uprobe: None,
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
            &mut need,
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
                randomize: 0,
                perf: None,
                watch: None,
                netfilter: None,
                uprobe: None,
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
    prog.tz_konsts = tabs.tz_konsts.map(|ks| ks.map(|k| k as u32));
    prog.loader_konsts = tabs.loader_konsts.map(|ks| ks.map(|k| k as u32));
    prog.switch_file_format = tabs.switch_fmt.map(|f| f as u32);
    prog.warn_format = tabs.warn_fmt.map(|f| f as u32);
    Ok(prog)
}
