//! Statistics: the STAT index of a scalar statistic, the element of a
//! statistics array, a histogram's buckets (STBKT, MSTBKT), and stap's display at
//! exit of the statistics written and never read (the `end` handler
//! `stats_at_exit` makes).
use super::*;
use vm_spec::tables::imm_pack;

impl Gen<'_> {
    /// The STAT index of the statistic `a` names.
    pub(super) fn stat_of(&self, a: &Expr) -> Option<i32> {
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
    pub(super) fn stat_elem(&self, a: &Expr) -> Option<usize> {
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

    /// The histogram of `@hist_*(s)`, `s` a scalar statistic or an element
    /// `a[k...]` of a statistics array: its STATS index, number of buckets
    /// and, for an element, the array's global.
    pub(super) fn hist_of(&self, stat: &Expr) -> Option<(i32, i64, Option<usize>)> {
        let ExprKind::Stat { op, args } = &stat.kind else {
            return None;
        };
        if !op.starts_with("@hist") {
            return None;
        }
        let a = args.first()?;
        let (st, elem) = match self.stat_elem(a) {
            Some(g) => {
                let st = self
                    .res
                    .stats
                    .iter()
                    .position(|s| s.global == g && s.array)?;
                (st as i32, Some(g))
            }
            None => (self.stat_of(a)?, None),
        };
        let nb = self.res.stats.get(st as usize)?.hist.nbuckets();
        Some((st, i64::from(nb), elem))
    }

    /// `@hist_*(s)[i]` (and `i in @hist_*(s)`, the same value in stap):
    /// bucket `i`'s count into `dst`, STBKT for a scalar statistic,
    /// MSTBKT for an array element (its keys in runs, `i` in `dst`).
    pub(super) fn hist_bucket(&mut self, base: &Expr, keys: &[Option<Expr>], dst: u8) {
        let (Some((st, _, elem)), [Some(k)]) = (self.hist_of(base), keys) else {
            self.fail("not supported yet: a bucket of this histogram form");
            return;
        };
        let ExprKind::Stat { args, .. } = &base.kind else {
            return;
        };
        match (elem, args.first().map(|a| &a.kind)) {
            (Some(g), Some(ExprKind::Index { keys: akeys, .. })) => {
                let mark = self.mark();
                let (rb, sc) = self.key_runs(g, akeys);
                self.int_into(k, dst);
                let map = self.map_id(g);
                self.emit(abi::STP_OP_MSTBKT, dst, rb, sc, map);
                self.release(mark);
            }
            _ => {
                let i = self.int(k);
                self.emit(abi::STP_OP_STBKT, dst, i, 0, st);
            }
        }
    }
}

/// stap's display of the statistics written and never read, as the `end`
/// probe it synthesises (after every other): `name @count=N @min=N @max=N
/// @sum=N @avg=N`, or `name @count=0x0` when empty.
pub(super) fn stats_at_exit(prog: &Program, tabs: &mut Tables) -> Option<Handler> {
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
            imm_pack(mit as u16, x as u16),
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
