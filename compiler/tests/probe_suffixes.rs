//! Suffixes after wildcards and aliases (stap's rule: an expansion that does
//! not accept the suffix is dropped; only a use none of whose expansions
//! fits is an error), `syscall.NAME.return.maxactive(N)` with globs, the
//! profile timer at a frequency, and the families refused whole
//! (user-space marks).
mod common;
use common::{build, fail, first_semantic_error};
use vm_spec::abi;
use vm_spec::program::ProbeTarget;

/// (kind, display, maxactive) of each probe of `src`.
fn probes(src: &str) -> Vec<(u8, String, u32)> {
    build(src)
        .program
        .probes
        .iter()
        .map(|p| (p.kind, p.display.clone(), p.maxactive))
        .collect()
}

#[test]
fn wildcard_suffix_keeps_only_the_points_that_take_it() {
    // The vm.* aliases on kernel.trace have no .return: dropped; the
    // kernel.function ones (vm.mmap, vm.brk, ...) stay, as kretprobes.
    let p = probes("probe vm.*.return { }");
    assert!(!p.is_empty());
    assert!(
        p.iter().all(|x| x.0 == abi::STP_PROBE_KRETPROBE as u8),
        "{p:?}"
    );
    let shown: Vec<&str> = p.iter().map(|x| x.1.as_str()).collect();
    assert!(
        shown.contains(&"kernel.function(\"vm_mmap_pgoff\").return"),
        "{shown:?}"
    );
    assert!(
        !shown.iter().any(|s| s.starts_with("kernel.trace")),
        "{shown:?}"
    );
}

#[test]
fn alias_suffix_drops_the_definitions_that_do_not_take_it() {
    let src = "probe a = kernel.function(\"f\").return { }\n\
               probe a = begin ? { }\n\
               probe a.maxactive(10) { }";
    let p = probes(src);
    assert_eq!(
        p,
        vec![(
            abi::STP_PROBE_KRETPROBE as u8,
            "kernel.function(\"f\").return.maxactive(10)".to_string(),
            10
        )]
    );
}

#[test]
fn a_use_no_expansion_fits_is_an_error() {
    let e = first_semantic_error("probe a = begin { }\nprobe a.return { }");
    assert!(e.starts_with("semantic error: probe point mismatch"), "{e}");
    let e = first_semantic_error("probe vm.kfree.return.return { }");
    assert!(e.starts_with("semantic error: probe point mismatch"), "{e}");
}

#[test]
fn syscall_return_maxactive_with_globs() {
    for pp in [
        "syscall.open.return.maxactive(10)",
        "syscall.open.return.maxact*(10)",
        "syscall.open.return.*(10)",
    ] {
        let p = probes(&format!("probe {pp} {{ }}"));
        assert_eq!(p.len(), 1, "{pp}");
        assert_eq!(p[0].0, abi::STP_PROBE_KRETPROBE as u8, "{pp}");
        assert_eq!(p[0].2, 10, "{pp}");
    }
    // stap's semko/alias_suffixes05: nothing fits after maxactive.
    let e = first_semantic_error("probe syscall.open.return.maxactive(1).* { }");
    assert!(e.starts_with("semantic error: probe point mismatch"), "{e}");
    let e = first_semantic_error("probe syscall.open.maxactive(1) { }");
    assert!(e.starts_with("semantic error: probe point mismatch"), "{e}");
}

#[test]
fn profile_timer_at_a_frequency() {
    let c = build("probe timer.profile.freq.hz(99) { }");
    let p = &c.program.probes[0];
    assert_eq!(p.kind, abi::STP_PROBE_TIMER as u8);
    assert_ne!(u32::from(p.flags) & abi::STP_PROBE_F_PROFILE, 0);
    assert_eq!(p.period_ns, 1_000_000_000 / 99);
    assert!(matches!(p.target, ProbeTarget::None));
    let e = fail("probe timer.profile.freq.hz(20000) { }");
    assert!(e.contains("interval value out of range (1, 10000)"), "{e}");
}

#[test]
fn families_refused_whole() {
    for pp in ["qemu.*.*.*?", "stap.pass0", "glib.mem_alloc"] {
        let e = first_semantic_error(&format!("probe {pp} {{ }}"));
        assert!(
            e.contains("not supported yet: user-space probes ("),
            "{pp}: {e}"
        );
    }
}

#[test]
fn pn_is_the_use_with_its_wildcards_expanded() {
    let out = common::run_begin_end(
        "probe my.start = begin { }\nprobe my.* { printf(\"%s %s\\n\", pn(), pp()) }",
        &Default::default(),
    )
    .ok();
    assert_eq!(out, "my.start begin\n");
    // A plain point: pn() is pp().
    let out = common::run_begin_end("probe begin { print(pn()) }", &Default::default()).ok();
    assert_eq!(out, "begin");
}

#[test]
fn livepatch_tapset_names_are_refused_precisely() {
    let e = first_semantic_error("probe timer.s(60) if (cve_enabled_p) { }");
    assert!(
        e.contains("not supported yet: the livepatch tapset (cve_enabled_p)"),
        "{e}"
    );
    let e = first_semantic_error("probe begin { cve_count_metric(\"hit\") }");
    assert!(
        e.contains("not supported yet: the livepatch tapset (cve_count_metric)"),
        "{e}"
    );
    // A script's own global of that name is its own.
    build("global cve_enabled_p = 1\nprobe timer.s(60) if (cve_enabled_p) { }");
}

#[test]
fn module_name_globs_go_to_the_loader() {
    let c = build("probe module(\"*scsi*\").function(\"*\").call { }");
    assert_eq!(
        c.program.probes[0].target,
        ProbeTarget::Symbol {
            name: "*scsi*:*".into(),
            offset: 0
        }
    );
    let e = fail("probe module(\"sc/si\").function(\"*\") { }");
    assert!(e.contains("invalid kernel module name \"sc/si\""), "{e}");
}
