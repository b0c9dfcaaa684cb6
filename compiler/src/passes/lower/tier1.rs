//! Lowering of the tier-1 tapset built-ins that need code of their own (a
//! child module of `lower`): `abort()` (the ABORT instruction: exit(),
//! then the run ends at once, whatever catches are armed), `warn(msg)` (a
//! PRINTF of `Program::warn_format`, which user space prints on stderr as
//! `WARNING: msg`) and `probe_type()` (a string constant of the handler:
//! stap's name of its probe points' low-level kind).
use super::*;

/// stap's `probe_type()` for a probe point of kind `kind` (`abi::STP_PROBE_*`)
/// and flags `flags` (context.stp: the derived probe's `stp_probe_type_*`).
/// Timers are stap's hrtimer probes (`timer.s/ms/us/ns/hz`) or its
/// jiffies timers (`timer.jiffies`: `timer`, though stapvm arms an
/// hrtimer of N jiffies); `timer.profile` is stap's `perf.sw.cpu_clock` fallback,
/// which every kernel without the old profiling hook (all supported ones)
/// takes, and `perf.*` are perf events too; syscall probes are kprobes,
/// `syscall_any` a tracepoint.
pub fn probe_type_name(kind: u8, flags: u8) -> &'static str {
    match u32::from(kind) {
        abi::STP_PROBE_BEGIN | abi::STP_PROBE_END | abi::STP_PROBE_ERROR => "begin_end",
        abi::STP_PROBE_TIMER if u32::from(flags) & abi::STP_PROBE_F_PROFILE != 0 => "perf_event",
        abi::STP_PROBE_TIMER if u32::from(flags) & abi::STP_PROBE_F_JIFFIES != 0 => "timer",
        abi::STP_PROBE_TIMER => "hrtimer",
        abi::STP_PROBE_KPROBE => "kprobe",
        abi::STP_PROBE_KRETPROBE => "kretprobe",
        abi::STP_PROBE_TRACEPOINT => "kernel_tracepoint",
        abi::STP_PROBE_PERF => "perf_event",
        // stap's procfs probes; input.* is a procfs write there too.
        abi::STP_PROBE_PROCFS_READ
        | abi::STP_PROBE_PROCFS_WRITE
        | abi::STP_PROBE_INPUT_CHAR
        | abi::STP_PROBE_INPUT_LINE => "procfs",
        abi::STP_PROBE_NETFILTER => "netfilter",
        _ => "",
    }
}

impl Gen<'_> {
    /// Lowers `abort()`, `warn(msg)` or `probe_type()`; the result goes to
    /// `dst` or `sdst` by its kind (see `resolve::Builtin`).
    pub(super) fn call_tier1(
        &mut self,
        b: Builtin,
        args: &[Expr],
        dst: Option<u8>,
        sdst: Option<u8>,
    ) {
        use abi::*;
        match b {
            Builtin::Abort => {
                self.emit(STP_OP_ABORT, 0, 0, 0, 0);
                // Never read (the run ended), but the register is written.
                if let Some(d) = dst {
                    self.load_int(d, 0);
                }
            }
            Builtin::Warn => {
                let Some(a) = args.first() else { return };
                let s = self.str(a);
                let f = self.tabs.warn_format();
                self.emit(STP_OP_PRINTF, 0, 0, s, f);
                if let Some(d) = dst {
                    self.load_int(d, 0);
                }
            }
            Builtin::ProbeType => self.point_const(
                sdst,
                |x| probe_type_name(x.kind, x.flags),
                "not supported yet: probe_type() in a probe whose points are of several kinds",
                "not supported yet: probe_type() in a function",
            ),
            _ => self.fail("internal error: not a tier-1 built-in"),
        }
    }
}
