//! Target variables: `$x` / `$x->a->b` in kernel.function and syscall entry
//! probes compile to code reading through relocated constants and to a
//! `TargetVar` per use for the loader; the forms not supported yet are
//! refused with stap-style messages.
use compiler::{compile, Options};
use vm_spec::program::{Program, RelocKind, TargetSite};
use vm_testkit::host::HostSession;

fn ok(src: &str) -> Program {
    match compile("t.stp", src, &Options::default()) {
        Ok(c) => c.program,
        Err(f) => panic!("{}", f.rendered),
    }
}

fn err(src: &str) -> String {
    match compile("t.stp", src, &Options::default()) {
        Ok(_) => panic!("compiled, expected a refusal: {src}"),
        Err(f) => f.rendered,
    }
}

#[test]
fn chain_records_relocations_and_verifies() {
    let p = ok(
        r#"probe kernel.function("vfs_read") { printf("%d %d\n", $count, $file->f_inode->i_ino) }"#,
    );
    assert_eq!(p.target_vars.len(), 2);
    let count = &p.target_vars[0];
    assert_eq!(count.name, "count");
    assert!(count.fields.is_empty());
    assert_eq!(count.site, TargetSite::Function("vfs_read".into()));
    assert_eq!(count.probe_point, "kernel.function(\"vfs_read\")");
    assert_eq!((count.loc.line, count.loc.col), (1, 55));
    let kinds: Vec<RelocKind> = count.relocs.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [
            RelocKind::ArgIndex,
            RelocKind::Offset(0),
            RelocKind::Deref(0),
            RelocKind::Shift,
            RelocKind::RShift,
            RelocKind::Mask
        ]
    );
    let chain = &p.target_vars[1];
    assert_eq!(chain.fields, ["f_inode", "i_ino"]);
    assert_eq!(chain.relocs.len(), 1 + 2 * 3 + 3);
    // Every relocated constant is its own (never shared by value).
    let mut ks: Vec<u32> = p
        .target_vars
        .iter()
        .flat_map(|t| t.relocs.iter().map(|r| r.konst))
        .collect();
    let n = ks.len();
    ks.sort();
    ks.dedup();
    assert_eq!(ks.len(), n);
    assert!(ks.iter().all(|&k| (k as usize) < p.konsts.len()));
    assert_eq!(chain.handler, p.probes[0].handler);
    // The code verifies in a kprobe handler (ARG at function entry).
    HostSession::from_program(&p).expect("verifies");
}

#[test]
fn syscall_site() {
    let p = ok(r#"probe syscall.openat { printf("%s\n", user_string($filename)) }"#);
    assert_eq!(p.target_vars[0].site, TargetSite::Syscall("openat".into()));
    HostSession::from_program(&p).expect("verifies");
}

#[test]
fn unsupported_forms_are_refused() {
    // $param in a .return probe is @entry($param) (compiler/src/tapset/entry.rs):
    // read by a generated entry probe.
    let p = ok(r#"probe kernel.function("vfs_read").return { print($file) }"#);
    assert_eq!(p.probes.len(), 2);
    assert_eq!(p.target_vars[0].handler, p.probes[0].handler);
    // Pretty-printing compiles (compiler/tests/listings.rs, cast.rs).
    ok(r#"probe kernel.function("vfs_read") { print($buf$ . $file->f_path$$) }"#);
    ok(r#"probe kernel.function("vfs_read").return { print($return$ . $$return$$) }"#);
    let e = err(r#"probe timer.s(1) { print($x) }"#);
    assert!(e.contains("has no target variables"), "{e}");
    let e = err(r#"function f() { return $x } probe begin { f() }"#);
    assert!(e.contains("not available in a function"), "{e}");
    // A pointer is a number: using it as a string is a type error, as in stap.
    let e = err(r#"probe kernel.function("vfs_read") { printf("%s\n", $buf) }"#);
    assert!(e.contains("error"), "{e}");
}
