//! timer.profile and perf.* probe points, and the context and
//! symbol functions (`addr`, `user_mode`, `symname`, `symdata`,
//! `probefunc`, `ppfunc`, `pexecname`, `backtrace`, `print_backtrace`,
//! `print_syms`) run on the C core in user space, which has no kernel
//! symbols (symname/symdata give the hex form; helpers.h).
mod common;
use vm_spec::abi;
use vm_testkit::HostEnv;

/// Runs the begin probes, one timer probe run (every script here has at
/// most one timer probe) and the end probes with `env`; the output, then
/// an `ERROR:` line per run-time error.
fn run(src: &str, env: &HostEnv) -> String {
    let opts = common::RunOptions {
        env: env.clone(),
        timers: 1,
        ..Default::default()
    };
    common::run_begin_end(src, &opts).report("")
}

#[test]
fn profile_points_are_per_cpu_timers() {
    let c = common::build("probe timer.profile { } probe timer.profile.tick { }");
    let got: Vec<(u32, u8, u64)> = c
        .program
        .probes
        .iter()
        .map(|p| (u32::from(p.kind), p.flags, p.period_ns))
        .collect();
    let f = abi::STP_PROBE_F_PROFILE as u8;
    let t = abi::STP_PROBE_TIMER;
    assert_eq!(got, [(t, f, 0), (t, f, 0)]);
    assert!(common::fail("probe timer.profile(5) { }").contains("probe point mismatch"));
}

/// (kind, flags, sample period, type, config) of every probe of `src`.
fn perf_points(src: &str) -> Vec<(u32, u8, u64, u32, u64)> {
    common::build(src)
        .program
        .probes
        .iter()
        .map(|p| {
            let e = p.perf.expect("a perf event");
            (
                u32::from(p.kind),
                p.flags,
                p.period_ns,
                e.event_type,
                e.config,
            )
        })
        .collect()
}

#[test]
fn perf_points_name_their_event() {
    let k = abi::STP_PROBE_PERF;
    let (hw, sw, cache) = (
        abi::STP_PERF_TYPE_HARDWARE,
        abi::STP_PERF_TYPE_SOFTWARE,
        abi::STP_PERF_TYPE_HW_CACHE,
    );
    let task = abi::STP_PROBE_F_PERF_TASK as u8;
    assert_eq!(
        perf_points(
            "probe perf.sw.cpu_clock { } probe perf.sw.cpu_clock.sample(2000000) { } \
             probe perf.sw.page_faults.sample(1) { } probe perf.sw.emulation_faults { } \
             probe perf.hw.cpu_cycles { } probe perf.hw.ref_cpu_cycles.sample(5).process { } \
             probe perf.hw_cache.ll.write.miss { } probe perf.type(4).config(0x1c2).sample(77) { } \
             probe perf.sw.context_switches.process { }"
        ),
        [
            (k, 0, 1_000_000, sw, 0),
            (k, 0, 2_000_000, sw, 0),
            (k, 0, 1, sw, 2),
            (k, 0, 1_000_000, sw, 8),
            (k, 0, 1_000_000, hw, 0),
            (k, task, 5, hw, 9),
            (k, 0, 1_000_000, cache, 2 | 1 << 8 | 1 << 16),
            (k, 0, 77, abi::STP_PERF_TYPE_RAW, 0x1c2),
            (k, task, 1_000_000, sw, 3),
        ]
    );
    // The handler is verified as a timer's: addr() and user_mode() work.
    let c =
        common::build("probe perf.sw.page_faults { printf(\"%x %d\\n\", addr(), user_mode()) }");
    assert_eq!(
        u32::from(c.program.handlers[c.program.probes[0].handler as usize].ctx),
        abi::STP_CTX_TIMER
    );
}

#[test]
fn perf_points_refused_with_the_reason() {
    for (bad, why) in [
        (
            "probe perf.sw.cpu_clock.sample(10) { }",
            "counts nanoseconds",
        ),
        (
            "probe perf.sw.task_clock.sample(10) { }",
            "counts nanoseconds",
        ),
        (
            "probe perf.sw.page_fault { }",
            "probe point mismatch (similar: page_faults",
        ),
        ("probe perf.hw { }", "probe point mismatch"),
        (
            "probe perf.sw.page_faults.sample(0) { }",
            "sample value out of range",
        ),
        (
            "probe perf.type(2).config(1) { }",
            "perf event type 2 is not supported",
        ),
        (
            "probe perf.type(1).config(9) { }",
            "perf event type 1 has no config 9",
        ),
        ("probe perf.type(0).config(10) { }", "has no config 10"),
        ("probe perf.hw_cache.l1d.read { }", "probe point mismatch"),
        (
            "probe perf.sw.page_faults.process(\"/bin/ls\") { }",
            "not supported yet: perf events of one executable",
        ),
        (
            "probe perf.hw.instructions.counter(\"a\") { }",
            "not supported yet: perf counters",
        ),
        (
            "probe perf.sw.page_faults.sample(5).bogus { }",
            "probe point mismatch",
        ),
    ] {
        let got = common::fail(bad);
        assert!(got.contains(why), "{bad}: {got}");
    }
}

#[test]
fn context_and_symbol_functions_in_user_space() {
    let src = r#"probe timer.profile {
  printf("%x %d [%s] [%s] [%s] [%s]\n", addr(), user_mode(), symname(addr()),
         symdata(4096), probefunc(), ppfunc())
  printf("[%s] [%s]\n", pexecname(), backtrace())
}"#;
    let env = HostEnv {
        ip: 0xffff_ffff_8100_1234,
        user_mode: true,
        pexecname: "bash".into(),
        stack: vec![0xffff_ffff_8100_1234, 0x10, 0xffff_ffff_8200_0000],
        ..Default::default()
    };
    assert_eq!(
        run(src, &env),
        "ffffffff81001234 1 [0xffffffff81001234] [0x1000] \
         [0xffffffff81001234] [0xffffffff81001234]\n\
         [bash] [0xffffffff81001234 0x10 0xffffffff82000000]\n"
    );
    // No registers: addr() 0, probefunc() "".
    let out = run(
        "probe begin { printf(\"%d [%s] %d\\n\", addr(), probefunc(), user_mode()) }",
        &HostEnv::default(),
    );
    assert_eq!(out, "0 [] 0\n");
}

#[test]
fn backtrace_keeps_whole_frames_and_stap_s_limit() {
    let env = HostEnv {
        stack: (0..30).map(|i| 0x1000 + i).collect(),
        ..Default::default()
    };
    let out = run("probe begin { b = backtrace(); println(b) }", &env);
    let frames: Vec<&str> = out.trim_end().split(' ').collect();
    assert_eq!(frames.len(), abi::STP_MAX_BACKTRACE as usize);
    assert_eq!(frames[0], "0x1000");
    // MAXSTRINGLEN 16: "0x1000 0x1001" fits (13 bytes), a third does not.
    let opts = common::RunOptions {
        compile: compiler::Options {
            defines: vec![("MAXSTRINGLEN".into(), "16".into())],
            args: Vec::new(),
        },
        env,
        ..Default::default()
    };
    let r = common::run_begin_end("probe begin { println(backtrace()) }", &opts);
    assert_eq!(r.output(), "0x1000 0x1001\n");
}

#[test]
fn print_syms_and_print_backtrace_print_stap_lines() {
    let env = HostEnv {
        stack: vec![0xffff_ffff_8100_1234, 0x2a],
        ..Default::default()
    };
    let want = " 0xffffffff81001234 : 0xffffffff81001234\n 0x000000000000002a : 0x2a\n";
    let out = run("probe begin { print_backtrace() }", &env);
    assert_eq!(out, want);
    let out = run(
        "global t\nprobe begin { t[backtrace()]++; foreach (s in t) print_syms(s); print_syms(\"\") }",
        &env,
    );
    assert_eq!(out, want);
}

#[test]
fn pp_is_the_probe_point_as_written() {
    let out = run(
        "probe begin { println(pp()) } probe begin(5) { x = pp(); println(x) }",
        &HostEnv::default(),
    );
    assert_eq!(out, "begin\nbegin(5)\n");
    // A handler of several points, and a function, see the probe that
    // fired (the helper PP), not a constant.
    let out = run(
        "function f() { return pp() } probe begin, end { println(pp(), \" \", f()) }",
        &HostEnv::default(),
    );
    assert_eq!(out, "begin begin\nend end\n");
    let p = common::build("probe begin { println(pp()) }").program;
    assert!(p.handlers[0].code.iter().any(|i| {
        u32::from(i.op) == vm_spec::abi::STP_OP_CALLS && i.imm == vm_spec::abi::STP_HLP_PP as i32
    }));
}

/// probefunc()/ppfunc() in a `.return` probe name the probed function:
/// the symbol of the address at entry (`@entry(addr())`), not of addr()
/// at return (the caller's return address).
#[test]
fn probefunc_in_return_probes_is_the_probed_function() {
    for src in [
        "probe kernel.function(\"vfs_read\").return { print(probefunc()) }",
        "probe syscall.read.return { print(ppfunc()) }",
    ] {
        let p = common::build(src).program;
        // An entry probe saves addr(); the return probe prints its symbol.
        assert_eq!(p.probes.len(), 2, "{src}");
        let entry = &p.handlers[p.probes[0].handler as usize];
        let ret = &p.handlers[p.probes[1].handler as usize];
        let calls = |h: &vm_spec::program::Handler, op: u32, helper: u32| {
            h.code
                .iter()
                .any(|i| u32::from(i.op) == op && i.imm == helper as i32)
        };
        use vm_spec::abi::*;
        assert!(calls(entry, STP_OP_CALLI, STP_HLP_ADDR), "{src}");
        assert!(!calls(ret, STP_OP_CALLI, STP_HLP_ADDR), "{src}");
        assert!(calls(ret, STP_OP_CALLS, STP_HLP_SYMNAME), "{src}");
    }
}

#[test]
fn watch_points_name_address_length_and_access() {
    let c = common::build(
        "probe kernel.data(\"pid_max\").write { } probe kernel.data(0xffffffff82000010).length(8).rw { } \
         probe kernel.data(\"vm_dirty_ratio\").length(4).write { }",
    );
    let got: Vec<(u32, String, u64, u32, bool)> = c
        .program
        .probes
        .iter()
        .map(|p| {
            let w = p.watch.expect("a watchpoint");
            let target = match &p.target {
                vm_spec::program::ProbeTarget::Symbol { name, .. } => name.clone(),
                _ => String::new(),
            };
            (u32::from(p.kind), target, w.address, w.len, w.rw)
        })
        .collect();
    let k = abi::STP_PROBE_WATCH;
    assert_eq!(
        got,
        [
            (k, "pid_max".into(), 0, 1, false),
            (k, String::new(), 0xffff_ffff_8200_0010, 8, true),
            (k, "vm_dirty_ratio".into(), 0, 4, false),
        ]
    );
    // The handler is a timer's: addr() and backtraces read the registers.
    assert_eq!(
        u32::from(c.program.handlers[c.program.probes[0].handler as usize].ctx),
        abi::STP_CTX_TIMER
    );
    // hw_watch_sym.stp's guard: the option every supported kernel has.
    let c = common::build(
        "probe %( CONFIG_HAVE_HW_BREAKPOINT == \"y\" %? kernel.data(\"pid_max\").rw %: never %) { }",
    );
    assert_eq!(c.program.probes.len(), 1);
    for (bad, why) in [
        (
            "probe kernel.data(\"pid_max\").length(3).write { }",
            "watches 1, 2, 4 or 8 bytes",
        ),
        (
            "probe kernel.data(0x1002).length(4).write { }",
            "not aligned to its length 4",
        ),
        ("probe kernel.data(0).write { }", "is 0 or not aligned"),
        ("probe kernel.data(\"pid_max\") { }", "probe point mismatch"),
        (
            "probe kernel.data(\"pid_max\").read { }",
            "probe point mismatch",
        ),
        (
            "probe kernel.data(\"pid_max\").write.rw { }",
            "probe point mismatch",
        ),
        ("probe kernel.data.write { }", "probe point mismatch"),
    ] {
        let got = common::fail(bad);
        assert!(got.contains(why), "{bad}: {got}");
    }
}

#[test]
fn perf_name_tables_match_the_abi_bounds() {
    // The names are the compiler's, the bounds abi.h's: they must agree,
    // or a named event would be refused by the verifier (or a valid config
    // have no name).
    use compiler::passes::resolve::perf::*;
    assert_eq!(SW_EVENTS.len() as u32, abi::STP_PERF_SW_MAX);
    assert_eq!(HW_EVENTS.len() as u32, abi::STP_PERF_HW_MAX);
    assert_eq!(CACHE_IDS.len() as u32, abi::STP_PERF_CACHE_ID_MAX);
    assert_eq!(CACHE_OPS.len() as u32, abi::STP_PERF_CACHE_OP_MAX);
    assert_eq!(CACHE_RESULTS.len() as u32, abi::STP_PERF_CACHE_RESULT_MAX);
    assert_eq!(SW_EVENTS[abi::STP_PERF_SW_CPU_CLOCK as usize], "cpu_clock");
    assert_eq!(
        SW_EVENTS[abi::STP_PERF_SW_TASK_CLOCK as usize],
        "task_clock"
    );
}
