//! `timer.UNIT(N).randomize(M)`: M in the unit of the period the image
//! keeps (ns, jiffies for timer.jiffies, ns for timer.hz as in stap), at
//! most N (abi.h says why), in `Probe::randomize`; out of range is stap's
//! message; the dump shows it.
mod common;
use vm_spec::abi;

#[test]
fn randomize_is_scaled_like_the_period() {
    let c = common::build(
        "probe timer.ms(100).randomize(50) { } probe timer.s(2).randomize(2) { } \
         probe timer.us(500).randomize(0) { } probe timer.jiffies(10).randomize(3) { } \
         probe timer.hz(100).randomize(1000) { } probe timer.ns(200000).randomize(7) { }",
    );
    let got: Vec<(u64, u64, u8)> = c
        .program
        .probes
        .iter()
        .map(|p| (p.period_ns, p.randomize, p.flags))
        .collect();
    let j = abi::STP_PROBE_F_JIFFIES as u8;
    assert_eq!(
        got,
        [
            (100_000_000, 50_000_000, 0),
            (2_000_000_000, 2_000_000_000, 0),
            (500_000, 0, 0),
            (10, 3, j),
            (10_000_000, 1000, 0),
            (200_000, 7, 0),
        ]
    );
    assert!(c
        .program
        .probes
        .iter()
        .all(|p| u32::from(p.kind) == abi::STP_PROBE_TIMER));
    let asm = vm_spec::disasm::disassemble(&c.program);
    assert!(
        asm.contains(" period=100000000ns randomize=50000000ns"),
        "{asm}"
    );
    assert!(
        asm.contains(" period=10jiffies randomize=3jiffies"),
        "{asm}"
    );
    assert!(!asm.contains("randomize=0"), "{asm}");
    common::check(&c.program);
}

#[test]
fn randomize_above_the_period_is_stap_s_error() {
    let e = common::fail("probe timer.ms(10).randomize(11) { }");
    assert!(
        e.contains("semantic error: while resolving probe point"),
        "{e}"
    );
    assert!(
        e.contains("semantic error: randomization value out of range"),
        "{e}"
    );
    let e = common::fail("probe timer.ms(10).randomize(-1) { }");
    assert!(e.contains("randomization value out of range"), "{e}");
    let e = common::fail("probe timer.jiffies(2).randomize(3) { }");
    assert!(e.contains("invalid randomize for jiffies timer"), "{e}");
    let e = common::fail("probe timer.ms(10).randomize { }");
    assert!(e.contains("probe point mismatch"), "{e}");
}

#[test]
fn buildok_fourteen_compiles() {
    for f in ["fourteen.stp", "fourteen-plus.stp"] {
        let p = vm_testkit::paths::corpus(&format!("stp-testsuite/buildok/{f}"));
        let Ok(src) = std::fs::read_to_string(&p) else {
            continue;
        };
        let c = compiler::compile(f, &src, &compiler::Options::default())
            .unwrap_or_else(|e| panic!("{f}: {}", e.rendered));
        assert!(c.program.probes.iter().any(|p| p.randomize != 0), "{f}");
        common::check(&c.program);
    }
}
