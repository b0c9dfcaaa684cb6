//! The tier-8 context, memory, process and signal tapset functions
//! (compiler/src/tapset/library_ctx.stp, builtins.rs, kernel/nfs.stp):
//! the pure ones run on the C core in user space with their output
//! checked; the kernel-reading ones (proc_mem_*, ns_*, caller,
//! _stp_syscall_nr) compile here and run in the guest case
//! tests/cases/tapset-tier8-b; the refused ones give their reason.
mod common;
use common::*;
use compiler::{compile_for, Options, Target};

fn out(src: &str) -> String {
    run_begin_end(src, &RunOptions::default()).report("")
}

#[test]
fn bytes_and_pages_to_string_are_five_wide_with_a_unit() {
    let o = out(
        "probe begin { println(bytes_to_string(0), \"|\", bytes_to_string(1023), \"|\", \
         bytes_to_string(1536), \"|\", bytes_to_string(150 * 1024), \"|\", \
         bytes_to_string(50 * 1048576 + 524288), \"|\", bytes_to_string(3 * 1073741824), \"|\", \
         pages_to_string(3), \"|\", mem_page_size()) }",
    );
    assert_eq!(o, "    0| 1023|1.50K| 150K|50.5M|3.00G|12.0K|4096\n");
}

#[test]
fn number_postfix_and_text_adjust_follow_proc_mem() {
    let o = out(
        "probe begin { println(_stp_number_to_string_postfix(1, 0, \"\"), \
         \"|\", _stp_mem_txt_adjust(0x401010, 0x402001), \"|\", _stp_mem_txt_adjust(0, 0), \
         \"|\", _MM_FILEPAGES(), _MM_ANONPAGES()) }",
    );
    // 0x401000 .. 0x403000: two pages.
    assert_eq!(o, "1.00|2|0|01\n");
}

#[test]
fn proc_mem_in_begin_has_no_task_memory() {
    // A begin probe runs in the loader's context in the kernel; in user
    // space task_current() is 0, so every figure is 0 (no task).
    let o = out(
        "probe begin { println(_stp_valid_task(0), proc_mem_size(), proc_mem_rss(0), \
         proc_mem_data(0), \" \", proc_mem_string()) }",
    );
    assert_eq!(
        o,
        "0000 size:     0, rss:     0, shr:     0, txt:     0, data:     0\n"
    );
}

#[test]
fn ns_functions_equal_the_init_namespace_ones() {
    let o = out(
        "probe begin { println(ns_pid() == pid(), ns_tid() == tid(), ns_ppid() == ppid(), \
         ns_uid() == uid(), ns_euid() == euid(), ns_gid() == gid(), ns_egid() == egid(), \
         ns_pgrp() == pgrp(), ns_sid() == sid()) }",
    );
    assert_eq!(o, "111111111\n");
}

#[test]
fn signal_strings() {
    let o = out(
        "probe begin { println(sa_flags_str(0x14000004), \"|\", sa_flags_str(0), \"|\", \
         sa_flags_str(0x80000001), \"|\", sa_handler_str(0), \" \", sa_handler_str(1), \" \", \
         sa_handler_str(-1), \" \", sa_handler_str(0x401000)) }",
    );
    assert_eq!(
        o,
        "SIGINFO|RESTORER|RESTART||NOCLDSTOP|RESETHAND|default ignored error 0x401000\n"
    );
}

#[test]
fn symfileline_without_debuginfo_is_the_hex_address() {
    let o = out(
        "probe begin { println(symfileline(0x1234), \" \", symfile(0x1234), \" \", symline(255)) }",
    );
    assert_eq!(o, "0x1234 0x1234 0xff\n");
}

#[test]
fn unwind_functions_without_a_stack() {
    // No kernel stack in user space: backtrace() is empty, so is every
    // caller.
    let o = out("probe begin { println(caller_addr(), \"|\", callers(3), \"|\", callers(-1), \"|\", caller()) }");
    assert_eq!(o, "0|||0x0 0x0\n");
}

#[test]
fn print_regs_prints_nothing_without_registers() {
    assert_eq!(
        out("probe begin { print_regs() println(\"done\") }"),
        "done\n"
    );
}

#[test]
fn returnval_outside_a_return_probe_reads_the_return_register() {
    // stap reads rax there; a begin probe has no registers: an error.
    let o = out("probe begin { println(returnval()) }");
    assert!(
        o.contains("ERROR: cannot access CPU registers in this context"),
        "{o}"
    );
    let c = build("probe kernel.function(\"do_exit\") { println(returnval(), returnstr(1)) }");
    check(&c.program);
}

#[test]
fn pn_is_the_probe_point_as_written() {
    assert_eq!(out("probe begin { println(pn()) }"), "begin\n");
}

#[test]
fn kernel_reading_functions_compile() {
    let c = build(
        "probe kernel.function(\"do_exit\") { println(proc_mem_size(), proc_mem_rss(pid()), \
         proc_mem_shr(1), proc_mem_txt(), proc_mem_data(2), proc_mem_string(1), \
         proc_mem_size_pid(1), pgrp(), sid(), _stp_syscall_nr(), \
         is_sig_blocked(task_current(), 9), caller(), callers(2)) print_regs() }",
    );
    check(&c.program);
}

#[test]
fn refused_functions_say_why() {
    for (src, why) in [
        ("probe begin { ftrace(\"x\") }", "ftrace ring buffer"),
        // matched() itself works (compiler/tests/regex_groups.rs); a
        // pattern past the group program's caps is refused.
        (
            "probe begin { if (\"ab\" =~ \"(a)(a)(a)(a)(a)(a)(a)(a)(a)(a)(a)(a)(a)(a)(a)(a)\") println(matched(1)) }",
            "regex subexpressions of",
        ),
    ] {
        let e = first_semantic_error(src);
        assert!(
            e.contains("not supported yet") && e.contains(why),
            "{src}: {e}"
        );
    }
}

#[test]
fn get_ip_from_client_type_follows_compatible() {
    let src =
        "probe kernel.function(\"do_exit\") { x = get_ip_from_client(0) + get_ip(0) println(x) }";
    let old = Target {
        systemtap_v: "4.2".into(),
        ..Target::default()
    };
    let c = compile_for("x.stp", src, &Options::default(), &old).expect("long form under 4.2");
    check(&c.program);
    let e = first_semantic_error(src);
    assert!(e.contains("type mismatch"), "{e}");
    let c = build("probe kernel.function(\"do_exit\") { println(get_ip_from_client(0) . \"\") }");
    check(&c.program);
}

#[test]
fn context_module_stack_and_environment() {
    // No task in user space: no environment; begin has no registers, so
    // stack_used() is an error there.
    let o = out(
        "probe begin { println(module_name(), \"|\", env_var(\"TERM\"), \"|\", stack_size()) }",
    );
    assert_eq!(o, "stapvm||16384\n");
    let o = out("probe begin { println(stack_used()) }");
    assert!(
        o.contains("ERROR: stack_used(): no kernel stack pointer"),
        "{o}"
    );
    let c = build("probe kernel.function(\"do_exit\") { println(stack_used(), stack_unused(), env_var(\"PATH\")) }");
    check(&c.program);
}

/// `stp_pid()` and `is_myproc()` read the loader's pid and uid from the
/// constants it patches (`Program::loader_konsts`, userspace tzinfo.rs):
/// is_myproc is 1 for a task whose euid is the loader's uid, else 0.
#[test]
fn stp_pid_and_is_myproc_read_the_loader_constants() {
    let src = "probe begin { printf(\"%d %d\\n\", stp_pid(), is_myproc()) }";
    let mut p = build(src).program;
    let [pid, uid] = p
        .loader_konsts
        .expect("stp_pid and is_myproc use patched constants");
    assert_ne!(pid, uid);
    p.konsts[pid as usize] = 4242;
    p.konsts[uid as usize] = 1000;
    let run_as = |euid: i64| {
        let opts = RunOptions {
            env: vm_testkit::HostEnv {
                euid,
                ..Default::default()
            },
            check: true,
            ..Default::default()
        };
        run_program(&p, &opts).expect("verifies").report("")
    };
    assert_eq!(run_as(1000), "4242 1\n");
    assert_eq!(run_as(0), "4242 0\n");
    // A program without them asks the loader for nothing.
    assert_eq!(
        build("probe begin { print(pid()) }").program.loader_konsts,
        None
    );
}
