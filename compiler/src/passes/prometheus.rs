//! `probe prometheus`, run after alias expansion. In stap it is a tapset
//! alias for a procfs read probe (`/proc/systemtap/MODULE/prometheus`,
//! polled by a Prometheus exporter). stapvm has no procfs probes: the
//! point is dropped with a warning, so the rest of the script (typically
//! its periodic terminal report, as in SystemTap's profiling/topsys.stp)
//! still runs; a probe left without points is dropped with its body,
//! which is then neither checked nor compiled (its
//! `@prometheus_dump_array*` macros included).
use crate::ast::*;
use crate::diag::{Diagnostic, Diags};

/// The message of the warning.
pub const PROMETHEUS_WARNING: &str =
    "probe prometheus (a procfs endpoint) is not supported: its handler never runs";

/// Drops the `prometheus` points (see the module comment).
pub fn run(script: Script, diags: &mut Diags) -> Script {
    let mut out = script;
    out.items.retain_mut(|it| {
        let Item::Probe(p) = it else {
            return true;
        };
        let before = p.points.len();
        let mut warned = Vec::new();
        p.points.retain(|pt| {
            let is = pt
                .components
                .first()
                .is_some_and(|c| c.name == "prometheus");
            if is {
                warned.push(pt.components[0].span);
            }
            !is
        });
        for span in warned {
            diags.push(Diagnostic::warning(PROMETHEUS_WARNING, span));
        }
        before == 0 || !p.points.is_empty()
    });
    out
}

#[cfg(test)]
mod tests {
    use crate::{compile, Options};

    #[test]
    fn prometheus_probe_is_dropped_with_a_warning() {
        let src = "global n\nprobe timer.s(5) { n++ }\nprobe prometheus { @prometheus_dump_array1(n, \"x\", \"y\") }\n";
        let c = compile("t.stp", src, &Options::default()).expect("compiles");
        assert!(c
            .program
            .probes
            .iter()
            .all(|p| !p.display.contains("prometheus")));
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains(super::PROMETHEUS_WARNING)),
            "{:?}",
            c.warnings
        );
    }
}
