//! stap's `(similar: …)` suggestions: the five candidates closest to a
//! misspelt name by Levenshtein distance (ties in name order), appended
//! to "unresolved function" and "probe point mismatch" errors.
use std::collections::BTreeSet;

/// How many names a suggestion lists at most (stap prints the top 5).
const MAX_SUGGESTIONS: usize = 5;

/// The edit distance between `a` and `b` (insertions, deletions and
/// substitutions of characters).
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = if ca == *cb {
                diag
            } else {
                1 + diag.min(up).min(row[j])
            };
            diag = up;
        }
    }
    row[b.len()]
}

/// ` (similar: a, b, c)` for `target` among `candidates`, or "" when there
/// is nothing to suggest. As stap's `suggest_functors`, a glob is
/// compared by its part before the first `*`.
pub fn similar<'a>(target: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let target = match target.find('*') {
        Some(0) => return String::new(),
        Some(i) => &target[..i],
        None => target,
    };
    if target.is_empty() {
        return String::new();
    }
    let names: BTreeSet<&str> = candidates
        .into_iter()
        .filter(|c| !c.is_empty() && *c != target)
        .collect();
    let mut scored: Vec<(usize, &str)> = names
        .into_iter()
        .map(|n| (levenshtein(target, n), n))
        .collect();
    scored.sort();
    let top: Vec<&str> = scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, n)| n)
        .collect();
    if top.is_empty() {
        String::new()
    } else {
        format!(" (similar: {})", top.join(", "))
    }
}

/// The built-in probe-point components that may follow `prefix` (the
/// names `passes::resolve` knows there; for suggestions).
pub fn probe_functors(prefix: &[&str]) -> &'static [&'static str] {
    const FUNCTION_SUFFIXES: &[&str] = &["call", "exported", "inline", "maxactive", "return"];
    const TIMER_UNITS: &[&str] = &[
        "hz", "jiffies", "ms", "msec", "ns", "nsec", "profile", "s", "sec", "us", "usec",
    ];
    match prefix {
        [] => &[
            "begin",
            "end",
            "error",
            "input",
            "java",
            "kernel",
            "kprobe",
            "lsm",
            "module",
            "nd_syscall",
            "nd_syscall_any",
            "netfilter",
            "never",
            "perf",
            "process",
            "procfs",
            "prometheus",
            "python2",
            "python3",
            "syscall",
            "syscall_any",
            "timer",
        ],
        ["kernel"] => &["data", "function", "statement", "trace"],
        ["module"] => &["function", "statement"],
        ["kprobe"] => &["function", "module", "statement"],
        ["kprobe", "module"] => &["function"],
        ["kernel" | "module" | "kprobe", "function"]
        | ["kprobe", "module", "function"]
        | ["module", "function", ..] => FUNCTION_SUFFIXES,
        ["timer"] => TIMER_UNITS,
        ["timer", "profile"] => &["tick"],
        ["timer", _] => &["randomize"],
        ["kernel", "data"] => &["length", "rw", "write"],
        ["kernel", "data", "length"] => &["rw", "write"],
        ["perf"] => &["hw", "hw_cache", "sw", "type"],
        ["perf", "sw"] => crate::passes::resolve::perf::SW_EVENTS,
        ["perf", "hw"] => crate::passes::resolve::perf::HW_EVENTS,
        ["perf", "hw_cache"] => crate::passes::resolve::perf::CACHE_IDS,
        ["perf", "hw_cache", _] => crate::passes::resolve::perf::CACHE_OPS,
        ["perf", "hw_cache", _, _] => crate::passes::resolve::perf::CACHE_RESULTS,
        ["perf", "type"] => &["config"],
        ["perf", ..] => &["counter", "process", "sample"],
        ["netfilter"] => &["arp", "bridge", "hook", "ip", "ipv4", "ipv6", "pf"],
        ["netfilter", "hook"] => &["pf"],
        ["netfilter", "pf"] => &["hook"],
        ["netfilter", _, _] => &["priority"],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("abc", "abc"), 0);
        assert_eq!(levenshtein("prnitln", "println"), 2);
    }

    #[test]
    fn closest_first_ties_by_name() {
        let c = ["println", "print", "printf", "printd", "execname", "pid"];
        assert_eq!(
            similar("prnitln", c),
            " (similar: println, print, printd, printf, pid)"
        );
        assert_eq!(similar("x", std::iter::empty()), "");
        assert_eq!(similar("*", c), "");
        // A glob is compared by its prefix.
        assert!(similar("prin*", c).starts_with(" (similar: print,"));
    }
}
