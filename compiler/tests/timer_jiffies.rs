//! `timer.jiffies(N)`: a timer probe flagged `STP_PROBE_F_JIFFIES` whose
//! `period_ns` holds N jiffies (abi.h), since HZ is the target kernel's;
//! stap's range (1, 1000000); the dump shows the period in jiffies.
mod common;
use vm_spec::abi;

#[test]
fn jiffies_timer_descriptor() {
    let c = common::build(
        "probe timer.jiffies(5) { } probe timer.jiffies(1) { } \
         probe timer.jiffies(1000000) { } probe timer.ms(5) { }",
    );
    let got: Vec<(u32, u8, u64)> = c
        .program
        .probes
        .iter()
        .map(|p| (u32::from(p.kind), p.flags, p.period_ns))
        .collect();
    let t = abi::STP_PROBE_TIMER;
    let j = abi::STP_PROBE_F_JIFFIES as u8;
    assert_eq!(
        got,
        [(t, j, 5), (t, j, 1), (t, j, 1_000_000), (t, 0, 5_000_000)]
    );
    assert_eq!(c.program.probes[0].display, "timer.jiffies(5)");
    let asm = vm_spec::disasm::disassemble(&c.program);
    assert!(
        asm.contains("timer.jiffies(5)  [timer -> handler#"),
        "{asm}"
    );
    assert!(asm.contains(" period=5jiffies]"), "{asm}");
    assert!(asm.contains(" period=5000000ns]"), "{asm}");
    assert!(!asm.contains("flags="), "{asm}");
}

#[test]
fn jiffies_timer_optional_keeps_both_flags() {
    let c = common::build("probe timer.jiffies(25)? { }");
    let p = &c.program.probes[0];
    assert_eq!(
        u32::from(p.flags),
        abi::STP_PROBE_F_JIFFIES | abi::STP_PROBE_F_OPTIONAL
    );
    assert_eq!(p.period_ns, 25);
}

#[test]
fn jiffies_out_of_range_and_mismatch() {
    for bad in [
        "probe timer.jiffies(0) { }",
        "probe timer.jiffies(-3) { }",
        "probe timer.jiffies(1000001) { }",
    ] {
        let e = common::fail(bad);
        assert!(
            e.contains("semantic error: while resolving probe point")
                && e.contains("interval value out of range (1, 1000000)"),
            "{bad}: {e}"
        );
    }
    for bad in ["probe timer.jiffies { }", "probe timer.jiffies(\"5\") { }"] {
        let e = common::fail(bad);
        assert!(e.contains("probe point mismatch"), "{bad}: {e}");
    }
    // randomize: tests/timer_randomize.rs.
    let e = common::fail("probe timer.jiffies(5).randomize(6) { }");
    assert!(e.contains("invalid randomize for jiffies timer"), "{e}");
}
