//! The running kernel's tracepoints, for `kernel.trace` points the loader
//! expands: globs (`kernel.trace("sched_*")`) and `SYSTEM:NAME`
//! (`kernel.trace("sched:sched_switch")`, `kernel.trace("block:*")`).
//! The list comes from tracefs's `available_events` (`system:name` lines);
//! without tracefs, from the `__tracepoint_NAME` data symbols of
//! /proc/kallsyms, which know no systems (a `SYSTEM:` part is then not
//! checked: tracepoint names are unique kernel-wide symbols anyway).
use crate::kallsyms::glob;
use std::io::BufRead;

/// tracefs's list of events, where it may be mounted.
const AVAILABLE_EVENTS: &[&str] = &[
    "/sys/kernel/tracing/available_events",
    "/sys/kernel/debug/tracing/available_events",
];

/// The symbol prefix of a tracepoint's `struct tracepoint`.
const TRACEPOINT_SYMBOL: &str = "__tracepoint_";

/// One tracepoint: its system when known, and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracepoint {
    /// `sched` of `sched:sched_switch`; `None` from kallsyms.
    pub system: Option<String>,
    /// `sched_switch`.
    pub name: String,
}

/// Does a `kernel.trace` name need expanding (a glob or a `SYSTEM:`)?
pub fn needs_expansion(name: &str) -> bool {
    name.contains(['*', '?', '[', ':'])
}

/// Parses `available_events` text.
pub fn parse_available_events(text: &str) -> Vec<Tracepoint> {
    text.lines()
        .filter_map(|l| {
            let (s, n) = l.trim().split_once(':')?;
            Some(Tracepoint {
                system: Some(s.to_string()),
                name: n.to_string(),
            })
        })
        .collect()
}

/// The tracepoints of a kallsyms text (`ADDR TYPE NAME [MODULE]`).
pub fn scan_kallsyms<R: BufRead>(r: R) -> Vec<Tracepoint> {
    let mut out: Vec<Tracepoint> = r
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, ty, name) = (f.next()?, f.next()?, f.next()?);
            if !matches!(ty, "d" | "D") {
                return None;
            }
            Some(Tracepoint {
                system: None,
                name: name.strip_prefix(TRACEPOINT_SYMBOL)?.to_string(),
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out.dedup();
    out
}

/// The running kernel's tracepoints that `names` (the program's
/// `kernel.trace` names and patterns) need: tracefs's events, plus the
/// kallsyms ones when tracefs is absent or lacks a plain name (tracepoints
/// without a trace event, `DECLARE_TRACE`, are only there). Empty when
/// neither source is readable.
pub fn running_for<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<Tracepoint> {
    let mut v: Vec<Tracepoint> = AVAILABLE_EVENTS
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .map(|t| parse_available_events(&t))
        .find(|v| !v.is_empty())
        .unwrap_or_default();
    let missing = v.is_empty()
        || names
            .into_iter()
            .any(|n| !needs_expansion(n) && !v.iter().any(|t| t.name == n));
    if missing {
        if let Ok(f) = std::fs::File::open(crate::kallsyms::KALLSYMS_PATH) {
            // Only the ones tracefs does not list, so a `SYSTEM:` is
            // still checked for those it does.
            let extra: Vec<Tracepoint> = scan_kallsyms(std::io::BufReader::new(f))
                .into_iter()
                .filter(|k| !v.iter().any(|t| t.name == k.name))
                .collect();
            v.extend(extra);
        }
    }
    v
}

/// The names of the tracepoints `pattern` (`[SYSTEM:]NAME`, each part a
/// glob) matches, sorted and deduplicated.
pub fn matches(pattern: &str, all: &[Tracepoint]) -> Vec<String> {
    let (sys, name) = match pattern.split_once(':') {
        Some((s, n)) => (Some(s), n),
        None => (None, pattern),
    };
    let mut out: Vec<String> = all
        .iter()
        .filter(|t| glob(name, &t.name))
        .filter(|t| match (sys, &t.system) {
            (Some(s), Some(ts)) => glob(s, ts),
            _ => true,
        })
        .map(|t| t.name.clone())
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events() -> Vec<Tracepoint> {
        parse_available_events(
            "sched:sched_switch\nsched:sched_wakeup\nblock:block_rq_issue\nirq:irq_handler_entry\n",
        )
    }

    #[test]
    fn globs_and_systems() {
        let e = events();
        assert_eq!(matches("sched_*", &e), vec!["sched_switch", "sched_wakeup"]);
        assert_eq!(matches("sched:sched_switch", &e), vec!["sched_switch"]);
        assert_eq!(matches("block:*", &e), vec!["block_rq_issue"]);
        assert!(matches("irq:sched_switch", &e).is_empty());
        assert_eq!(matches("*:*", &e).len(), 4);
    }

    #[test]
    fn kallsyms_fallback_knows_no_systems() {
        let text = "ffffffff82000000 D __tracepoint_sched_switch\n\
                    ffffffff82000040 d __tracepoint_xfs_foo\t[xfs]\n\
                    ffffffff81000000 T __tracepoint_not_data\n\
                    ffffffff82000080 D other\n";
        let t = scan_kallsyms(text.as_bytes());
        assert_eq!(t.len(), 2);
        // The system is not checked when unknown.
        assert_eq!(matches("sched:sched_s*", &t), vec!["sched_switch"]);
    }
}
