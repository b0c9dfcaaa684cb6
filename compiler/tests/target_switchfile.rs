//! stap's process and output options seen from a script, run on the C core
//! in user space: `target()` (the constant the loader patches for `-x` /
//! `-c`), `switch_file()` (a PRINTF of `Program::switch_file_format`,
//! which user space turns into a file switch), `exit()` in a long context
//! (`c && exit()`, stap's untyped function) and `cmdline_str()` (empty in
//! user space, which has no mm).
mod common;
use vm_spec::program::Program;
use vm_testkit::HostEnv;

/// Runs the begin (then end) probes of `prog` as process `pid`; output,
/// then an `ERROR:` line per run-time error.
fn run(prog: &Program, pid: i64) -> String {
    let opts = common::RunOptions {
        env: HostEnv {
            pid,
            ..HostEnv::default()
        },
        ..Default::default()
    };
    common::run_program(prog, &opts)
        .expect("verifies")
        .report("")
}

#[test]
fn target_is_zero_until_the_loader_patches_it() {
    let src = "probe begin { printf(\"%d %d\\n\", target(), pid() == target()) }\n\
               function f() { return target() }\n\
               probe begin { printf(\"%d\\n\", f()) }";
    let mut prog = common::build(src).program;
    assert_eq!(run(&prog, 4242), "0 0\n0\n");
    let k = prog.target_konst.expect("target() uses a patched constant") as usize;
    prog.konsts[k] = 4242;
    assert_eq!(run(&prog, 4242), "4242 1\n4242\n");
    assert_eq!(run(&prog, 7), "4242 0\n4242\n");
    common::image(&prog);
}

#[test]
fn switch_file_is_a_record_of_its_own_format() {
    let src = "probe begin { print(\"\"); println(\"a\"); switch_file(); println(\"b\") }";
    let prog = common::build(src).program;
    let f = prog.switch_file_format.expect("switch_file() format") as usize;
    let h = &prog.handlers[prog.probes[0].handler as usize];
    let uses = common::printf_formats(h);
    assert_eq!(uses.iter().filter(|&&u| u == f).count(), 1, "{uses:?}");
    // print("") has the same (empty) text but not the switch's format.
    assert_eq!(uses.len(), 4);
    assert_eq!(run(&prog, 1), "a\nb\n");
    assert_eq!(
        common::build("probe begin { }").program.switch_file_format,
        None
    );
}

#[test]
fn exit_in_a_long_context_is_zero() {
    let src = "probe begin { a = 1; n = 0\n a && (++n == 1) && exit()\n b = (0 || exit())\n printf(\"%d %d\\n\", n, b) }";
    assert_eq!(run(&common::build(src).program, 1), "1 0\n");
    // As a statement it stays void.
    let e = common::fail("probe begin { x = exit() }");
    assert!(e.contains("type mismatch"), "{e}");
}

#[test]
fn cmdline_functions_without_an_mm_are_empty() {
    let src = "probe begin { printf(\"[%s][%s][%s]\\n\", cmdline_str(), cmdline_arg(0), cmdline_args(0, -1, \",\")) }";
    let prog = common::build(src).program;
    assert_eq!(run(&prog, 1), "[][][]\n");
    common::image(&prog);
}

#[test]
fn target_set_pid_is_the_target_alone() {
    let src = "probe begin { printf(\"%d %d\\n\", target_set_pid(pid()), target_set_pid(0)) }";
    let mut prog = common::build(src).program;
    assert_eq!(run(&prog, 5), "0 0\n");
    let k = prog.target_konst.expect("patched constant") as usize;
    prog.konsts[k] = 5;
    assert_eq!(run(&prog, 5), "1 0\n");
}
