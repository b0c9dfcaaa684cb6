//! The tapset's plain globals, added when the script mentions them and
//! does not declare them (`argv_1` ... `argv_32` are library.rs's string
//! constants):
//!
//! - null.stp's `global NULL = 0`;
//! - syscalls_cfg_trunc.stp's `global syscall_string_trunc = 50`, the
//!   length the syscall aliases' buffer strings (`buf_str`) are cut to;
//! - argv.stp's `global argc = N`, N the number of script arguments;
//! - argv.stp's `global argv` and a `probe begin` with the lowest sequence
//!   (before every script `begin`, as stap's `probe init`) that sets
//!   `argv[1]` ... `argv[32]` to `argv_1` ... `argv_32` (the arguments, ""
//!   past the last), as argv.stp does;
//! - this.stp's `global __this_var1%` ... `__this_var8%`, the per-thread
//!   arrays of the `@this1` ... `@this8` macros (parse/tapset.stpm).
use super::{bodies_mut, declared_globals, walk_exprs_mut, Gen};
use crate::ast::*;
use std::collections::HashSet;

/// Adds `NULL`, `syscall_string_trunc`, `argc`, `argv` and `__this_varN` to `s` where it uses them (see the
/// module comment).
pub(crate) fn include(s: &mut Script, args: &[String], g: &mut Gen) {
    let declared = declared_globals(s);
    let mut used: HashSet<String> = HashSet::new();
    for b in bodies_mut(s) {
        walk_exprs_mut(b, &mut |e| {
            if let ExprKind::Var(n) = &e.kind {
                if n == "argc"
                    || n == "argv"
                    || n == "NULL"
                    || n == "syscall_string_trunc"
                    || is_this_var(n)
                {
                    used.insert(n.clone());
                }
            }
        });
    }
    let span = Span::default();
    if used.contains("argv") && !declared.contains("argv") {
        let mut text = String::from("global argv\nprobe begin(-9223372036854775807) {\n");
        for i in 1..=32 {
            text.push_str(&format!("\targv[{i}] = argv_{i}\n"));
        }
        if args.len() > 32 {
            text.push_str("\twarn(\"argv is limited to 32 arguments\")\n");
        }
        text.push_str("}\n");
        let items = g.items(&text, span);
        for (k, it) in items.into_iter().enumerate() {
            s.items.insert(k, it);
        }
    }
    let mut this_vars: Vec<&String> = used.iter().filter(|n| is_this_var(n)).collect();
    this_vars.sort();
    for name in this_vars {
        if !declared.contains(name) {
            let items = g.items(&format!("global {name}%\n"), span);
            for (k, it) in items.into_iter().enumerate() {
                s.items.insert(k, it);
            }
        }
    }
    let n = i64::try_from(args.len()).unwrap_or(i64::MAX);
    for (name, text) in [
        ("argc", format!("global argc = {n}\n")),
        ("NULL", "global NULL = 0\n".to_string()),
        (
            "syscall_string_trunc",
            "global syscall_string_trunc = 50\n".to_string(),
        ),
    ] {
        if used.contains(name) && !declared.contains(name) {
            let items = g.items(&text, span);
            for (k, it) in items.into_iter().enumerate() {
                s.items.insert(k, it);
            }
        }
    }
}

/// `__this_var1` ... `__this_var8`: an array of `@this1` ... `@this8`.
fn is_this_var(n: &str) -> bool {
    n.strip_prefix("__this_var")
        .is_some_and(|d| matches!(d, "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8"))
}

/// The names stap's livepatch tapset (livepatch.stp, for the
/// security-band-aids scripts) defines: its globals and functions.
const LIVEPATCH: &[&str] = &[
    "cve_enabled_p",
    "cve_fix_p",
    "cve_notify_p",
    "cve_trace_p",
    "cve_tmpdisabled_s",
    "cve_metrics",
    "cve_count_metric",
    "cve_record_metric",
    "cve_tmpdisable",
];

/// The refusal for a use of `name` when it is one of livepatch.stp's
/// names the script does not define: that tapset is plain script, but its
/// parameters are procfs files (`procfs("cve_enabled_p").write` ...) and
/// its metrics a prometheus probe, neither of which stapvm has yet.
pub(crate) fn livepatch_refusal(name: &str) -> Option<String> {
    LIVEPATCH.contains(&name).then(|| {
        format!(
            "the livepatch tapset ({name}): its parameters are procfs files \
             and its metrics a prometheus probe"
        )
    })
}
