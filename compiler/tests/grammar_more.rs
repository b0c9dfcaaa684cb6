//! Probe-point and language gaps from SystemTap's suites: `.inline`
//! points, which need DWARF, are refused precisely, and dropped under `?`.
use compiler::{compile, Options};

#[test]
fn inline_points_are_refused_as_needing_debuginfo() {
    let src = "probe kernel.function(\"vfs_read\").inline { println(1) }\n";
    let e = compile("x.stp", src, &Options::default()).unwrap_err();
    assert!(
        e.rendered
            .contains("not supported yet: .inline probe points (needs debuginfo)"),
        "{}",
        e.rendered
    );
    assert!(!e.rendered.contains("unresolved"), "{}", e.rendered);
}

#[test]
fn optional_inline_points_are_dropped_beside_a_real_one() {
    let src = "probe kernel.function(\"vfs_read\").inline ?, begin { println(1) }\n";
    let c =
        compile("x.stp", src, &Options::default()).expect("the optional .inline point is dropped");
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains(".inline probe points (needs debuginfo); optional point dropped")),
        "{:?}",
        c.warnings
    );
    // Only `begin` is left.
    assert_eq!(c.program.probes.len(), 1);
}
