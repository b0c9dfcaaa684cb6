//! Statistics (opcodes.h: Statistics), mirroring kmod/core's statistics
//! helpers: the per-CPU copies, stap's `__stp_stat_add`, the merge over
//! CPUs the extractors read, histogram buckets, and the STAT* opcodes.
use super::*;

impl Machine<'_> {
    /// The statistic instructions (opcodes.h: Statistics). A run without a
    /// copy for its CPU (the CPU id not below the simulated CPUs) stops
    /// with BADOP at its first one, as vm.c does without a stats area.
    pub(super) fn stat_op(&mut self, insn: &Insn) -> Step<()> {
        let op = u32::from(insn.op);
        let k = usize::try_from(insn.imm).map_err(|_| Stop::Hole("statistic id".into()))?;
        let (d, cpu) = self.stat_desc(k)?;
        if op == abi::STP_OP_STADD {
            let v = self.rd(insn.a)? as i64;
            let c = self
                .aggs
                .stats
                .get_mut(cpu)
                .and_then(|s| s.get_mut(k))
                .ok_or_else(|| Stop::Hole("statistic copy".into()))?;
            d.add(c, v);
            return Ok(());
        }
        if op == abi::STP_OP_STCLR {
            // `delete s`: every CPU's copy, as vm.c (the extractors merge
            // them all).
            for c in self.aggs.stats.iter_mut().filter_map(|s| s.get_mut(k)) {
                *c = StatCpu::default();
            }
            return Ok(());
        }
        if (op == abi::STP_OP_STVAR && !d.variance)
            || ((op == abi::STP_OP_STHIST || op == abi::STP_OP_STHISTS || op == abi::STP_OP_STBKT)
                && d.hist == abi::STP_HIST_NONE)
        {
            return Err(Stop::Hole(format!(
                "statistic {k} lacks what op {op} needs"
            )));
        }
        let copies: Vec<&StatCpu> = self.aggs.stats.iter().filter_map(|s| s.get(k)).collect();
        let m = merge(&d, &copies, op == abi::STP_OP_STVAR);
        let v = match op {
            abi::STP_OP_STCOUNT => m.count,
            abi::STP_OP_STSUM => m.sum,
            _ if m.count <= 0 => return Err(Stop::Fault(abi::STP_RTE_EMPTY_AGG, 0)),
            abi::STP_OP_STMIN => m.min,
            abi::STP_OP_STMAX => m.max,
            abi::STP_OP_STAVG => div64(m.sum, m.count),
            abi::STP_OP_STVAR => m.variance,
            abi::STP_OP_STHIST => {
                let payload = d.hist_record(&copies);
                self.emit(abi::STP_REC_HIST, k as u16, &payload);
                return Ok(());
            }
            abi::STP_OP_STHISTS => {
                let mut text = d.hist_text(&copies);
                text.truncate(self.cap as usize);
                return self.swr(insn.a, text);
            }
            _ => {
                // STBKT: the index as unsigned (a negative one is huge).
                let i = self.rd(insn.b)?;
                if i >= u64::from(d.nbuckets) {
                    return Err(Stop::Fault(abi::STP_RTE_HIST_INDEX, 0));
                }
                merged_bucket(&copies, i as usize)
            }
        };
        self.wr(insn.a, v as u64)
    }

    /// Statistic `k` of the image and the CPU whose copy this run uses;
    /// a run without a copy for its CPU stops with BADOP (after an id
    /// that is not the image's, which is a hole).
    pub(super) fn stat_desc(&self, k: usize) -> Step<(RefStat, usize)> {
        let d = *self
            .prog
            .stats
            .get(k)
            .ok_or_else(|| Stop::Hole(format!("statistic {k}")))?;
        let Some(cpu) = self.cpu else {
            return Err(Stop::Fault(abi::STP_RTE_BADOP, 0));
        };
        Ok((d, cpu))
    }
}

// ---------------------------------------------------------------------
// Statistics and associative arrays

/// One statistic of the image (`struct stp_stat_desc`).
#[derive(Debug, Clone, Copy)]
pub(super) struct RefStat {
    /// `abi::STP_HIST_*`.
    pub(super) hist: u32,
    pub(super) shift: u32,
    /// `STP_STAT_F_VARIANCE`: Welford's sums are kept.
    pub(super) variance: bool,
    pub(super) nbuckets: u32,
    pub(super) start: i32,
    pub(super) stop: i32,
    pub(super) interval: i32,
}

/// One CPU's copy of a statistic (`struct stp_stat_cpu` and its buckets),
/// all zero when empty.
#[derive(Debug, Clone, Default)]
pub(super) struct StatCpu {
    pub(super) count: i64,
    pub(super) sum: i64,
    pub(super) min: i64,
    pub(super) max: i64,
    pub(super) avg_s: i64,
    pub(super) m2: i64,
    pub(super) variance_s: i64,
    pub(super) buckets: Vec<i64>,
}

/// stap's `_stp_div64` without the error: 0 for `y == 0`, `-x` for
/// `y == -1`, else truncating division.
pub(super) fn div64(x: i64, y: i64) -> i64 {
    match y {
        0 => 0,
        -1 => x.wrapping_neg(),
        _ => x / y,
    }
}

impl RefStat {
    /// The histogram bucket of `v` (opcodes.h: STADD).
    pub(super) fn bucket(&self, v: i64) -> usize {
        let half = (abi::STP_HIST_LOG_BUCKETS / 2) as usize;
        if self.hist == abi::STP_HIST_LOG {
            // Bit length of |v| (1..=64); bucket 64 holds 0.
            let fls = |x: u64| (64 - x.leading_zeros()) as usize;
            return match v {
                0 => half,
                v if v > 0 => half + fls(v as u64),
                v => half - fls((v as u64).wrapping_neg()),
            };
        }
        // LINEAR: the offset from start wraps; unsigned division.
        let off = (v as u64).wrapping_sub(i64::from(self.start) as u64) as i64;
        if off < 0 {
            return 0;
        }
        let q = off as u64 / u64::from(self.interval as u32);
        let last = u64::from(self.nbuckets.saturating_sub(1));
        if q >= last.saturating_sub(1) {
            last as usize
        } else {
            q as usize + 1
        }
    }

    /// The payload of the `STP_REC_HIST` record STHIST and MSTHIST write:
    /// this histogram's kind and range, then its buckets summed over `cpus`.
    pub(super) fn hist_record(&self, cpus: &[&StatCpu]) -> Vec<u8> {
        let mut payload = Vec::with_capacity(24 + 8 * self.nbuckets as usize);
        payload.push(self.hist as u8);
        payload.extend_from_slice(&[0, 0, 0]);
        payload.extend_from_slice(&self.nbuckets.to_le_bytes());
        payload.extend_from_slice(&self.start.to_le_bytes());
        payload.extend_from_slice(&self.stop.to_le_bytes());
        payload.extend_from_slice(&self.interval.to_le_bytes());
        payload.extend_from_slice(&0u32.to_le_bytes());
        for b in 0..self.nbuckets as usize {
            payload.extend_from_slice(&merged_bucket(cpus, b).to_le_bytes());
        }
        payload
    }

    /// The text STHISTS and MSTHISTS return (before MAXSTRINGLEN): the
    /// histogram of `cpus` drawn by vm-spec's hist.rs (what user space
    /// prints for STHIST's record), not by the C formatter.
    pub(super) fn hist_text(&self, cpus: &[&StatCpu]) -> Vec<u8> {
        let kind =
            vm_spec::program::Hist::from_abi(self.hist, self.start, self.stop, self.interval);
        let h = vm_spec::hist::Histogram {
            kind,
            buckets: (0..self.nbuckets as usize)
                .map(|b| merged_bucket(cpus, b))
                .collect(),
        };
        h.draw().into_bytes()
    }

    /// `s <<< v` on one CPU's copy (stap's `__stp_stat_add`, Welford's
    /// update with a 32-bit delta).
    pub(super) fn add(&self, c: &mut StatCpu, v: i64) {
        let n = c.count;
        let vs = ((v as u64) << self.shift) as i64;
        if n == 0 {
            c.sum = v;
            c.min = v;
            c.max = v;
            c.avg_s = vs;
            c.m2 = 0;
        } else {
            c.sum = c.sum.wrapping_add(v);
            c.max = c.max.max(v);
            c.min = c.min.min(v);
            if self.variance {
                // stap keeps delta in an int: the low 32 bits, signed.
                let delta = i64::from(vs.wrapping_sub(c.avg_s) as u32 as i32);
                let avg = c.avg_s.wrapping_add(div64(delta, n.wrapping_add(1)));
                let m2 = c.m2.wrapping_add(delta.wrapping_mul(vs.wrapping_sub(avg)));
                c.avg_s = avg;
                c.m2 = m2;
                c.variance_s = div64(m2, n);
            }
        }
        c.count = n.wrapping_add(1);
        if self.hist != abi::STP_HIST_NONE {
            let b = self.bucket(v);
            if c.buckets.len() < self.nbuckets as usize {
                c.buckets.resize(self.nbuckets as usize, 0);
            }
            if let Some(x) = c.buckets.get_mut(b) {
                *x = x.wrapping_add(1);
            }
        }
    }
}

/// Bucket `b` summed over the copies `cpus` (a copy without it counts 0).
pub(super) fn merged_bucket(cpus: &[&StatCpu], b: usize) -> i64 {
    cpus.iter().fold(0i64, |s, c| {
        s.wrapping_add(c.buckets.get(b).copied().unwrap_or(0))
    })
}

/// A statistic merged over CPUs (stap's `_stp_stat_get`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Merged {
    pub(super) count: i64,
    pub(super) sum: i64,
    pub(super) min: i64,
    pub(super) max: i64,
    pub(super) variance: i64,
}

/// Merges the copies `cpus` of statistic `d` (every CPU id, in order);
/// @variance only when `variance`.
pub(super) fn merge(d: &RefStat, cpus: &[&StatCpu], variance: bool) -> Merged {
    let mut m = Merged::default();
    for c in cpus {
        if c.count <= 0 {
            continue;
        }
        if m.count == 0 {
            m.min = c.min;
            m.max = c.max;
        }
        m.count = m.count.wrapping_add(c.count);
        m.sum = m.sum.wrapping_add(c.sum);
        m.max = m.max.max(c.max);
        m.min = m.min.min(c.min);
    }
    if !variance || m.count <= 0 {
        return m;
    }
    let avg_s = div64(((m.sum as u64) << d.shift) as i64, m.count);
    let (mut s1, mut s2) = (0u64, 0u64);
    for c in cpus {
        if c.count <= 0 {
            continue;
        }
        let dev = (c.avg_s as u64).wrapping_sub(avg_s as u64);
        s1 = s1.wrapping_add((c.count as u64).wrapping_mul(dev).wrapping_mul(dev));
        s2 = s2.wrapping_add((c.count.wrapping_sub(1) as u64).wrapping_mul(c.variance_s as u64));
    }
    m.variance = div64(s1.wrapping_add(s2) as i64, m.count.wrapping_sub(1)) >> ((2 * d.shift) & 63);
    m
}
