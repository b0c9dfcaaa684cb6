//! The tier-7 tapset functions (compiler/src/tapset/library.stp's tier-7
//! section): uconversions.stp's checked reads (`user_*_error`,
//! `user_*_warn`), the buffer quoting of conversions.stp and
//! uconversions.stp, task_time.stp, rlimit.stp, tzinfo.stp and
//! floatingpoint.stp, run on the C core in user space with the memory of
//! the `HostEnv`.
// 3.14 is the value stap's floatingpoint tests use, not an approximation
// of pi.
#![allow(clippy::approx_constant)]
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

/// The bits of `x`, as the scripts hold a double.
fn b(x: f64) -> i64 {
    x.to_bits() as i64
}

/// Runs one begin probe per expression of `exprs` (each with its own
/// MAXACTION budget), printing its value on a line.
fn lines(exprs: &[String]) -> Vec<String> {
    let src: String = exprs
        .iter()
        .map(|e| format!("probe begin {{ println({e}) }}\n"))
        .collect();
    run(&src).lines().map(str::to_string).collect()
}

#[test]
fn fp_arithmetic_is_rounded_as_ieee() {
    let vals = [
        3.14,
        11.21,
        -2.5,
        1e-310,
        1.0 / 3.0,
        6.02e23,
        -0.0,
        1e300,
        0.1,
    ];
    let mut exprs = Vec::new();
    let mut want = Vec::new();
    for &x in &vals {
        for &y in &vals {
            for (f, r) in [
                ("fp_add", x + y),
                ("fp_sub", x - y),
                ("fp_mul", x * y),
                ("fp_div", x / y),
            ] {
                exprs.push(format!("{f}({}, {})", b(x), b(y)));
                want.push(
                    if r.is_nan() {
                        b(f64::NAN) | i64::MIN
                    } else {
                        b(r)
                    }
                    .to_string(),
                );
            }
            for (f, r) in [("fp_lt", x < y), ("fp_le", x <= y), ("fp_eq", x == y)] {
                exprs.push(format!("{f}({}, {})", b(x), b(y)));
                want.push(i64::from(r).to_string());
            }
        }
        exprs.push(format!("fp_sqrt({})", b(x)));
        let r = x.sqrt();
        want.push(
            if r.is_nan() {
                b(f64::NAN) | i64::MIN
            } else {
                b(r)
            }
            .to_string(),
        );
    }
    assert_eq!(lines(&exprs), want);
}

#[test]
fn fp_conversions() {
    let exprs: Vec<String> = [
        format!("fp_to_string({}, 5)", b(3.14)),
        format!("fp_to_string({}, 2)", b(3.25)),
        format!("fp_to_string({}, 3)", b(-0.5)),
        format!("fp_to_string({}, 0)", b(1234.9)),
        format!("fp_to_string({}, 4)", b(1e-5)),
        format!("fp_to_string(fp_div({}, 0), 1)", b(1.0)),
        format!("fp_to_string({}, 6)", b(123456789.0625)),
        "fp_to_string(string_to_fp(\"3.14\"), 5)".to_string(),
        "string_to_fp(\"3.14\")".to_string(),
        "string_to_fp(\"11.21\")".to_string(),
        "string_to_fp(\"-1.5e3\")".to_string(),
        "string_to_fp(\"0.1\")".to_string(),
        "string_to_fp(\"2.5E-3\")".to_string(),
        "string_to_fp(\"123456789012345678\")".to_string(),
        "long_to_fp(3)".to_string(),
        "long_to_fp(-9007199254740993)".to_string(),
        format!("fp_to_long({}, 0, 0)", b(3.14)),
        format!("fp_to_long({}, 0, 0)", b(2.5)),
        format!("fp_to_long({}, 4, 0)", b(2.5)),
        format!("fp_to_long({}, 1, 0)", b(-2.7)),
        format!("fp_to_long({}, 2, 0)", b(-2.1)),
        format!("fp_to_long({}, 3, 0)", b(2.1)),
        format!("fp_to_long({}, 0, 0)", b(1e19)),
        format!("fp32_to_fp64({})", 1.1f32.to_bits()),
        format!("fp32_to_fp64({})", 1e-40f32.to_bits()),
    ]
    .to_vec();
    let want: Vec<String> = [
        "3.14000".to_string(),
        "3.25".to_string(),
        "-0.500".to_string(),
        "1234".to_string(),
        "0.0000".to_string(),
        "inf".to_string(),
        "123456789.062500".to_string(),
        "3.14000".to_string(),
        "4614253070214989087".to_string(),
        "4622500287032611308".to_string(),
        b(-1.5e3).to_string(),
        b(0.1).to_string(),
        b(2.5e-3).to_string(),
        b(123456789012345678.0).to_string(),
        b(3.0).to_string(),
        b(-9007199254740993.0).to_string(),
        "3".to_string(),
        "2".to_string(),
        "3".to_string(),
        "-2".to_string(),
        "-3".to_string(),
        "3".to_string(),
        i64::MIN.to_string(),
        b(f64::from(1.1f32)).to_string(),
        b(f64::from(1e-40f32)).to_string(),
    ]
    .to_vec();
    assert_eq!(lines(&exprs), want);
}

#[test]
fn string_to_fp_refuses_what_is_not_a_number() {
    let out = run("probe begin { try { println(string_to_fp(\"deadbeef\")) } \
         catch (msg) { println(\"caught error: \", msg) } }
         probe begin { println(string_to_fp(\"1.5x\")) }");
    assert_eq!(out, "caught error: invalid format\nERROR: invalid format\n");
}

#[test]
fn one_handler_does_a_whole_calculation() {
    // The begin probe of stap's buildok/floatingpoint.stp in kind: every
    // function once, within one handler's MAXACTION.
    let (a, c) = (b(3.14), b(11.21));
    let out = run(&format!(
        "function p(x) {{ println(fp_to_string(x, 5)) }}
         probe begin {{ p({a}) p(string_to_fp(\"3.14\")) p(string_to_fp(\"1.0\")) \
         p(long_to_fp(3)) println(fp_to_long({a}, 0, 0)) p(fp_add({c}, {a})) \
         p(fp_sub({c}, {a})) p(fp_mul({c}, {a})) p(fp_div({c}, {a})) p(fp_sqrt({a})) \
         printf(\"%d%d%d %d%d%d %d%d%d\\n\", fp_lt({c}, {a}), fp_le({c}, {a}), \
         fp_eq({c}, {a}), fp_lt({a}, {c}), fp_le({a}, {c}), fp_eq({a}, {a}), \
         fp_lt({a}, {a}), fp_le({a}, {a}), fp_eq({a}, {a})) }}"
    ));
    assert_eq!(
        out,
        "3.14000\n3.14000\n1.00000\n3.00000\n3\n14.35000\n8.07000\n35.19940\n3.57006\n\
         1.77200\n000 111 011\n"
    );
}

#[test]
fn fp_rem_is_refused_as_not_supported() {
    let msg = first_semantic_error("probe begin { println(fp_rem(1, 2)) }");
    assert!(
        msg.contains("not supported yet: function fp_rem()"),
        "{msg}"
    );
}
