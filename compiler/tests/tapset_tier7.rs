//! The tier-7 tapset functions (compiler/src/tapset/library.stp's tier-7
//! section): uconversions.stp's checked reads (`user_*_error`,
//! `user_*_warn`), the buffer quoting of conversions.stp and
//! uconversions.stp, task_time.stp, rlimit.stp, tzinfo.stp and
//! floatingpoint.stp, run on the C core in user space with the memory of
//! the `HostEnv`.
mod common;
use common::*;
use vm_spec::program::{Program, RelocKind, TargetSite};
use vm_testkit::HostEnv;

/// Readable memory: bytes 0xff 0xfe ... then text with a NUL and escapes.
const MEM: u64 = 0x50000;
/// The last bytes of a mapped page (the next page is a hole).
const EDGE: u64 = 0x61000 - 2;
/// Nothing mapped here.
const HOLE: u64 = 0x900_0000;
/// A task_struct (utime at 0x10, stime at 0x18).
const TASK: u64 = 0x70000;

fn env() -> HostEnv {
    let mut m = vec![0u8; 0x20];
    m[0..8].copy_from_slice(&(-2i64).to_le_bytes());
    m[8..16].copy_from_slice(b"a\"b\0\n\x01z\\");
    let mut t = vec![0u8; 0x20];
    t[0x10..0x18].copy_from_slice(&(83_456_789_012i64).to_le_bytes());
    t[0x18..0x20].copy_from_slice(&(1_500_000i64).to_le_bytes());
    HostEnv {
        pid: 42,
        tid: 42,
        task: TASK,
        memory: vec![(MEM, m), (EDGE, vec![0x7f, 0x01]), (TASK, t)],
        ..HostEnv::default()
    }
}

/// Fills the @cast relocations of task_struct's utime and stime as the
/// loader would from BTF.
fn relocate(p: &mut Program) {
    for tv in p.target_vars.clone() {
        let TargetSite::Cast(st) = &tv.site else {
            panic!("site {:?}", tv.site)
        };
        assert_eq!(st, "task_struct");
        let off = match tv.fields.first().map(String::as_str) {
            Some("utime") => 0x10,
            Some("stime") => 0x18,
            f => panic!("member {f:?}"),
        };
        for r in &tv.relocs {
            p.konsts[r.konst as usize] = match r.kind {
                RelocKind::Exists => 1,
                RelocKind::Offset(1) => off,
                RelocKind::Deref(1) => 1,
                RelocKind::Mask => -1,
                _ => 0,
            };
        }
    }
}

/// Runs `src` in `env()`: the output, then one `ERROR: <message>` line
/// per failed handler.
fn run(src: &str) -> String {
    let mut p = build(src).program;
    relocate(&mut p);
    let opts = RunOptions {
        env: env(),
        check: true,
        ..Default::default()
    };
    run_program(&p, &opts).expect("verifies").report("")
}

#[test]
fn checked_user_reads_give_the_value() {
    let out = run(&format!(
        "probe begin {{ printf(\"%d %d %d %d %d %d %d %d\\n\", user_char_error({MEM}), \
         user_uint8_error({MEM}), user_short_error({MEM}), user_ushort_error({MEM}), \
         user_int_error({MEM}), user_uint32_error({MEM}), user_long_error({MEM}), \
         user_short_warn({MEM})) }}"
    ));
    assert_eq!(out, "-2 254 -2 65534 -2 4294967294 -2 -2\n");
}

#[test]
fn checked_user_reads_fault_on_every_byte() {
    // The two bytes before the hole read; a long there runs into it.
    let out = run(&format!(
        "probe begin {{ printf(\"%d %d\\n\", user_char_error({EDGE}), user_short_error({EDGE})) }}
         probe begin {{ println(user_int_error({EDGE})) }}
         probe begin {{ println(user_ulong_error({HOLE})) }}
         probe begin {{ try {{ println(user_char_error({HOLE})) }} catch (m) {{ println(\"caught \", m) }} }}"
    ));
    assert_eq!(
        out,
        "127 383\ncaught user char copy fault 0x9000000 [man error::fault]\n\
         ERROR: user int copy fault 0x60ffe [man error::fault]\n\
         ERROR: user unsigned long copy fault 0x9000000 [man error::fault]\n"
    );
}

#[test]
fn warning_user_reads_give_zero_on_a_fault() {
    let out = run(&format!(
        "probe begin {{ printf(\"%d %d\\n\", user_long_warn({HOLE}), user_char_warn({MEM})) }}"
    ));
    assert_eq!(
        out,
        "WARNING: user long copy fault 0x9000000 [man error::fault]\n0 -2\n"
    );
}

#[test]
fn buffers_are_quoted_with_their_nuls() {
    let text = MEM + 8;
    let out = run(&format!(
        "probe begin {{ println(kernel_buffer_quoted({text}, 8)) \
         println(user_buffer_quoted({text}, 8, 100)) \
         println(kernel_buffer_quoted({text}, 8, 9)) \
         println(kernel_buffer_quoted({HOLE}, 4)) \
         println(user_buffer_quoted({EDGE}, 4, 100)) }}
         probe begin {{ println(kernel_buffer_quoted_error({EDGE}, 4, 100)) }}
         probe begin {{ println(user_buffer_quoted_error({EDGE}, 2, 100)) \
         println(user_buffer_quoted_error({EDGE}, 3, 100)) }}"
    ));
    assert_eq!(
        out,
        "\"a\\\"b\\0\\n\\001z\\\\\"\n\"a\\\"b\\0\\n\\001z\\\\\"\n\"a\\\"\"...\n0x9000000\n0x60ffe\n\
         \"\\177\\001\"\n\
         ERROR: kernel buffer copy fault at 0x61000 [man error::fault]\n\
         ERROR: user buffer copy fault at 0x61000 [man error::fault]\n"
    );
}

#[test]
fn task_times_are_utime_and_stime() {
    let out = run(
        "probe begin { printf(\"%d %d %d %d %d\\n\", task_utime(), task_stime(), \
         task_utime(42), task_stime(7), cputime_to_msecs(task_utime())) \
         println(task_time_string()) println(task_time_string_tid(42)) \
         println(task_time_string_tid(7)) \
         println(cputime_to_string(3723004000000)) println(usecs_to_string(61000007)) \
         println(nsecs_to_string(5)) println(msecs_to_string(0)) \
         println(cputime_to_usecs(1500000)) }",
    );
    assert_eq!(
        out,
        "83456789012 1500000 83456789012 0 83456\n\
         usr: 1m23.456s, sys: 0m0.001s\nusr: 1m23.456s, sys: 0m0.001s\n\
         usr: 0m0.000s, sys: 0m0.000s\n62m3.004s\n1m1.000007s\n0m0.000000005s\n0m0.000s\n1500\n"
    );
}

#[test]
fn rlimit_names_are_numbered() {
    let out = run(
        "probe begin { printf(\"%d %d %d %d %d\\n\", rlimit_from_str(\"RLIMIT_CPU\"), \
         rlimit_from_str(\"RLIMIT_NOFILE\"), rlimit_from_str(\"RLIMIT_RTTIME\"), \
         rlimit_from_str(\"RLIMIT_cpu\"), rlimit_from_str(\"\")) }",
    );
    assert_eq!(out, "0 7 15 -1 -1\n");
}

#[test]
fn time_zone_comes_from_the_patched_constants() {
    let src = "probe begin { println(tz_gmtoff()) println(tz_name()) println(tz_ctime(0)) }";
    let mut p = build(src).program;
    let [off, name] = p.tz_konsts.expect("tz functions use patched constants");
    // What the loader puts in for Central European Time (userspace tzinfo).
    p.konsts[off as usize] = -3600;
    p.konsts[name as usize] = i64::from_le_bytes(*b"CET\0\0\0\0\0");
    let opts = RunOptions {
        env: env(),
        check: true,
        ..Default::default()
    };
    let out = run_program(&p, &opts).expect("verifies").report("");
    assert_eq!(out, "-3600\nCET\nThu Jan  1 01:00:00 1970 CET\n");
    // Unpatched (user space without a loader): UTC's offset, no name.
    let out = run("probe begin { printf(\"%d [%s]\\n\", tz_gmtoff(), tz_name()) }");
    assert_eq!(out, "0 []\n");
}
