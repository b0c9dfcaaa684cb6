//! `perf.*` probe points: stap's names for the generic perf events
//! (`perf.sw.NAME`, `perf.hw.NAME`, `perf.hw_cache.ID.OP.RESULT`) and the
//! raw form `perf.type(T).config(C)`, each with an optional `.sample(N)`
//! (events between two hits; stap's default 1000000) and `.process`
//! (count in the target process only). They become `STP_PROBE_PERF`
//! points (abi.h), verified as timers' handlers.
use super::probes::lit_num;
use super::*;
use vm_spec::program::PerfEvent;

/// stap's default sample period (events between two hits).
const DEFAULT_SAMPLE: u64 = 1_000_000;

/// `perf.sw.NAME`: the software events (`PERF_COUNT_SW_*`), by config.
pub const SW_EVENTS: &[&str] = &[
    "cpu_clock",
    "task_clock",
    "page_faults",
    "context_switches",
    "cpu_migrations",
    "page_faults_min",
    "page_faults_maj",
    "alignment_faults",
    "emulation_faults",
];

/// `perf.hw.NAME`: the generalized hardware events (`PERF_COUNT_HW_*`),
/// by config.
pub const HW_EVENTS: &[&str] = &[
    "cpu_cycles",
    "instructions",
    "cache_references",
    "cache_misses",
    "branch_instructions",
    "branch_misses",
    "bus_cycles",
    "stalled_cycles_frontend",
    "stalled_cycles_backend",
    "ref_cpu_cycles",
];

/// `perf.hw_cache.ID.OP.RESULT`: the caches (`PERF_COUNT_HW_CACHE_*`).
pub const CACHE_IDS: &[&str] = &["l1d", "l1i", "ll", "dtlb", "itlb", "bpu", "node"];
/// The cache operations.
pub const CACHE_OPS: &[&str] = &["read", "write", "prefetch"];
/// The cache results.
pub const CACHE_RESULTS: &[&str] = &["access", "miss"];

fn index_of(names: &[&str], name: &str) -> Option<u64> {
    names.iter().position(|n| *n == name).map(|i| i as u64)
}

/// Why the module's verifier would refuse the event (abi.h: the generic
/// types and the configs the kernel defines), or `None`.
fn event_refusal(event_type: u32, config: u64) -> Option<String> {
    let max = match event_type {
        abi::STP_PERF_TYPE_HARDWARE => abi::STP_PERF_HW_MAX as u64,
        abi::STP_PERF_TYPE_SOFTWARE => abi::STP_PERF_SW_MAX as u64,
        abi::STP_PERF_TYPE_HW_CACHE => {
            let ok = (config & 0xff) < abi::STP_PERF_CACHE_ID_MAX as u64
                && ((config >> 8) & 0xff) < abi::STP_PERF_CACHE_OP_MAX as u64
                && ((config >> 16) & 0xff) < abi::STP_PERF_CACHE_RESULT_MAX as u64
                && config >> 24 == 0;
            return (!ok).then(|| format!("perf hw_cache config {config:#x} is not a cache event"));
        }
        abi::STP_PERF_TYPE_RAW => return None,
        t => {
            return Some(format!(
                "perf event type {t} is not supported: hardware (0), software (1), \
                 hw_cache (3) and raw (4) are (tracepoints and breakpoints have probe points \
                 of their own)"
            ))
        }
    };
    (config >= max).then(|| format!("perf event type {event_type} has no config {config}"))
}

impl Resolver<'_> {
    /// Resolves `perf.…` (`c[0]` is `perf`); `None` after reporting an
    /// error (none for a mismatch of an optional point).
    pub(super) fn perf_point(
        &mut self,
        mut p: Point,
        c: &[Component],
        optional: bool,
    ) -> Option<Point> {
        let mismatch = |r: &mut Self, at: &Component| r.mismatch_unless_optional(c, at, optional);
        let name = |i: usize| c.get(i).map(|x| x.name.as_str());
        let no_arg = |i: usize| c.get(i).is_some_and(|x| x.arg.is_none());
        // The event, and the index of the first modifier component.
        let (event_type, config, rest) = match name(1) {
            Some(kind @ ("sw" | "hw")) if no_arg(1) => {
                let (table, ty) = if kind == "sw" {
                    (SW_EVENTS, abi::STP_PERF_TYPE_SOFTWARE)
                } else {
                    (HW_EVENTS, abi::STP_PERF_TYPE_HARDWARE)
                };
                match c.get(2) {
                    Some(e) if e.arg.is_none() => match index_of(table, &e.name) {
                        Some(cfg) => (ty, cfg, 3),
                        None => return mismatch(self, e),
                    },
                    Some(e) => return mismatch(self, e),
                    None => return mismatch(self, &c[1]),
                }
            }
            Some("hw_cache") if no_arg(1) => {
                let mut cfg = 0u64;
                for (i, table) in [CACHE_IDS, CACHE_OPS, CACHE_RESULTS].iter().enumerate() {
                    let Some(x) = c.get(2 + i) else {
                        return mismatch(self, &c[1 + i]);
                    };
                    match index_of(table, &x.name) {
                        Some(v) if x.arg.is_none() => cfg |= v << (8 * i),
                        _ => return mismatch(self, x),
                    }
                }
                (abi::STP_PERF_TYPE_HW_CACHE, cfg, 5)
            }
            Some("type") => {
                let ty = match lit_num(&c[1]) {
                    Some(t) if (0..=u32::MAX as i64).contains(&t) => t as u32,
                    _ => return mismatch(self, &c[1]),
                };
                match c.get(2) {
                    Some(x) if x.name == "config" => match lit_num(x) {
                        Some(cfg) if cfg >= 0 => (ty, cfg as u64, 3),
                        _ => return mismatch(self, x),
                    },
                    Some(x) => return mismatch(self, x),
                    None => return mismatch(self, &c[1]),
                }
            }
            _ => return mismatch(self, c.get(1).unwrap_or(&c[0])),
        };
        if let Some(why) = event_refusal(event_type, config) {
            self.err(
                Diagnostic::semantic("while resolving probe point", c[1].span).with_note(why, None),
            );
            return None;
        }
        let mut sample = DEFAULT_SAMPLE;
        let mut i = rest;
        if let Some(x) = c.get(i).filter(|x| x.name == "sample") {
            match lit_num(x) {
                Some(n) if n > 0 && n as u64 <= abi::STP_MAX_PERF_PERIOD => sample = n as u64,
                Some(_) => {
                    self.err(
                        Diagnostic::semantic("while resolving probe point", x.span).with_note(
                            format!(
                                "sample value out of range [1, {}]",
                                abi::STP_MAX_PERF_PERIOD
                            ),
                            None,
                        ),
                    );
                    return None;
                }
                None => return mismatch(self, x),
            }
            i += 1;
        }
        let mut flags = 0u32;
        if let Some(x) = c.get(i).filter(|x| x.name == "process") {
            if x.arg.is_some() {
                self.unsupported(
                    "perf events of one executable (.process(\"PATH\")): user-space process \
                     tracking comes with user-space probes; .process counts in the target \
                     process (-x PID, -c CMD)",
                    x.span,
                );
                return None;
            }
            flags |= abi::STP_PROBE_F_PERF_TASK;
            i += 1;
        }
        if let Some(x) = c.get(i).filter(|x| x.name == "counter") {
            self.unsupported("perf counters (.counter(\"NAME\") and @perf)", x.span);
            return None;
        }
        if let Some(x) = c.get(i) {
            return mismatch(self, x);
        }
        let clock = event_type == abi::STP_PERF_TYPE_SOFTWARE
            && (config == abi::STP_PERF_SW_CPU_CLOCK as u64
                || config == abi::STP_PERF_SW_TASK_CLOCK as u64);
        if clock && !(abi::STP_MIN_TIMER_NS as u64..=abi::STP_MAX_TIMER_NS).contains(&sample) {
            let at = c.get(rest).unwrap_or(&c[0]);
            self.err(
                Diagnostic::semantic("while resolving probe point", at.span).with_note(
                    format!(
                        "a clock event's sample period counts nanoseconds: it must be in [{}, {}]",
                        abi::STP_MIN_TIMER_NS,
                        abi::STP_MAX_TIMER_NS
                    ),
                    None,
                ),
            );
            return None;
        }
        p.set_kind(abi::STP_PROBE_PERF);
        p.period_ns = sample;
        p.flags |= flags as u8;
        p.perf = Some(PerfEvent {
            event_type,
            config,
            pid: 0,
        });
        Some(p)
    }
}
