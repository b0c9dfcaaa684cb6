//! speculative.stp: speculation(), speculate(), commit(), discard(),
//! compiled and run on the C core in user space: committed output appears
//! in speculate() order at the commit, discarded output never appears.
mod common;
use common::*;

/// Runs begin then end probes, which must not fail; the output.
fn run(src: &str) -> String {
    run_begin_end(src, &Default::default()).ok()
}

#[test]
fn commit_prints_held_output_in_order_and_discard_drops_it() {
    let out = run(r#"probe begin {
        a = speculation(); b = speculation()
        speculate(a, "a1\n"); speculate(b, "b1\n"); speculate(a, sprintf("a%d\n", 2))
        print("before\n")
        discard(b); commit(a)
        print("after\n")
    }"#);
    assert_eq!(out, "before\na1\na2\nafter\n");
}

#[test]
fn ids_are_distinct_and_freed_after_commit() {
    let out = run(r#"probe begin {
        a = speculation(); b = speculation()
        speculate(a, "x\n"); commit(a); commit(a)
        speculate(a, "y\n"); discard(a); commit(a)
        printf("%d %d\n", a, b)
    }"#);
    assert_eq!(out, "x\n1 2\n");
}

#[test]
fn speculation_held_across_probes() {
    let out = run(r#"global s
    probe begin { s = speculation(); speculate(s, "held\n"); print("begin\n") }
    probe end { print("end\n"); commit(s) }"#);
    assert_eq!(out, "begin\nend\nheld\n");
}
