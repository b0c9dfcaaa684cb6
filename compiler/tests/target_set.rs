//! stap's target_set.stp: `target_set_report()` and `target_set_pid()`
//! over the set the generated probes keep (tapset/target_set.rs): the
//! target from the first begin probe, children of fork / vfork / clone /
//! clone3 returns in set members (not new threads), leaders leaving at
//! sched_process_exit. Handlers run on the C core in user space.
mod common;
use common::*;
use vm_spec::abi;
use vm_spec::program::{ProbeTarget, Program};
use vm_testkit::host::HostSession;
use vm_testkit::HostEnv;

/// Where clone3's `struct clone_args` lives.
const ARGS: u64 = USER;

/// The handler of the probe of `kind` on symbol (or tracepoint) `sym`.
fn handler(p: &Program, kind: u32, sym: &str) -> u32 {
    p.probes
        .iter()
        .find(|pr| {
            u32::from(pr.kind) == kind
                && match &pr.target {
                    ProbeTarget::Symbol { name, .. } => name == sym,
                    ProbeTarget::FirstOf(v) => v.iter().any(|n| n == sym),
                    ProbeTarget::None
                    | ProbeTarget::File { .. }
                    | ProbeTarget::Address(_)
                    | ProbeTarget::Statement { .. }
                    | ProbeTarget::User { .. }
                    | ProbeTarget::Process { .. } => false,
                }
        })
        .unwrap_or_else(|| panic!("no probe of kind {kind} on {sym}: {:#?}", p.probes))
        .handler
}

/// A syscall entry/return environment of thread `tid` of process `pid`:
/// first argument `arg1`, a clone_args whose flags are `clone3_flags`.
fn env(pid: i64, tid: i64, arg1: i64, clone3_flags: u64, retval: i64) -> HostEnv {
    HostEnv {
        pid,
        tid,
        retval,
        ..syscall_env(0, [arg1, 0, 0, 0, 0, 0], &clone3_flags.to_le_bytes())
    }
}

/// The program of `src` with `target()` patched to `target`.
fn with_target(src: &str, target: i64) -> Program {
    let mut prog = build(src).program;
    check(&prog);
    let k = prog.target_konst.expect("target() is used") as usize;
    prog.konsts[k] = target;
    prog
}

const CLONE_THREAD: i64 = 0x10000;

#[test]
fn target_set_report_follows_the_targets_descendants() {
    let p = with_target(
        "probe end { target_set_report(); printf(\"%d%d%d\\n\", target_set_pid(100), \
         target_set_pid(103), target_set_pid(7)) }",
        100,
    );
    let mut s = HostSession::from_program(&p).expect("loads");
    // Begin runs in the stapvm process (pid 50): stap's stp_pid().
    let begin = HostEnv {
        pid: 50,
        tid: 50,
        ..Default::default()
    };
    assert!(s
        .run_probes_of_kind(abi::STP_PROBE_BEGIN, &begin)
        .is_empty());
    let fork = handler(&p, abi::STP_PROBE_KRETPROBE, "__x64_sys_fork");
    let vfork = handler(&p, abi::STP_PROBE_KRETPROBE, "__x64_sys_vfork");
    let clone_in = handler(&p, abi::STP_PROBE_KPROBE, "__x64_sys_clone");
    let clone = handler(&p, abi::STP_PROBE_KRETPROBE, "__x64_sys_clone");
    let clone3_in = handler(&p, abi::STP_PROBE_KPROBE, "__x64_sys_clone3");
    let clone3 = handler(&p, abi::STP_PROBE_KRETPROBE, "__x64_sys_clone3");
    let exit = handler(&p, abi::STP_PROBE_TRACEPOINT, "sched_process_exit");
    let mut fire = |h: u32, e: HostEnv| s.run_handler(h, &e).expect("runs");
    // The target forks 102 (not in the set before: a sibling, 101, is
    // forked by an outsider), 102 vforks 103, 103 clones process 104 and
    // thread 105, 104 clone3s thread 106 and process 107; a failed fork.
    fire(fork, env(7, 7, 0, 0, 101));
    fire(fork, env(100, 100, 0, 0, 102));
    fire(vfork, env(102, 102, 0, 0, 103));
    fire(fork, env(102, 102, 0, 0, -11));
    for (flags, child) in [(17, 104), (CLONE_THREAD | 0x100, 105)] {
        // The return reads the registers the entry saved the address of.
        fire(clone_in, env(103, 103, flags, 0, 0));
        fire(clone, env(103, 103, flags, 0, child));
    }
    for (flags, child) in [(CLONE_THREAD as u64, 106), (17, 107)] {
        let mut e = env(104, 104, ARGS as i64, flags, 0);
        fire(clone3_in, e.clone());
        e.retval = child;
        fire(clone3, e);
    }
    // 104 leaves when its leader exits; 102 stays when another of its
    // threads exits.
    fire(exit, env(104, 104, 0, 0, 0));
    fire(exit, env(102, 999, 0, 0, 0));
    let errs = s.run_probes_of_kind(abi::STP_PROBE_END, &HostEnv::default());
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(
        String::from_utf8_lossy(&s.output()),
        "target set:\n50 begat 100\n100 begat 102\n102 begat 103\n104 begat 107\n110\n"
    );
}

#[test]
fn without_a_target_the_set_is_empty() {
    let p = with_target(
        "probe begin { target_set_report(); println(target_set_pid(0)) }",
        0,
    );
    let opts = RunOptions::default();
    let out = run_program(&p, &opts).expect("loads").report("");
    assert_eq!(out, "target set:\n0\n");
}

#[test]
fn a_script_of_its_own_target_set_report_gets_no_probes() {
    let p = build(
        "function target_set_report() { println(\"mine\") }\nprobe begin { target_set_report() }",
    )
    .program;
    assert_eq!(p.probes.len(), 1);
    assert_eq!(run_begin_end_ok(&p), "mine\n");
}

/// Begin and end probes of `p`, which must not fail.
fn run_begin_end_ok(p: &Program) -> String {
    run_program(p, &RunOptions::default()).expect("loads").ok()
}
