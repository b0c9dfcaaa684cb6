//! `@var("name")` (kernel global variables): what the compiler records
//! for the loader (a `TargetSite::Var` use whose first constant is the
//! symbol's kallsyms address, `RelocKind::SymAddr`), its errors, and the
//! loadavg and zero-page tapset functions built on it, run on the C core
//! in user space against a simulated kernel memory with the constants
//! filled as the loader would.
mod common;
use common::*;
use vm_spec::program::{Program, RelocKind, TargetSite};
use vm_testkit::HostEnv;

/// Where the simulated avenrun[3] is.
const AVENRUN: u64 = 0x4000;

fn kinds(p: &Program, i: usize) -> Vec<RelocKind> {
    p.target_vars[i].relocs.iter().map(|r| r.kind).collect()
}

#[test]
fn var_is_a_symbol_address_then_the_chain_of_a_cast() {
    let p = build("probe begin { println(@var(\"jiffies\")) }").program;
    let tv = &p.target_vars[0];
    assert_eq!(tv.site, TargetSite::Var("jiffies".into()));
    assert_eq!(tv.name, "jiffies");
    assert_eq!(
        kinds(&p, 0),
        vec![
            RelocKind::SymAddr,
            RelocKind::Offset(0),
            RelocKind::Deref(0),
            RelocKind::Shift,
            RelocKind::RShift,
            RelocKind::Mask
        ]
    );
    // `@FILE` is dropped; the chain is `@cast`'s.
    let p = build("probe begin { println(@var(\"x@kernel/a.c\")->m[2]) }").program;
    let tv = &p.target_vars[0];
    assert_eq!(tv.site, TargetSite::Var("x".into()));
    assert_eq!(tv.fields, vec!["m".to_string(), "[]".to_string()]);
    assert!(kinds(&p, 0).contains(&RelocKind::ElemSize(2)));
    // `&@var`: the address, no read, no narrowing.
    let p =
        build("function f() { return &@var(\"avenrun\") } probe begin { println(f()) }").program;
    assert!(p.target_vars[0].addr_of);
    assert_eq!(kinds(&p, 0), vec![RelocKind::SymAddr, RelocKind::Offset(0)]);
    // `@defined(@var(...))`: one Exists question.
    let p = build("probe begin { println(@defined(@var(\"nosuch\"))) }").program;
    assert_eq!(kinds(&p, 0), vec![RelocKind::Exists]);
    assert_eq!(p.target_vars[0].site, TargetSite::Var("nosuch".into()));
}

#[test]
fn var_needs_a_literal_identifier() {
    let e = fail("probe begin { println(@var(1)) }");
    assert!(e.contains("expected literal string"), "{e}");
    let e = first_semantic_error("probe begin { println(@var(\"a b\")) }");
    assert!(e.contains("invalid variable name 'a b' in @var"), "{e}");
    let e = first_semantic_error("probe begin { println(@var(\"a\", \"mod\")) }");
    assert!(
        e.contains("not supported yet: @var with a module argument"),
        "{e}"
    );
}

/// Fills the constants as the loader does on a kernel whose BTF has no
/// VAR for avenrun and the others (unsigned long reads), with avenrun at
/// `AVENRUN`, and `sizeof(struct page)` 64.
fn relocate(p: &mut Program) {
    for tv in p.target_vars.clone() {
        for r in &tv.relocs {
            p.konsts[r.konst as usize] = match (r.kind, &tv.site) {
                (RelocKind::SymAddr, TargetSite::Var(v)) if v == "avenrun" => AVENRUN as i64,
                (RelocKind::SymAddr, TargetSite::Var(v)) => panic!("unexpected @var({v})"),
                (RelocKind::ElemSize(1), TargetSite::Cast(_)) => 64,
                (RelocKind::Deref(0), TargetSite::Var(_)) => i64::from(!tv.addr_of),
                (RelocKind::Mask, _) => -1,
                _ => 0,
            };
        }
    }
}

fn run(src: &str, avenrun: [u64; 3]) -> String {
    let mut p = build(src).program;
    relocate(&mut p);
    let bytes: Vec<u8> = avenrun.iter().flat_map(|v| v.to_le_bytes()).collect();
    let opts = RunOptions {
        env: HostEnv {
            memory: vec![(AVENRUN, bytes)],
            ..HostEnv::default()
        },
        check: true,
        ..Default::default()
    };
    run_program(&p, &opts).expect("verifies").report("")
}

#[test]
fn loadavg_functions_read_avenrun_in_fixed_point() {
    // 1.50, 0.25, 12.00 in FSHIFT-11 fixed point (FIXED_1 = 2048).
    let av = [3072, 512, 12 * 2048];
    let out = run(
        "probe begin { printf(\"%d %d %d\\n\", get_loadavg_index(0), \
         get_loadavg_index(1), get_loadavg_index(2)); println(sprint_loadavg()) }",
        av,
    );
    assert_eq!(out, "1 0 12\n1.50 0.25 12.00\n");
    // The kernel's rounding (FIXED_1/200): 0.995 shows as 1.00.
    let out = run("probe begin { println(sprint_loadavg()) }", [2038, 0, 20]);
    assert_eq!(out, "1.00 0.00 0.01\n");
    let out = run("probe begin { println(get_loadavg_index(3)) }", av);
    assert!(out.contains("ERROR: Invalid loadavg index 3"), "{out}");
}

#[test]
fn var_of_an_unmapped_address_is_a_fault_not_a_crash() {
    // avenrun's address moved to where nothing is mapped: the read goes
    // through KERNEL_LONG's fault-safe path.
    let mut p = build("probe begin { println(get_loadavg_index(0)) }").program;
    relocate(&mut p);
    for tv in &p.target_vars {
        for r in &tv.relocs {
            if r.kind == RelocKind::SymAddr {
                p.konsts[r.konst as usize] = 0x900_0000;
            }
        }
    }
    let opts = RunOptions {
        check: true,
        ..Default::default()
    };
    let out = run_program(&p, &opts).expect("verifies").report("");
    assert!(
        out.starts_with("ERROR:") && out.contains("0x9000000"),
        "{out}"
    );
}
