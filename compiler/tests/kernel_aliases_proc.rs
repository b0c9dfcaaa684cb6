//! The process and kernel alias families (compiler/src/tapset/kernel/
//! scheduler.stp, kprocess.stp, signal.stp, memory.stp, irq.stp): which
//! points each alias arms, which target variables a script's reads
//! compute, that the wildcards of stap's `-all-probes` scripts expand,
//! and the families' helper functions run on the C core in user space
//! with the values stap's C code gives.
mod common;
use common::aliases::{points, vars};
use common::{build, run_begin_end, RunOptions};
use vm_spec::program::Program;
use vm_testkit::HostEnv;

/// The program of `src`, or a panic with the rendered diagnostics.
fn prog(src: &str) -> Program {
    build(src).program
}

fn displays(p: &Program) -> Vec<String> {
    points(p).into_iter().map(|x| x.0).collect()
}

/// The begin/end output of `src` on the C core, then one `ERROR:` line
/// per run-time error.
fn run(src: &str) -> String {
    run_env(src, HostEnv::default())
}

/// As `run`, in environment `env`.
fn run_env(src: &str, env: HostEnv) -> String {
    let opts = RunOptions {
        env,
        check: true,
        ..Default::default()
    };
    run_begin_end(src, &opts).report("")
}

#[test]
fn scheduler_aliases_are_the_sched_tracepoints() {
    let p = prog("probe scheduler.ctxswitch { printf(\"%d %s\\n\", next_pid, prev_task_name) }");
    assert_eq!(displays(&p), ["kernel.trace(\"sched_switch\")"]);
    let v = vars(&p);
    assert!(v.contains(&"$next->tgid".to_string()), "{v:?}");
    // prev_task_name is task_execname($prev): the comm through @cast.
    assert!(v.iter().any(|x| x.ends_with("->comm")), "{v:?}");
    assert!(
        !v.iter().any(|x| x.contains("prio")),
        "priorities not read: {v:?}"
    );

    let p = prog("probe scheduler.wakeup, scheduler.wakeup_new { print(task_pid) }");
    assert_eq!(
        displays(&p),
        [
            "kernel.trace(\"sched_wakeup\")",
            "kernel.trace(\"sched_wakeup_new\")"
        ]
    );
    assert_eq!(vars(&p), ["$p->tgid", "$p->tgid"]);

    // The tracepoint first, stap's function fallback after it (`!`).
    let p = prog("probe scheduler.process_exit { print(pid) }");
    assert_eq!(
        points(&p),
        [
            (
                "kernel.trace(\"sched_process_exit\")!".to_string(),
                "sched_process_exit".to_string()
            ),
            (
                "kernel.function(\"do_exit\")".to_string(),
                "do_exit".to_string()
            )
        ]
    );
    let p = prog("probe scheduler.migrate { printf(\"%d %d\\n\", cpu_from, cpu_to) }");
    assert_eq!(
        displays(&p),
        [
            "kernel.trace(\"sched_migrate_task\")!",
            "kernel.function(\"set_task_cpu\")"
        ]
    );
    let v = vars(&p);
    assert!(v.contains(&"$dest_cpu".to_string()), "{v:?}");
    assert!(v.contains(&"$new_cpu".to_string()), "{v:?}");
}

#[test]
fn kprocess_aliases() {
    let p = prog("probe kprocess.exit { print(code) }");
    assert_eq!(displays(&p), ["kernel.trace(\"sched_process_exit\")"]);
    assert_eq!(vars(&p), ["$p->exit_code"]);
    let p = prog("probe kprocess.release { printf(\"%d %d\\n\", released_pid, released_tid) }");
    assert_eq!(displays(&p), ["kernel.function(\"release_task\")"]);
    assert_eq!(
        vars(&p),
        [
            "$p",
            "$p",
            "@cast(task_struct)->tgid",
            "@cast(task_struct)->pid"
        ]
    );
    let p = prog("probe kprocess.start { print(1) }");
    assert_eq!(displays(&p), ["kernel.function(\"schedule_tail\")"]);
    // exec_complete: the exec system calls' return, errno their retval.
    let p = prog("probe kprocess.exec_complete { printf(\"%d %d\\n\", errno, success) }");
    let targets: Vec<String> = points(&p).into_iter().map(|x| x.1).collect();
    assert!(
        targets.iter().any(|t| t.contains("execve"))
            && targets.iter().any(|t| t.contains("execveat")),
        "{targets:?}"
    );
    assert!(p.probes.len() >= 2);
}

#[test]
fn signal_memory_and_irq_aliases() {
    let p = prog("probe signal.handle { printf(\"%d %s\\n\", sig_code, sig_mode) }");
    assert_eq!(displays(&p), ["kernel.trace(\"signal_deliver\")"]);
    let v = vars(&p);
    assert!(v.contains(&"$info->si_code".to_string()), "{v:?}");
    let p = prog("probe signal.checkperm { print(sig_pid) }");
    assert_eq!(displays(&p), ["kernel.function(\"check_kill_permission\")"]);

    let p = prog("probe vm.pagefault { printf(\"%d %d\\n\", write_access, address) }");
    assert_eq!(displays(&p), ["kernel.function(\"handle_mm_fault\")"]);
    let v = vars(&p);
    assert!(
        v.contains(&"$flags".to_string()) && v.contains(&"$address".to_string()),
        "{v:?}"
    );
    let p = prog("probe vm.kmalloc { print(bytes_alloc) }");
    assert_eq!(
        displays(&p),
        [
            "kernel.trace(\"kmalloc\")!",
            "kernel.function(\"kmem_cache_alloc\")?",
            "kernel.function(\"kmem_cache_alloc\").return?"
        ]
    );
    let p = prog("probe irq_handler.entry { printf(\"%d %s\\n\", irq, flags_str) }");
    assert_eq!(displays(&p), ["kernel.trace(\"irq_handler_entry\")"]);
    let v = vars(&p);
    assert!(v.contains(&"$irq".to_string()), "{v:?}");
    assert!(v.contains(&"$action->flags".to_string()), "{v:?}");
    let p = prog("probe softirq.entry, workqueue.execute { print(1) }");
    assert_eq!(
        displays(&p),
        [
            "kernel.trace(\"softirq_entry\")",
            "kernel.trace(\"workqueue_execute_start\")"
        ]
    );
}

/// stap's `-all-probes` scripts: each family under a wildcard.
#[test]
fn family_wildcards_expand() {
    for (src, at_least) in [
        ("probe scheduler.* {}", 14),
        ("probe kprocess.* {}", 6),
        ("probe signal.*, signal.*.return {}", 26),
        ("probe vm.* {}", 13),
        ("probe workqueue.* !, never {} probe irq_handler.* !, never {} probe softirq.* !, never {}", 8),
    ] {
        let p = prog(src);
        assert!(p.probes.len() >= at_least, "{src}: {:?}", displays(&p));
    }
}

/// The tapset's own unused globals (VM_FAULT_*) draw no warning.
#[test]
fn unused_tapset_globals_are_dropped_silently() {
    let c = build("probe vm.pagefault { print(address) }");
    assert!(
        !c.warnings.iter().any(|w| w.contains("VM_FAULT")),
        "{:?}",
        c.warnings
    );
    let c =
        build("probe vm.pagefault.return { print(vm_fault_contains(fault_type, VM_FAULT_MAJOR)) }");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn helper_functions_give_stap_s_values() {
    // vm_fault_contains on the vm_fault_t bits (MAJOR 0x4, NOPAGE 0x100,
    // SIGBUS 0x2; MINOR: none of OOM, SIGBUS, MAJOR).
    assert_eq!(
        run(
            "probe vm.brk {} probe begin { printf(\"%d%d%d%d%d%d\\n\", \
             vm_fault_contains(0, VM_FAULT_MINOR), vm_fault_contains(4, VM_FAULT_MINOR), \
             vm_fault_contains(4, VM_FAULT_MAJOR), vm_fault_contains(0x102, VM_FAULT_NOPAGE), \
             vm_fault_contains(0x102, VM_FAULT_ERROR), vm_fault_contains(0x100, VM_FAULT_ERROR)) }"
        ),
        "101110\n"
    );
    assert_eq!(
        run(
            "probe vm.brk {} probe begin { println(__gfp_flag_str(GFP_KERNEL())) \
             println(__gfp_flag_str(0x2 | 0x40 | 0x2000)) println(__gfp_flag_str(0xa20)) }"
        ),
        "GFP_KERNEL\n__GFP_HIGHMEM | __GFP_IO | __GFP_NOWARN\nGFP_ATOMIC\n"
    );
    // A user address is not a kernel virtual address, as stap says.
    assert_eq!(
        run(
            "probe vm.brk {} probe begin { try { println(addr_to_node(0x1000)) } \
             catch (e) { println(e) } }"
        ),
        "invalid kernel virtual address 0x1000\n"
    );
    assert_eq!(
        run(
            "probe irq_handler.entry {} probe begin { println(_irqflags_str(0)) \
             println(_irqflags_str(0x2080)) println(_irqflags_str(0x14281)) }"
        ),
        "0x0\nIRQF_SHARED|IRQF_ONESHOT\nIRQF_SHARED|IRQF_TIMER|0x1\n"
    );
    assert_eq!(
        run(
            "probe kprocess.exit {} probe begin { printf(\"%d %d %d\\n\", \
             _IS_ERR(-2), _IS_ERR(-4096), _IS_ERR(0x1000)) }"
        ),
        "1 0 0\n"
    );
    // stap's idle test: the current task's pid (the thread id) is 0.
    let idle = "probe scheduler.tick {} probe begin { println(__is_idle()) }";
    assert_eq!(
        run_env(
            idle,
            HostEnv {
                tid: 0,
                ..HostEnv::default()
            }
        ),
        "1\n"
    );
    assert_eq!(
        run_env(
            idle,
            HostEnv {
                tid: 42,
                ..HostEnv::default()
            }
        ),
        "0\n"
    );
    assert_eq!(
        run(
            "probe signal.send {} probe begin { println(__signal_si_code(0)) \
             println(__signal_si_code(1)) }"
        ),
        "SI_USER or SI_TIMER or SI_ASYNCIO\n\
         SI_KERNEL (SIGFPE, SIGSEGV, SIGTRAP, SIGCHLD, SIGPOLL)\n"
    );
}
