//! Associative arrays and statistics arrays: the map model (insertion
//! numbers, wrap eviction, ARRAY_OVERFLOW), MOPR's arithmetic, foreach
//! iterators, and the M* and MIT* opcodes, as kmod/core/map.c and vm.c
//! define them.
use super::*;
use vm_spec::tables::{imm_hi, imm_lo};

impl Machine<'_> {
    /// The key tuple of a map instruction: long keys from r[b..], string
    /// keys from s[c..], in key order.
    pub(super) fn map_key(&self, d: &RefMapDesc, b: u8, c: u8) -> Step<Vec<Val>> {
        let (mut li, mut si) = (u32::from(b), u32::from(c));
        let mut key = Vec::with_capacity(d.nkeys as usize);
        for k in 0..d.nkeys {
            if d.key_is_str(k) {
                key.push(Val::Str(self.srd(reg(si))?.to_vec()));
                si += 1;
            } else {
                key.push(Val::Int(self.rd(reg(li))? as i64));
                li += 1;
            }
        }
        Ok(key)
    }

    pub(super) fn map_desc(&self, imm: i32) -> Step<(usize, RefMapDesc)> {
        let id = usize::from(imm_lo(imm));
        let d = *self
            .prog
            .maps
            .get(id)
            .ok_or_else(|| Stop::Hole(format!("map {id}")))?;
        if self.aggs.maps.len() <= id {
            return Err(Stop::Hole(format!("map {id} without storage")));
        }
        Ok((id, d))
    }

    /// MGET ... MCLEAR (opcodes.h: Associative arrays). The lock never
    /// fails here (one thread), so no run ends skipped.
    pub(super) fn map_op(&mut self, insn: &Insn) -> Step<()> {
        let op = u32::from(insn.op);
        let (id, d) = self.map_desc(insn.imm)?;
        let wants_str = match op {
            abi::STP_OP_MGET | abi::STP_OP_MSET | abi::STP_OP_MOPR => Some(false),
            abi::STP_OP_MGETS | abi::STP_OP_MSETS => Some(true),
            _ => None,
        };
        if wants_str.is_some_and(|w| w != d.value_str) {
            return Err(Stop::Hole(format!("map {id}: value kind")));
        }
        // MOPR by zero fails before the map is touched.
        let aop = u32::from(imm_hi(insn.imm));
        if op == abi::STP_OP_MOPR
            && (aop == abi::STP_OP_DIV || aop == abi::STP_OP_MOD)
            && self.rd(insn.a)? == 0
        {
            return Err(Stop::Fault(abi::STP_RTE_DIVZERO, 0));
        }
        let key = if op == abi::STP_OP_MCLEAR {
            Vec::new()
        } else {
            self.map_key(&d, insn.b, insn.c)?
        };
        let full = d.full();
        match op {
            abi::STP_OP_MGET => {
                let v = match self.aggs.maps[id].get(&key) {
                    Some(Val::Int(x)) => *x as u64,
                    _ => 0,
                };
                self.wr(insn.a, v)?;
            }
            abi::STP_OP_MGETS => {
                let v = match self.aggs.maps[id].get(&key) {
                    Some(Val::Str(x)) => x.clone(),
                    _ => Vec::new(),
                };
                self.swr(insn.a, v)?;
            }
            abi::STP_OP_MSET => {
                let v = self.rd(insn.a)? as i64;
                let slot = self.aggs.maps[id]
                    .insert(&d, key, Val::Int(0))
                    .ok_or(full)?;
                *slot = Val::Int(v);
            }
            abi::STP_OP_MSETS => {
                let v = self.srd(insn.a)?.to_vec();
                let slot = self.aggs.maps[id]
                    .insert(&d, key, Val::Str(Vec::new()))
                    .ok_or(full)?;
                *slot = Val::Str(v);
            }
            abi::STP_OP_MOPR => {
                let y = self.rd(insn.a)?;
                let slot = self.aggs.maps[id]
                    .insert(&d, key, Val::Int(0))
                    .ok_or(full)?;
                let x = match slot {
                    Val::Int(x) => *x as u64,
                    Val::Str(_) => 0,
                };
                let v = map_arith(aop, x, y).ok_or_else(|| Stop::Hole(format!("MOPR op {aop}")))?;
                *slot = Val::Int(v as i64);
                self.wr(insn.a, v)?;
            }
            abi::STP_OP_MDEL => self.aggs.maps[id].remove(&key),
            abi::STP_OP_MHAS => {
                let v = u64::from(self.aggs.maps[id].get(&key).is_some());
                self.wr(insn.a, v)?;
            }
            _ => {
                // MCLEAR: the insertion counter goes on.
                let m = &mut self.aggs.maps[id];
                m.by_key.clear();
                m.by_seq.clear();
            }
        }
        Ok(())
    }

    /// MSTADD, MSTX, MSTHIST, MSTHISTS and MSTBKT (opcodes.h: Statistics arrays). A run
    /// without a statistics copy for its CPU stops with BADOP first.
    pub(super) fn stat_array_op(&mut self, insn: &Insn) -> Step<()> {
        let op = u32::from(insn.op);
        let (id, d) = self.map_desc(insn.imm)?;
        let k = d
            .stat
            .ok_or_else(|| Stop::Hole(format!("map {id} is no statistics array")))?;
        let (st, cpu) = self.stat_desc(k)?;
        let ncpus = self.aggs.stats.len();
        let key = self.map_key(&d, insn.b, insn.c)?;
        if op == abi::STP_OP_MSTADD {
            let v = self.rd(insn.a)? as i64;
            let full = d.full();
            let m = &mut self.aggs.maps[id];
            let slot = m.insert(&d, key.clone(), Val::Int(0)).ok_or(full)?;
            let n = match slot {
                Val::Int(n) => *n,
                Val::Str(_) => 0,
            };
            *slot = Val::Int(n.wrapping_add(1));
            let seq = m
                .by_key
                .get(&key)
                .copied()
                .ok_or_else(|| Stop::Hole("inserted key".into()))?;
            // A new entry starts from empty copies; forget the samples of
            // entries gone since.
            if n == 0 {
                m.stats.insert(seq, vec![StatCpu::default(); ncpus]);
                let live = &m.by_seq;
                m.stats.retain(|s, _| live.contains_key(s));
            }
            let copies = m
                .stats
                .entry(seq)
                .or_insert_with(|| vec![StatCpu::default(); ncpus]);
            let c = copies
                .get_mut(cpu)
                .ok_or_else(|| Stop::Hole("statistic copy".into()))?;
            st.add(c, v);
            return Ok(());
        }
        let m = &self.aggs.maps[id];
        let copies: Vec<&StatCpu> = m
            .by_key
            .get(&key)
            .and_then(|s| m.stats.get(s))
            .map_or_else(Vec::new, |v| v.iter().collect());
        let x = u32::from(imm_hi(insn.imm));
        let mut g = merge(&st, &copies, x == abi::STP_OP_STVAR);
        // stap's pmap aggregation: samples on one CPU only give that
        // copy's Welford variance unmerged (opcodes.h: MSTX).
        let mut with = copies.iter().filter(|c| c.count > 0);
        if let (Some(c), None) = (with.next(), with.next()) {
            let v = if c.count > 1 { c.variance_s } else { 0 };
            g.variance = v >> ((2 * st.shift) & 63);
        }
        if op == abi::STP_OP_MSTX && x == abi::STP_OP_STCOUNT {
            return self.wr(insn.a, g.count as u64);
        }
        if op == abi::STP_OP_MSTX && x == abi::STP_OP_STSUM {
            return self.wr(insn.a, g.sum as u64);
        }
        if g.count <= 0 {
            return Err(Stop::Fault(abi::STP_RTE_EMPTY_AGG, 0));
        }
        let v = match x {
            _ if op == abi::STP_OP_MSTBKT => {
                // The bucket index in r[a], as unsigned (negative is huge).
                let i = self.rd(insn.a)?;
                if i >= u64::from(st.nbuckets) {
                    return Err(Stop::Fault(abi::STP_RTE_HIST_INDEX, 0));
                }
                merged_bucket(&copies, i as usize)
            }
            _ if op == abi::STP_OP_MSTHIST => {
                let payload = st.hist_record(&copies);
                self.emit(abi::STP_REC_HIST, k as u16, &payload);
                return Ok(());
            }
            _ if op == abi::STP_OP_MSTHISTS => {
                let mut text = st.hist_text(&copies);
                text.truncate(self.cap as usize);
                return self.swr(insn.a, text);
            }
            abi::STP_OP_STMIN => g.min,
            abi::STP_OP_STMAX => g.max,
            abi::STP_OP_STAVG => div64(g.sum, g.count),
            abi::STP_OP_STVAR => g.variance,
            _ => return Err(Stop::Hole(format!("MSTX extractor {x}"))),
        };
        self.wr(insn.a, v as u64)
    }

    /// MITER and MNEXT (opcodes.h: Associative arrays).
    pub(super) fn iter_op(&mut self, insn: &Insn) -> Step<()> {
        let (id, d) = self.map_desc(insn.imm)?;
        let it = usize::from(imm_hi(insn.imm));
        if it >= abi::STP_MAX_ITERS as usize {
            return Err(Stop::Hole(format!("iterator {it}")));
        }
        // Each function frame has its own iterators (opcodes.h), so a
        // function's foreach never touches its callers'.
        let it = self.frames.len() * abi::STP_MAX_ITERS as usize + it;
        if it >= self.aggs.iters.len() {
            self.aggs.iters.resize(it + 1, RefIter::default());
        }
        if u32::from(insn.op) == abi::STP_OP_MITER {
            let limit = self.rd(insn.b)? as i64;
            let sort = u32::from(insn.c);
            let x = (sort >> 4) & 7;
            // An extractor order is a statistic instruction: a run without
            // a copy for its CPU stops with BADOP (opcodes.h).
            if x != 0 && self.cpu.is_none() {
                return Err(Stop::Fault(abi::STP_RTE_BADOP, 0));
            }
            let m = &self.aggs.maps[id];
            // An extractor order (SORT bits 4..6, a statistics array's
            // value column): each entry's merged statistic's extractor
            // value becomes the value it sorts by.
            let keyed: Vec<Val> = if x != 0 {
                let k = d
                    .stat
                    .ok_or_else(|| Stop::Hole("extractor order on a plain map".into()))?;
                let st = *self
                    .prog
                    .stats
                    .get(k)
                    .ok_or_else(|| Stop::Hole(format!("statistic {k}")))?;
                m.by_seq
                    .keys()
                    .map(|s| {
                        let c = m.stats.get(s).map_or(&[][..], |v| v.as_slice());
                        let g = merge(&st, &c.iter().collect::<Vec<_>>(), false);
                        Val::Int(match x {
                            abi::STP_SORTX_SUM => g.sum,
                            abi::STP_SORTX_MIN => g.min,
                            abi::STP_SORTX_MAX => g.max,
                            abi::STP_SORTX_AVG => div64(g.sum, g.count),
                            _ => g.count,
                        })
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let mut ents: Vec<(u64, &[Val], &Val)> = m
                .by_seq
                .iter()
                .enumerate()
                .map(|(i, (s, (k, v)))| (*s, k.as_slice(), keyed.get(i).unwrap_or(v)))
                .collect();
            if sort != 0 {
                ents.sort_by(|a, b| ent_cmp(sort & 0x8f, *a, *b));
            }
            let count = usize::try_from(limit).map_or(0, |l| l.min(ents.len()));
            let seqs = ents.iter().map(|e| e.0).collect();
            self.aggs.iters[it] = RefIter {
                map: Some(id as u32),
                seqs,
                pos: 0,
                count,
            };
            return Ok(());
        }
        // MNEXT: an iterator filled for another map (or never) is BADOP.
        if self.aggs.iters[it].map != Some(id as u32) {
            return Err(Stop::Fault(abi::STP_RTE_BADOP, 0));
        }
        let mut found: Option<Vec<Val>> = None;
        {
            let (iters, maps) = (&mut self.aggs.iters, &self.aggs.maps);
            let x = &mut iters[it];
            while x.pos < x.count {
                let s = x.seqs.get(x.pos).copied();
                x.pos += 1;
                // Entries deleted or replaced since MITER are passed over.
                if let Some((k, _)) = s.and_then(|s| maps[id].by_seq.get(&s)) {
                    found = Some(k.clone());
                    break;
                }
            }
        }
        let (mut li, mut si) = (u32::from(insn.b), u32::from(insn.c));
        for k in 0..d.nkeys {
            let v = found.as_ref().and_then(|f| f.get(k as usize));
            if d.key_is_str(k) {
                let s = match v {
                    Some(Val::Str(s)) => s.clone(),
                    _ => Vec::new(),
                };
                self.swr(reg(si), s)?;
                si += 1;
            } else {
                let x = match v {
                    Some(Val::Int(x)) => *x as u64,
                    _ => 0,
                };
                self.wr(reg(li), x)?;
                li += 1;
            }
        }
        self.wr(insn.a, u64::from(found.is_some()))
    }
}

/// MOPR's arithmetic: `x op y` as the opcode of that number computes it
/// (`y != 0` for DIV and MOD, checked before); `None` for another opcode.
pub(super) fn map_arith(op: u32, x: u64, y: u64) -> Option<u64> {
    Some(match op {
        abi::STP_OP_ADD => x.wrapping_add(y),
        abi::STP_OP_SUB => x.wrapping_sub(y),
        abi::STP_OP_MUL => x.wrapping_mul(y),
        abi::STP_OP_DIV => (x as i64).wrapping_div(y as i64) as u64,
        abi::STP_OP_MOD => (x as i64).wrapping_rem(y as i64) as u64,
        abi::STP_OP_AND => x & y,
        abi::STP_OP_OR => x | y,
        abi::STP_OP_XOR => x ^ y,
        abi::STP_OP_SHL => x << (y & 63),
        abi::STP_OP_SHR => ((x as i64) >> (y & 63)) as u64,
        _ => return None,
    })
}

/// One associative array of the image (`struct stp_map_desc`).
#[derive(Debug, Clone, Copy)]
pub(super) struct RefMapDesc {
    pub(super) nkeys: u32,
    /// Bit i: key i is a string.
    pub(super) str_mask: u32,
    pub(super) value_str: bool,
    pub(super) wrap: bool,
    pub(super) sized: bool,
    pub(super) capacity: u32,
    /// A statistics array (`STP_MAPV_STAT`): its statistic's index.
    pub(super) stat: Option<usize>,
}

impl RefMapDesc {
    /// The fault of an insertion into this map when it is full:
    /// ARRAY_SIZE for a sized array, else ARRAY_OVERFLOW, with the capacity.
    pub(super) fn full(&self) -> Stop {
        Stop::Fault(
            if self.sized {
                abi::STP_RTE_ARRAY_SIZE
            } else {
                abi::STP_RTE_ARRAY_OVERFLOW
            },
            u64::from(self.capacity),
        )
    }

    pub(super) fn key_is_str(&self, k: u32) -> bool {
        self.str_mask & (1 << k) != 0
    }
}

/// The model of one map: entries by key and in insertion order. `seq`
/// numbers insertions from 1 and is never reset (map.c: `m->seq`), so a
/// key deleted and inserted again is a new entry.
#[derive(Debug, Clone, Default)]
pub(super) struct RefMap {
    pub(super) by_key: BTreeMap<Vec<Val>, u64>,
    pub(super) by_seq: BTreeMap<u64, (Vec<Val>, Val)>,
    pub(super) seq: u64,
    /// A statistics array's per-entry statistic, by insertion number:
    /// one copy per CPU id (absent: all zero).
    pub(super) stats: BTreeMap<u64, Vec<StatCpu>>,
}

impl RefMap {
    pub(super) fn get(&self, k: &[Val]) -> Option<&Val> {
        let s = self.by_key.get(k)?;
        self.by_seq.get(s).map(|(_, v)| v)
    }

    pub(super) fn remove(&mut self, k: &[Val]) {
        if let Some(s) = self.by_key.remove(k) {
            self.by_seq.remove(&s);
        }
    }

    /// The entry of `k`, inserted with `zero` when absent; a full wrap
    /// map first evicts its oldest entry. `None` when full.
    pub(super) fn insert(&mut self, d: &RefMapDesc, k: Vec<Val>, zero: Val) -> Option<&mut Val> {
        let s = match self.by_key.get(&k) {
            Some(&s) => s,
            None => {
                if self.by_key.len() >= d.capacity as usize {
                    if !d.wrap {
                        return None;
                    }
                    let (_, (old, _)) = self.by_seq.pop_first()?;
                    self.by_key.remove(&old);
                }
                self.seq += 1;
                self.by_key.insert(k.clone(), self.seq);
                self.by_seq.insert(self.seq, (k, zero));
                self.seq
            }
        };
        self.by_seq.get_mut(&s).map(|(_, v)| v)
    }
}

/// One foreach iterator: the insertion numbers of the entries MITER saw,
/// in iteration order, and how far MNEXT got.
#[derive(Debug, Clone, Default)]
pub(super) struct RefIter {
    pub(super) map: Option<u32>,
    pub(super) seqs: Vec<u64>,
    pub(super) pos: usize,
    pub(super) count: usize,
}

/// Statistics, maps and iterators of a session. Iterators are one set per
/// frame level for the session (`STP_MAX_ITERS` per level, the level's
/// first at `depth * STP_MAX_ITERS`), as `HostSession` has them (the
/// kernel has one per CPU; MNEXT only follows a MITER of the same frame,
/// so that cannot differ).
#[derive(Debug, Clone, Default)]
pub(super) struct Aggs {
    /// `[cpu][statistic]`.
    pub(super) stats: Vec<Vec<StatCpu>>,
    pub(super) maps: Vec<RefMap>,
    pub(super) iters: Vec<RefIter>,
    /// STOK's tokenizer (the session's one CPU, as `HostSession`): its
    /// copy of the input and where the next token starts (`None`: no token
    /// left).
    pub(super) tok: (Vec<u8>, Option<usize>),
}

/// Compares column `sort & 15` of two entries as map.c's `ent_cmp`:
/// integers signed, strings as SCMP, bit 7 descending, ties by insertion.
pub(super) fn ent_cmp(
    sort: u32,
    a: (u64, &[Val], &Val),
    b: (u64, &[Val], &Val),
) -> std::cmp::Ordering {
    let col = sort & 15;
    let pick = |e: (u64, &[Val], &Val)| -> Option<Val> {
        if col == 15 {
            Some(e.2.clone())
        } else {
            e.1.get(col.checked_sub(1)? as usize).cloned()
        }
    };
    let c = match (pick(a), pick(b)) {
        (Some(Val::Int(x)), Some(Val::Int(y))) => x.cmp(&y),
        (Some(Val::Str(x)), Some(Val::Str(y))) => x.cmp(&y),
        _ => std::cmp::Ordering::Equal,
    };
    let c = if sort & 0x80 != 0 { c.reverse() } else { c };
    c.then(a.0.cmp(&b.0))
}
