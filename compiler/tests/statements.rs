//! Statement probes by source line (`kernel.statement("f@file:N")`,
//! `module("m").statement("f@*:*")`, `.nearest`): the compiler keeps the
//! pattern for the loader (`ProbeTarget::Statement`), which places the
//! lines with the target's debuginfo; a malformed pattern is refused at
//! its string, with why.
mod common;
use vm_spec::abi;
use vm_spec::program::ProbeTarget;

#[test]
fn patterns_go_to_the_loader_as_written() {
    let p = common::build(
        "probe kernel.statement(\"do_nanosleep@kernel/time/hrtimer.c:*\") { }\n\
         probe module(\"my-mod\").statement(\"f@*:12\").nearest { }\n\
         probe kernel.statement(\"vfs_read@fs/read_write.c+3\"), kernel.statement(\"vfs_*\") { }\n",
    )
    .program;
    let got: Vec<(&ProbeTarget, u8, &str)> = p
        .probes
        .iter()
        .map(|q| (&q.target, q.kind, q.display.as_str()))
        .collect();
    let st = |spec: &str, nearest| ProbeTarget::Statement {
        spec: spec.into(),
        nearest,
    };
    assert_eq!(got.len(), 4);
    assert_eq!(*got[0].0, st("do_nanosleep@kernel/time/hrtimer.c:*", false));
    assert_eq!(u32::from(got[0].1), abi::STP_PROBE_KPROBE);
    // The module as kallsyms spells it.
    assert_eq!(*got[1].0, st("my_mod:f@*:12", true));
    assert_eq!(got[1].2, "module(\"my-mod\").statement(\"f@*:12\").nearest");
    assert_eq!(*got[2].0, st("vfs_read@fs/read_write.c+3", false));
    assert_eq!(*got[3].0, st("vfs_*", false));
}

#[test]
fn malformed_patterns_are_refused_at_the_string() {
    for (src, why) in [
        (
            "probe kernel.statement(\"f@x.c:0\") { }",
            "invalid line number \"0\"",
        ),
        (
            "probe kernel.statement(\"f@x.c:9-3\") { }",
            "line range 9-3 runs backwards",
        ),
        (
            "probe kernel.statement(\"f g@x.c:1\") { }",
            "invalid function name \"f g\"",
        ),
        (
            "probe kernel.statement(\"f@:1\") { }",
            "invalid source file pattern \"\"",
        ),
        (
            "probe kernel.statement(\"f@x.c+y\") { }",
            "invalid relative line \"+y\"",
        ),
    ] {
        let e = common::fail(src);
        assert!(e.contains(why), "{src}: {e}");
        assert!(
            e.contains("at x.stp:1:14") || e.contains(":1:14"),
            "{src}: {e}"
        );
    }
    // Only .nearest may follow.
    let e = common::fail("probe kernel.statement(\"f@x.c:1\").return { }");
    assert!(e.contains("probe point mismatch"), "{e}");
}
