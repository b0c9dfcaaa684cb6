//! The tier-1 tapset functions of ../shared/research/systemtap.md that
//! came last, run on the C core in user space with stap's outputs:
//! `abort()`, `assert()`, `log()`, `warn()`, `egid()`, `HZ()`,
//! `get_cycles()`, `local_clock_us/ms/s()`, `cpu_clock_ns/us/ms/s(cpu)`,
//! `ktime_get_ns()`, `isdigit()`, `randint()`, `ansi_cursor_*()`,
//! `probe_type()`, `argc` and `argv[]`.
mod common;
use common::{run_begin_end, run_program, RunOptions};
use compiler::Options;
use vm_spec::abi;
use vm_testkit::HostEnv;

/// Output then one `ERROR:` line per run-time error of `src`'s begin and
/// end probes, in environment `env` (the verifier checks it first).
fn run_env(src: &str, env: HostEnv) -> String {
    let opts = RunOptions {
        env,
        check: true,
        ..Default::default()
    };
    run_begin_end(src, &opts).report("")
}

fn run(src: &str) -> String {
    run_env(src, HostEnv::default())
}

#[test]
fn log_prints_a_line_and_ansi_cursor_codes_are_stap_s() {
    assert_eq!(run("probe begin { log(\"a b\"); log(\"\") }"), "a b\n\n");
    assert_eq!(
        run("probe begin { ansi_cursor_hide(); ansi_cursor_show(); \
             ansi_cursor_save(); ansi_cursor_restore() }"),
        "\x1b[>5I\x1b[>5h\x1b[s\x1b[u"
    );
}

#[test]
fn isdigit_looks_at_the_first_character() {
    let src = "probe begin { printf(\"%d%d%d%d%d%d\\n\", isdigit(\"0\"), isdigit(\"9abc\"), \
               isdigit(\"a9\"), isdigit(\"\"), isdigit(\"/\"), isdigit(\":\")) }";
    assert_eq!(run(src), "110000\n");
}

#[test]
fn assert_raises_a_catchable_error() {
    assert_eq!(
        run("probe begin { assert(1); assert(2, \"x\"); println(\"ok\") }"),
        "ok\n"
    );
    assert_eq!(
        run("probe begin { assert(0); println(\"no\") }"),
        "ERROR: Assertion failed\n"
    );
    assert_eq!(
        run("probe begin { assert(1 > 2, \"one is not more\") }"),
        "ERROR: one is not more\n"
    );
    assert_eq!(
        run(
            "probe begin { try { assert(0, \"m\") } catch (e) { println(\"caught \", e) } \
             try { assert(0) } catch (e) { println(\"caught \", e) } }"
        ),
        "caught m\ncaught Assertion failed\n"
    );
}

#[test]
fn abort_ends_the_handler_and_the_session_uncaught() {
    let src = "function f(n) { if (n == 0) abort(); return f(n - 1) + 1 }\n\
               probe begin { println(\"a\"); try { x = f(3); println(\"no \", x) } \
               catch { println(\"caught\") } println(\"no\") }\n\
               probe begin { println(\"second begin\") }\n\
               probe end { println(\"end\") }";
    let ran = run_begin_end(
        src,
        &RunOptions {
            check: true,
            ..Default::default()
        },
    );
    // No error, no catch, nothing after it; end probes still run (stap
    // sets STOPPING as exit() does). Later begin probes are the session's
    // business (stapvm.ko skips them after an exit request).
    assert!(ran.errors.is_empty(), "{:?}", ran.errors);
    assert!(ran.session.exit_requested());
    let out = ran.output();
    assert!(out.starts_with("a\n"), "{out}");
    assert!(out.ends_with("end\n"), "{out}");
    assert!(!out.contains("no") && !out.contains("caught"), "{out}");
    // In an expression it is a long, as exit().
    assert_eq!(
        run("probe begin { x = 1 && abort(); println(x) } probe end { println(\"e\") }"),
        "e\n"
    );
}

#[test]
fn the_kernel_values_come_from_the_environment() {
    let env = HostEnv {
        gid: 5,
        egid: 77,
        hz: 250,
        cycles: 123_456_789,
        ..HostEnv::default()
    };
    assert_eq!(
        run_env(
            "probe begin { printf(\"%d %d %d %d\\n\", gid(), egid(), HZ(), get_cycles()) }",
            env
        ),
        "5 77 250 123456789\n"
    );
}

#[test]
fn the_monotonic_clocks_move_forward_in_their_units() {
    // User space: every clock read is one tick later (HostSession).
    let src = "probe begin { a = ktime_get_ns(); b = ktime_get_ns(); c = local_clock_ns(); \
               printf(\"%d %d\\n\", b > a, c > b) \
               printf(\"%d %d %d\\n\", local_clock_us() >= c / 1000, \
               local_clock_ms() >= c / 1000000, local_clock_s() >= c / 1000000000) \
               d = cpu_clock_ns(cpu()); printf(\"%d %d %d %d\\n\", d > c, \
               cpu_clock_us(cpu()) >= d / 1000, cpu_clock_ms(cpu()) >= d / 1000000, \
               cpu_clock_s(cpu()) >= d / 1000000000) }";
    assert_eq!(run(src), "1 1\n1 1 1\n1 1 1 1\n");
}

#[test]
fn cpu_clock_of_an_offline_cpu_is_stap_s_error() {
    let env = HostEnv {
        cpu: 1,
        online_mask: 0b101,
        ..HostEnv::default()
    };
    let src = "probe begin { printf(\"%d %d %d\\n\", cpu_clock_ns(0) > 0, \
               cpu_clock_us(1) >= 0, cpu_clock_s(2) >= 0) } \
               probe begin { println(cpu_clock_ns(3)) } \
               probe begin { println(cpu_clock_ms(-1)) }";
    assert_eq!(
        run_env(src, env),
        "1 1 1\nERROR: cpu 3 is not online\nERROR: cpu -1 is not online\n"
    );
}

#[test]
fn randint_is_below_n_and_refuses_wide_ranges() {
    let env = HostEnv {
        random: 1_234_567,
        ..HostEnv::default()
    };
    let src = "probe begin { printf(\"%d %d %d %d %d\\n\", randint(1000), randint(1), \
               randint(0), randint(1048576), randint(7)) }";
    assert_eq!(
        run_env(src, env.clone()),
        format!("567 0 0 {} {}\n", 1_234_567 % 1_048_576, 1_234_567 % 7)
    );
    for n in ["-1", "1048577", "-9223372036854775808"] {
        assert_eq!(
            run_env(
                &format!("probe begin {{ println(randint({n})) }}"),
                env.clone()
            ),
            "ERROR: range too wide\n",
            "randint({n})"
        );
    }
}

#[test]
fn warn_is_a_record_of_its_own_format() {
    let src = "probe begin { printf(\"WARNING: %s\\n\", \"p\"); warn(\"careful\"); \
               printf(\"WARNING: %s\\n\", \"q\") }";
    let c = common::build(src);
    let prog = &c.program;
    let f = prog.warn_format.expect("warn() format") as usize;
    assert_eq!(prog.formats[f].text, "WARNING: %s\n");
    let h = &prog.handlers[prog.probes[0].handler as usize];
    let uses = common::printf_formats(h);
    // The printf of the same text has a format of its own.
    assert_eq!(uses.len(), 3);
    assert_eq!(uses.iter().filter(|&&u| u == f).count(), 1, "{uses:?}");
    assert_eq!(uses[0], uses[2]);
    assert_eq!(common::build("probe begin { }").program.warn_format, None);
    let ran = run_program(prog, &RunOptions::default()).expect("verifies");
    assert_eq!(ran.ok(), "WARNING: p\nWARNING: careful\nWARNING: q\n");
}

/// The output of the probe of kind `kind` in `src`, run once (a timer
/// probe's handler, a kprobe's ...).
fn fire_first(src: &str, kind: u32) -> String {
    let prog = common::build(src).program;
    let h = prog
        .probes
        .iter()
        .find(|p| u32::from(p.kind) == kind)
        .map(|p| p.handler)
        .expect("probe of that kind");
    let opts = RunOptions {
        fire: vec![h],
        check: true,
        ..Default::default()
    };
    run_program(&prog, &opts).expect("verifies").ok()
}

#[test]
fn probe_type_names_the_low_level_probe() {
    assert_eq!(
        run(
            "probe begin { println(probe_type()) } probe end { println(probe_type()) } \
             probe error { println(probe_type()) }"
        ),
        "begin_end\nbegin_end\n"
    );
    let cases: [(&str, u32, &str); 8] = [
        ("timer.ms(100)", abi::STP_PROBE_TIMER, "hrtimer"),
        ("timer.jiffies(5)", abi::STP_PROBE_TIMER, "timer"),
        ("timer.hz(10)", abi::STP_PROBE_TIMER, "hrtimer"),
        ("timer.profile", abi::STP_PROBE_TIMER, "perf_event"),
        (
            "kernel.function(\"vfs_read\")",
            abi::STP_PROBE_KPROBE,
            "kprobe",
        ),
        (
            "kprobe.function(\"vfs_read\").return",
            abi::STP_PROBE_KRETPROBE,
            "kretprobe",
        ),
        ("syscall.read", abi::STP_PROBE_KPROBE, "kprobe"),
        (
            "syscall_any",
            abi::STP_PROBE_TRACEPOINT,
            "kernel_tracepoint",
        ),
    ];
    for (point, kind, want) in cases {
        let src = format!("probe {point} {{ println(probe_type()) }}");
        assert_eq!(fire_first(&src, kind), format!("{want}\n"), "{point}");
    }
    // Points of one kind share a handler and its constant; of several, no.
    assert_eq!(
        fire_first(
            "probe timer.s(1), timer.ms(5) { println(probe_type()) }",
            abi::STP_PROBE_TIMER
        ),
        "hrtimer\n"
    );
    let e = common::fail("probe begin, timer.s(1) { println(probe_type()) }");
    assert!(e.contains("probe_type()"), "{e}");
}

#[test]
fn argc_and_argv_are_the_script_arguments() {
    let opts = RunOptions {
        compile: Options {
            args: vec!["a".into(), "b \"c\"".into()],
            ..Default::default()
        },
        check: true,
        ..Default::default()
    };
    let src = "probe begin { n = 0; foreach (k in argv) n++; \
               printf(\"%d [%s] [%s] [%s] %d %s\\n\", argc, argv[1], argv[2], argv[3], n, argv_2) }";
    assert_eq!(
        run_begin_end(src, &opts).ok(),
        "2 [a] [b \"c\"] [] 32 b \"c\"\n"
    );
    // Without arguments; argc is a global the script may set.
    assert_eq!(
        run("probe begin { printf(\"%d [%s]\\n\", argc, argv[1]); argc = 3; println(argc) }"),
        "0 []\n3\n"
    );
    // A script's own argc / argv wins.
    assert_eq!(
        run("global argc = 7, argv probe begin { argv[1] = \"x\"; println(argc, argv[1]) }"),
        "7x\n"
    );
}

#[test]
fn null_is_null_stp_s_long_global() {
    assert_eq!(
        run("probe begin { p = NULL; printf(\"%d %d\\n\", p, NULL == 0) }"),
        "0 1\n"
    );
    let e = common::first_semantic_error("probe begin { if (\"foo\" == NULL) log(\"boo\") }");
    assert!(e.contains("type mismatch"), "{e}");
}

#[test]
fn a_syscall_return_without_its_entry_reads_its_arguments_as_0() {
    // Only the return probe runs: its entry probe was skipped (or armed
    // while the call ran), so `@entry` saved no registers. The arguments
    // read 0, as the return variables do, instead of a read fault at 0x70
    // (seen on 7.3: target_set's `syscall.clone.return`).
    assert_eq!(
        fire_first(
            "probe syscall.clone.return { printf(\"%d %d %d\\n\", ulong_arg(1), int_arg(2), retval) }",
            abi::STP_PROBE_KRETPROBE
        ),
        "0 0 0\n"
    );
}
