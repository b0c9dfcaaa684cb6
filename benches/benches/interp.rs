//! Interpreter bench: the C core (kmod/core/vm.c, built for user space)
//! called through `stp_run` directly, and the Rust reference VM
//! (`vm_refvm::vm`) on the same programs.
//!
//! - loop: a tight arithmetic loop on locals, ns per VM instruction (the
//!   instruction count is the reference VM's step count for the same
//!   program; both VMs execute the same instructions, which the
//!   differential tests check);
//! - hit-empty / hit-count / hit-printf: one handler run per "hit", as
//!   the kernel runs one per probe hit: an empty handler, `n++` on a
//!   global, `m[execname(), pid()]++` on an array, `s <<< pid()` on a
//!   statistic with a log histogram, and `printf("%d %s\n", pid(), execname())` (ring reserve +
//!   commit + clock included);
//! - printf-loop: 1,000 printf records per run, ns per record.
//!
//! `cargo bench -p stapvm-benches --bench interp`; see src/lib.rs for
//! STAPVM_BENCH_QUICK and STAPVM_BENCH_FILTER.
use stapvm_benches::{
    compile, count_script, image_of, loop_script, printf_loop_script, printf_script, quick,
    selected, time_ns, RawCore, GETPPID,
};
use std::time::Duration;
use vm_refvm::vm::{RefProgram, RefSession};
use vm_testkit::HostEnv;

const BUDGET: Duration = Duration::from_millis(1500);

fn env() -> HostEnv {
    HostEnv {
        pid: 4242,
        tid: 4242,
        ppid: 1,
        execname: "getppid-loop".into(),
        ..Default::default()
    }
}

/// Instructions one run of handler 0 executes (the reference VM's steps).
fn steps(prog: &vm_spec::program::Program) -> u64 {
    let mut s = RefSession::new(RefProgram::from_program(prog).expect("refvm program"));
    let rep = s.run_handler(0, &env()).expect("refvm run");
    rep.steps
}

fn main() {
    let iters: u64 = if quick() { 20_000 } else { 2_000_000 };
    println!("interp: the C core (stp_run) and the Rust reference VM, user space; median of runs");
    println!(
        "{:<14} {:<44} {:>10} {:>12} {:>12} {:>10}",
        "bench", "what", "insns/run", "C core", "refvm", "refvm/C"
    );

    if selected("loop") {
        let maxaction = (iters + 16).to_string();
        let prog = compile(&loop_script(iters), &[("MAXACTION", &maxaction)]);
        let n = steps(&prog);
        let mut core = RawCore::new(&image_of(&prog), 1 << 16);
        let c = time_ns(BUDGET, 1, || {
            let (code, _) = core.run(0);
            assert_eq!(code, 0, "loop run failed");
        });
        let mut rs = RefSession::new(RefProgram::from_program(&prog).expect("refvm"));
        let e = env();
        let r = time_ns(BUDGET, 1, || {
            rs.run_handler(0, &e).expect("refvm run");
        });
        assert_eq!(
            rs.globals()[0],
            core.global(0),
            "the two VMs disagree on the loop's result"
        );
        println!(
            "{:<14} {:<44} {:>10} {:>9.2} ns {:>9.2} ns {:>9.1}x   (per instruction)",
            "loop",
            format!("while loop, {iters} iterations, locals"),
            n,
            c / n as f64,
            r / n as f64,
            r / c
        );
    }

    for (name, what, src) in [
        (
            "hit-empty",
            "kprobe handler { } (RET): stp_run's fixed cost",
            format!("probe {GETPPID} {{ }}"),
        ),
        (
            "hit-count",
            "kprobe handler { n++ } (LDI, GADD, RET)",
            count_script(),
        ),
        (
            "hit-map",
            "kprobe handler { m[execname(), pid()]++ }",
            format!("global m; probe {GETPPID} {{ m[execname(), pid()]++ }}"),
        ),
        (
            "hit-stat",
            "kprobe handler { s <<< pid() } (@hist_log)",
            format!(
                "global s; probe {GETPPID} {{ s <<< pid() }} probe end {{ print(@hist_log(s)) }}"
            ),
        ),
        (
            "hit-printf",
            "kprobe printf(\"%d %s\\n\", pid(), execname())",
            printf_script(),
        ),
    ] {
        if !selected(name) {
            continue;
        }
        let prog = compile(&src, &[]);
        let n = steps(&prog);
        let mut core = RawCore::new(&image_of(&prog), 1 << 20);
        let batch = 10_000;
        let c = time_ns(BUDGET, batch, || {
            core.run(0);
        });
        assert_eq!(core.dropped(), 0, "the bench ring dropped records");
        let mut rs = RefSession::new(RefProgram::from_program(&prog).expect("refvm"));
        let e = env();
        let r = time_ns(BUDGET, batch, || {
            rs.run_handler(0, &e).expect("refvm run");
            rs.take_records();
        });
        println!(
            "{:<14} {:<44} {:>10} {:>9.1} ns {:>9.1} ns {:>9.1}x   (per hit)",
            name,
            what,
            n,
            c,
            r,
            r / c
        );
    }

    if selected("printf-loop") {
        let k: u64 = 1000;
        let prog = compile(&printf_loop_script(k), &[]);
        let n = steps(&prog);
        let mut core = RawCore::new(&image_of(&prog), 1 << 20);
        let before = core.produced();
        core.run(0);
        let rec_bytes = (core.produced() - before) / k;
        let c = time_ns(BUDGET, 1, || {
            core.run(0);
        });
        assert_eq!(core.dropped(), 0, "the bench ring dropped records");
        let mut rs = RefSession::new(RefProgram::from_program(&prog).expect("refvm"));
        let e = env();
        let r = time_ns(BUDGET, 1, || {
            rs.run_handler(0, &e).expect("refvm run");
            rs.take_records();
        });
        println!(
            "{:<14} {:<44} {:>10} {:>9.1} ns {:>9.1} ns {:>9.1}x   (per record, {} bytes)",
            "printf-loop",
            format!("{k} x printf(\"%d %s\\n\", i, execname())"),
            n,
            c / k as f64,
            r / k as f64,
            r / c,
            rec_bytes
        );
    }
    println!("target (design brief §6): dispatch <= 3 ns per instruction in the user-space build");
}
