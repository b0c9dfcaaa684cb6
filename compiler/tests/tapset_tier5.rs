//! The tier-5 tapset functions (compiler/src/tapset/library.stp's tier-5
//! section): atomic_read, atomic_long_read (atomic.stp), rcu_dereference
//! (rcu.stp), arch_bytes and uarch_bytes (arch_bytes.stp), run on the C
//! core in user space with the memory given by the `HostEnv`.
mod common;
use common::*;
use vm_testkit::HostEnv;

/// An atomic_t of -5 followed by padding, then an atomic_long_t.
const MEM: u64 = 0x50000;
/// Nothing mapped here.
const HOLE: u64 = 0x900_0000;

fn env() -> HostEnv {
    let mut m = vec![0u8; 0x20];
    m[0..4].copy_from_slice(&(-5i32).to_le_bytes());
    m[4..8].copy_from_slice(&0x7777_7777u32.to_le_bytes());
    m[8..16].copy_from_slice(&0x1234_5678_9abc_def0u64.to_le_bytes());
    HostEnv {
        memory: vec![(MEM, m)],
        ..HostEnv::default()
    }
}

fn run(src: &str) -> String {
    let p = build(src).program;
    let opts = RunOptions {
        env: env(),
        check: true,
        ..Default::default()
    };
    run_program(&p, &opts).expect("verifies").report("")
}

#[test]
fn atomic_reads_are_four_and_eight_bytes() {
    let out = run(&format!(
        "probe begin {{ printf(\"%d %x %x\\n\", atomic_read({MEM}), atomic_long_read({MEM}), \
         atomic_long_read({MEM} + 8)) }}
         probe begin {{ println(atomic_read({HOLE})) }}"
    ));
    assert_eq!(
        out,
        "-5 77777777fffffffb 123456789abcdef0\nERROR: kernel read fault at 0x9000000\n"
    );
}

#[test]
fn rcu_dereference_reads_the_pointer() {
    let out = run(&format!(
        "probe begin {{ printf(\"%x\\n\", rcu_dereference({MEM} + 8)) }}
         probe begin {{ println(rcu_dereference({HOLE})) }}"
    ));
    assert_eq!(
        out,
        "123456789abcdef0\nERROR: kernel read fault at 0x9000000\n"
    );
}

#[test]
fn arch_bytes_are_eight() {
    assert_eq!(
        run("probe begin { printf(\"%d %d\\n\", arch_bytes(), uarch_bytes()) }"),
        "8 8\n"
    );
}
