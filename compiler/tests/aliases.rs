//! Probe aliases (`passes::expand`): `=` with prologue and epilogue, `+=`,
//! suffixes, wildcards in uses, aliases of aliases, and stap's errors.
mod common;
use common::{build, fail};
use vm_spec::abi;
use vm_spec::program::ProbeTarget;

/// The output of the begin (then end) probes of `src`, which must not fail.
fn begin_output(src: &str) -> String {
    common::run_begin_end(src, &Default::default()).ok()
}

fn targets(src: &str) -> Vec<(u8, ProbeTarget)> {
    build(src)
        .program
        .probes
        .iter()
        .map(|p| (p.kind, p.target.clone()))
        .collect()
}

fn sym(n: &str) -> ProbeTarget {
    ProbeTarget::Symbol {
        name: n.into(),
        offset: 0,
    }
}

#[test]
fn prologue_body_epilogue_order() {
    let out = begin_output(
        "probe go = begin { x = 1; print(\"pro \") }, { print(\"epi\\n\") }\n\
         probe go { printf(\"body %d \", x) }",
    );
    assert_eq!(out, "pro body 1 epi\n");
    let out =
        begin_output("probe go += begin { print(\"epi\\n\") }\nprobe go { print(\"body \") }");
    assert_eq!(out, "body epi\n");
}

#[test]
fn several_definitions_and_points() {
    // Two definitions of one name: one probe each; two points: both.
    let t = targets(
        "probe a.b = kernel.function(\"f\"), kernel.function(\"g\") { }\n\
         probe a.b += kernel.function(\"h\") { }\n\
         probe a.b { }",
    );
    let k = abi::STP_PROBE_KPROBE as u8;
    assert_eq!(t, vec![(k, sym("f")), (k, sym("g")), (k, sym("h"))]);
}

#[test]
fn suffix_and_wildcard_uses() {
    let t = targets(
        "probe my.open = kernel.function(\"do_sys_open\") { }\n\
         probe my.read = kernel.function(\"vfs_read\") { }\n\
         probe my.open.return { }\nprobe my.* { }",
    );
    let (k, r) = (abi::STP_PROBE_KPROBE as u8, abi::STP_PROBE_KRETPROBE as u8);
    assert_eq!(
        t,
        vec![
            (r, sym("do_sys_open")),
            (k, sym("do_sys_open")),
            (k, sym("vfs_read"))
        ]
    );
}

#[test]
fn alias_of_alias_and_locals() {
    let out = begin_output(
        "probe inner = begin { a = 2 }\nprobe outer = inner { b = a * 3 }\n\
         probe outer { printf(\"%d %d\\n\", a, b) }",
    );
    assert_eq!(out, "2 6\n");
    // The alias used by two probes: each copy is its own.
    let out = begin_output(
        "probe p = begin { s = \"x\" }\nprobe p { print(s) }\nprobe p { n = 4; print(n) }",
    );
    assert_eq!(out, "x4");
}

#[test]
fn optional_use() {
    let prog =
        build("probe a.x = kernel.function(\"f\") { }\nprobe a.x? { }\nprobe a.y*?, begin { }")
            .program;
    assert_eq!(prog.probes.len(), 2);
    assert_ne!(prog.probes[0].flags & abi::STP_PROBE_F_OPTIONAL as u8, 0);
}

#[test]
fn errors() {
    let e = fail("probe a.b = begin { }\nprobe a.* .c { }");
    assert!(e.contains("semantic error"), "{e}");
    let e = fail("probe a.b = begin { }\nprobe a.x* { }");
    assert!(e.contains("while resolving probe point"), "{e}");
    assert!(e.contains("no match"), "{e}");
    let e = fail("probe a = b { }\nprobe b = a { }\nprobe a { }");
    assert!(e.contains("recursive loop in alias expansion"), "{e}");
    let e = fail("probe a = begin { }\nprobe foo { }");
    assert!(e.contains("probe point mismatch (similar: "), "{e}");
    assert!(e.contains("): identifier 'foo'"), "{e}");
}

#[test]
fn wildcard_and_module_functions_stay_symbolic() {
    let (k, r) = (abi::STP_PROBE_KPROBE as u8, abi::STP_PROBE_KRETPROBE as u8);
    let t = targets(
        "probe kernel.function(\"vfs_*\") { }\n\
         probe module(\"ext4\").function(\"ext4_*\").return { }\n\
         probe kprobe.module(\"my-mod\").function(\"f\") { }\n\
         probe kprobe.function(\"tcp_?cv*\") { }",
    );
    assert_eq!(
        t,
        vec![
            (k, sym("vfs_*")),
            (r, sym("ext4:ext4_*")),
            (k, sym("my_mod:f")),
            (k, sym("tcp_?cv*"))
        ]
    );
    let e = fail("probe module(\"a b\").function(\"f\") { }");
    assert!(e.contains("invalid kernel module name"), "{e}");
    let e = fail("probe module.function(\"f\") { }");
    assert!(e.contains("probe point mismatch"), "{e}");
    let e = fail("probe module(\"m\").statement(1) { }");
    assert!(e.contains("probe point mismatch"), "{e}");
    let e = fail("probe module(\"a b\").statement(\"f\") { }");
    assert!(e.contains("invalid module name \"a b\""), "{e}");
}

#[test]
fn error_and_never_probes() {
    let prog = build(
        "probe error(2) { print(\"b\") }\nprobe error { print(\"a\") }\n\
         probe never { print(\"n\") }\nprobe end { }",
    )
    .program;
    let kinds: Vec<u8> = prog.probes.iter().map(|p| p.kind).collect();
    let e = abi::STP_PROBE_ERROR as u8;
    assert_eq!(kinds, vec![e, abi::STP_PROBE_END as u8, e]);
    for p in &prog.probes {
        assert_eq!(
            prog.handlers[p.handler as usize].ctx,
            abi::STP_CTX_END as u8
        );
    }
    assert_eq!(prog.probes[2].display, "error(2)");
    common::check(&prog);
}

#[test]
fn tracepoints() {
    let prog =
        build("probe kernel.trace(\"sched_process_exec\") { printf(\"%s\\n\", execname()) }")
            .program;
    assert_eq!(prog.probes[0].kind, abi::STP_PROBE_TRACEPOINT as u8);
    assert_eq!(prog.probes[0].target, sym("sched_process_exec"));
    assert_eq!(
        prog.handlers[prog.probes[0].handler as usize].ctx,
        abi::STP_CTX_KPROBE as u8
    );
    common::check(&prog);
    let e = fail("probe kernel.trace(\"a-b\") { }");
    assert!(e.contains("invalid tracepoint name"), "{e}");
    let e = fail("probe kernel.trace(\"sched:\") { }");
    assert!(e.contains("invalid tracepoint name"), "{e}");
    // Globs and SYSTEM:NAME stay patterns for the loader.
    for pat in ["sched_*", "sched:sched_switch", "*:sched_[!a-r]*"] {
        let prog = build(&format!("probe kernel.trace(\"{pat}\") {{ }}")).program;
        assert_eq!(prog.probes[0].target, sym(pat));
    }
}

#[test]
fn verifier_rules_of_the_new_kinds() {
    let refuse = |prog: &vm_spec::program::Program, syms: Vec<Option<(String, u32)>>| {
        let img = vm_spec::image::build(prog, &syms).unwrap();
        vm_spec::core::verify_image(&img).err().map(|e| e.message)
    };
    let prog = build("probe kernel.trace(\"sched_switch\") { }").program;
    assert_eq!(refuse(&prog, vec![Some(("sched_switch".into(), 0))]), None);
    let e = refuse(&prog, vec![Some(("sched_switch".into(), 4))]).unwrap();
    assert!(e.contains("offset or maxactive set on a tracepoint"), "{e}");
    // A tracepoint needs a KPROBE handler, an error probe an END one.
    let mut p2 = prog.clone();
    p2.probes[0].kind = abi::STP_PROBE_ERROR as u8;
    p2.probes[0].target = ProbeTarget::None;
    assert!(refuse(&p2, vec![None])
        .unwrap()
        .contains("needs a handler of context"));
    // module:function: one ':' inside the name.
    let prog = build("probe module(\"ext4\").function(\"ext4_llseek\") { }").program;
    assert_eq!(
        refuse(&prog, vec![Some(("ext4:ext4_llseek".into(), 0))]),
        None
    );
    for bad in ["ext4::f", ":f", "f:", "a:b:c"] {
        let e = refuse(&prog, vec![Some((bad.into(), 0))]).unwrap();
        assert!(e.contains("not in [A-Za-z0-9_.$]"), "{bad}: {e}");
    }
}

#[test]
fn the_most_specific_alias_wins_per_path() {
    // Under `my.*.return`, `my.a.return` is its own alias, and `my.b`
    // (no `my.b.return`) still expands with the suffix.
    let t = targets(
        "probe my.a = kernel.function(\"fa\") { }\n\
         probe my.a.return = kernel.function(\"fa_ret\").return { }\n\
         probe my.b = kernel.function(\"fb\") { }\n\
         probe my.*.return { }",
    );
    let r = abi::STP_PROBE_KRETPROBE as u8;
    assert_eq!(t, vec![(r, sym("fa_ret")), (r, sym("fb"))]);
}
