//! procfs and input probes (abi.h: procfs files, STP_IOC_INPUT):
//! `procfs("name").read` / `.write` with `.umask(M)` and `.maxsize(N)`,
//! `procfs.read` (the file "command"), `input.char` / `input.line`; the
//! descriptors the compiler writes, `$value` lowered to the VALUE helpers,
//! and the errors for bad names, sizes, umasks, a second probe of one kind
//! on a file and `$value` where it cannot be.
mod common;
use vm_spec::abi;
use vm_spec::program::ProbeTarget;

/// (kind, name, mode, size) of every procfs probe of `src`.
fn files(src: &str) -> Vec<(u32, String, u32, u32)> {
    common::build(src)
        .program
        .probes
        .iter()
        .filter_map(|p| match &p.target {
            ProbeTarget::File { name, mode } => {
                Some((u32::from(p.kind), name.clone(), *mode, p.maxactive))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn modes_sizes_and_the_command_file() {
    let r = abi::STP_PROBE_PROCFS_READ;
    let w = abi::STP_PROBE_PROCFS_WRITE;
    assert_eq!(
        files(
            "probe procfs(\"rw\").read { $value = \"x\" } probe procfs(\"rw\").write { }
             probe procfs(\"ro\").umask(0044).read.maxsize(8) { }
             probe procfs(\"wo\").write { }
             probe procfs.read { }"
        ),
        [
            (r, "rw".into(), 0o666, 0),
            (w, "rw".into(), 0o666, 0),
            (r, "ro".into(), 0o400, 8),
            (w, "wo".into(), 0o222, 0),
            (r, "command".into(), 0o444, 0),
        ]
    );
    // The read probe's size is the file's, whichever comes first.
    assert_eq!(
        files(
            "probe procfs(\"f\").write { }
             probe procfs(\"f\").read.maxsize(100) { }"
        ),
        [(w, "f".into(), 0o666, 100), (r, "f".into(), 0o666, 100)]
    );
    // The image carries MAXSTRINGLEN for the default size.
    let c = common::build("probe procfs(\"f\").read { $value = \"x\" }");
    let asm = vm_spec::disasm::disassemble(&c.program);
    assert!(asm.contains("target file f mode 0o444"), "{asm}");
    common::check(&c.program);
}

#[test]
fn value_lowers_to_the_value_helpers() {
    let c = common::build(
        "global s
         probe procfs(\"f\").read { $value = \"a\"; $value .= s }
         probe procfs(\"f\").write { s = $value }
         probe input.line { printf(\"%s\", line) }
         probe input.char { s = char }",
    );
    let asm = vm_spec::disasm::disassemble(&c.program);
    assert!(asm.contains("CALLI    r0, VALUE_SET(s0)"), "{asm}");
    assert!(asm.contains("VALUE_APPEND(s"), "{asm}");
    assert_eq!(
        asm.matches(", VALUE ").count() + asm.matches(", VALUE\n").count(),
        3,
        "{asm}"
    );
    let kinds: Vec<u32> = c.program.probes.iter().map(|p| u32::from(p.kind)).collect();
    assert_eq!(
        kinds,
        [
            abi::STP_PROBE_PROCFS_READ,
            abi::STP_PROBE_PROCFS_WRITE,
            abi::STP_PROBE_INPUT_LINE,
            abi::STP_PROBE_INPUT_CHAR
        ]
    );
    let ctx: Vec<u32> = c
        .program
        .handlers
        .iter()
        .map(|h| u32::from(h.ctx))
        .collect();
    assert_eq!(
        ctx,
        [
            abi::STP_CTX_PROCFS_READ,
            abi::STP_CTX_PROCFS_WRITE,
            abi::STP_CTX_PROCFS_WRITE,
            abi::STP_CTX_PROCFS_WRITE
        ]
    );
}

#[test]
fn bad_names_sizes_and_umasks() {
    for (src, want) in [
        ("probe procfs(\"a/b\").read { }", "'/' is not allowed"),
        (
            "probe procfs(\"..\").read { }",
            "invalid procfs file name \"..\": not a file",
        ),
        ("probe procfs(\".\").write { }", "not a file"),
        (
            "probe procfs(\"\").read { }",
            "invalid procfs file name \"\": empty",
        ),
        ("probe procfs(\"a b\").read { }", "byte 0x20"),
        (
            "probe procfs(\"f\").read.maxsize(0) { }",
            "maxsize out of range (1, 1048576)",
        ),
        (
            "probe procfs(\"f\").read.maxsize(2000000) { }",
            "maxsize out of range",
        ),
        (
            "probe procfs(\"f\").umask(01000).read { }",
            "invalid procfs umask",
        ),
        (
            "probe procfs(\"f\").write.maxsize(8) { }",
            "probe point mismatch",
        ),
        ("probe procfs(\"f\") { }", "probe point mismatch"),
        (
            "probe procfs(\"f\").read { } probe procfs(\"f\").read { }",
            "only one procfs read probe is allowed on file \"f\"",
        ),
    ] {
        let e = common::fail(src);
        assert!(e.contains(want), "{src}: {e}");
    }
    let long = format!("probe procfs(\"{}\").read {{ }}", "x".repeat(65));
    assert!(common::fail(&long).contains("longer than 64 bytes"));
}

#[test]
fn value_only_where_it_exists() {
    let e = common::fail("probe procfs(\"f\").write { $value = \"x\" }");
    assert!(
        e.contains("$value can only be set in a procfs read probe"),
        "{e}"
    );
    let e = common::fail("probe input.line { $value = \"x\" }");
    assert!(
        e.contains("$value can only be set in a procfs read probe"),
        "{e}"
    );
    // In a begin probe $value is an ordinary (missing) target variable.
    let e = common::fail("probe begin { print($value) }");
    assert!(e.contains("has no target variables"), "{e}");
}
