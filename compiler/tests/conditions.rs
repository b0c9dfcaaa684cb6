//! Conditional probe points (`probe P if (cond)`): the condition inlined
//! as `if (!(cond)) next` at the top of the handler (`passes::expand`), one
//! probe per conditional point, and stap's refusals.
mod common;
use common::{build, first_semantic_error};

/// The output of the begin (then end) probes of `src`, which must not fail.
fn begin_output(src: &str) -> String {
    common::run_begin_end(src, &Default::default()).ok()
}

#[test]
fn the_condition_decides_whether_the_body_runs() {
    let out = begin_output(
        "global on = 1, off\n\
         probe begin if (on) { print(\"on \") }\n\
         probe begin if (off) { print(\"off \") }\n\
         probe begin if (on && !off) { print(\"both\") }",
    );
    assert_eq!(out, "on both");
}

#[test]
fn conditions_see_the_globals_as_they_change() {
    // The second begin probe runs after the first has set `go`.
    let out = begin_output(
        "global go\n\
         probe begin { go = 1 }\n\
         probe begin if (go) { print(\"ran\") }",
    );
    assert_eq!(out, "ran");
}

#[test]
fn each_conditional_point_gets_its_own_probe() {
    let c = build(
        "global a, b\n\
         probe kernel.function(\"vfs_read\") if (a), kernel.function(\"vfs_write\") if (b),\n\
         kernel.function(\"vfs_open\"), kernel.function(\"vfs_fsync\") { }",
    );
    // Two conditional probes and one shared handler for the plain ones.
    assert_eq!(c.program.probes.len(), 4);
    let handlers: std::collections::BTreeSet<_> =
        c.program.probes.iter().map(|p| p.handler).collect();
    assert_eq!(handlers.len(), 3);
}

#[test]
fn alias_uses_carry_their_condition() {
    let out = begin_output(
        "global on\n\
         probe go = begin { print(\"pro \") }\n\
         probe go if (on) { print(\"body\") }\n\
         probe go { print(\"plain\") }",
    );
    assert_eq!(out, "pro plain");
}

#[test]
fn stap_refusals() {
    let e = first_semantic_error("global a\nprobe begin if (a++) { }");
    assert!(
        e.contains("probe condition must not modify any variables"),
        "{e}"
    );
    let e = first_semantic_error("probe begin if (pid()) { }");
    assert!(
        e.contains("probe condition must not reference function"),
        "{e}"
    );
    let e = first_semantic_error("probe begin if (x) { }");
    assert!(
        e.contains("probe condition must not reference undeclared global"),
        "{e}"
    );
}
