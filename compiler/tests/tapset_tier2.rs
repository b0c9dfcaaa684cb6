//! The tier-2 tapset functions (compiler/src/tapset/library.stp's tier-2
//! section and the helpers under them): string reads with a length or an
//! error message, user integer reads, register(), is_return(), uaddr(),
//! pid2task()/pid2execname(), modname()/probemod(), the symbolic stacks
//! and thread_indent()/indent(), run on the C core in user space with the
//! memory, registers and task given by the `HostEnv`.
mod common;
use common::*;
use vm_spec::program::{Program, RelocKind, TargetSite};
use vm_testkit::HostEnv;

/// A NUL-terminated "hello" here.
const HELLO: u64 = 0x1000;
/// Bytes 1 .. 8 here, then 0xff 0xfe 0x80 0x7f (little-endian reads).
const INTS: u64 = 0x2000;
/// A page of 'a' bytes up to 0x3fff, with nothing mapped after it.
const EDGE: u64 = 0x3000;
/// Nothing mapped here.
const HOLE: u64 = 0x900_0000;
/// The current task_struct: comm "curl" at +24.
const TASK: u64 = 0x10000;

fn env() -> HostEnv {
    let mut task = vec![0u8; 64];
    task[24..28].copy_from_slice(b"curl");
    HostEnv {
        pid: 42,
        tid: 43,
        execname: "bash".into(),
        task: TASK,
        memory: vec![
            (HELLO, b"hello\0".to_vec()),
            (INTS, vec![1, 2, 3, 4, 5, 6, 7, 8, 0xff, 0xfe, 0x80, 0x7f]),
            (EDGE, vec![b'a'; 4096]),
            (TASK, task),
        ],
        ..HostEnv::default()
    }
}

/// Fills the @cast offsets of task_execname (comm at 24) as the loader
/// would from BTF.
fn relocate(p: &mut Program) {
    for tv in p.target_vars.clone() {
        assert_eq!(tv.site, TargetSite::Cast("task_struct".into()));
        assert_eq!(tv.fields, vec!["comm".to_string()]);
        for r in &tv.relocs {
            p.konsts[r.konst as usize] = match r.kind {
                RelocKind::Offset(1) => 24,
                RelocKind::Mask => -1,
                _ => 0,
            };
        }
    }
}

/// Runs `src` (begin, every probe fired once in order, end) in `env`; the
/// output and then one `ERROR: <message>` line per failed handler.
fn run_in(src: &str, env: HostEnv) -> String {
    let mut p = build(src).program;
    relocate(&mut p);
    let fire = p
        .probes
        .iter()
        .filter(|pr| {
            let k = u32::from(pr.kind);
            k == vm_spec::abi::STP_PROBE_KPROBE || k == vm_spec::abi::STP_PROBE_KRETPROBE
        })
        .map(|pr| pr.handler)
        .collect();
    let opts = RunOptions {
        env,
        fire,
        check: true,
        ..Default::default()
    };
    run_program(&p, &opts).expect("verifies").report("")
}

fn run(src: &str) -> String {
    run_in(src, env())
}

#[test]
fn kernel_string_with_an_error_message_returns_it_on_a_fault() {
    let out = run(&format!(
        "probe begin {{ println(kernel_string({HELLO}, \"bad\")); \
         println(kernel_string({HOLE}, \"bad\")) }}"
    ));
    assert_eq!(out, "hello\nbad\n");
}

#[test]
fn kernel_string_n_cuts_at_n_and_reads_only_n_bytes() {
    let out = run(&format!(
        "probe begin {{ printf(\"[%s][%s][%s][%s]\\n\", kernel_string_n({HELLO}, 3), \
         kernel_string_n({HELLO}, 0), kernel_string_n({HELLO}, 100), \
         kernel_string_n({HELLO}, -5)) }}
         probe begin {{ println(kernel_string_n({EDGE} + 4092, 4)) }}
         probe begin {{ println(kernel_string_n({EDGE} + 4092, 5)) }}"
    ));
    // The last one runs into the unmapped page before n bytes: stap's
    // error, at the string's address.
    assert_eq!(
        out,
        "[hel][][hello][]\naaaa\nERROR: kernel string copy fault at 0x3ffc [man error::fault]\n"
    );
}

#[test]
fn user_string_n_has_stap_error_and_err_msg_forms() {
    let out = run(&format!(
        "probe begin {{ printf(\"[%s][%s]\\n\", user_string_n({HELLO}, 2), \
         user_string_n({EDGE} + 4094, 2)) }}
         probe begin {{ printf(\"[%s][%s]\\n\", user_string_n({HOLE}, 2, \"<x>\"), \
         user_string_n({HELLO}, 4, \"<x>\")) }}
         probe begin {{ println(user_string_n({HOLE}, 3)) }}"
    ));
    assert_eq!(
        out,
        "[he][aa]\n[<x>][hell]\nERROR: user string copy fault -14 at 0x9000000 [man error::fault]\n"
    );
}

#[test]
fn user_integer_reads_sign_extend_and_give_0_on_a_fault() {
    let out = run(&format!(
        "probe begin {{ printf(\"%x %x %x %x\\n\", user_long({INTS}), user_int({INTS}), \
         user_short({INTS}), user_char({INTS})) 
         printf(\"%d %d %d %d\\n\", user_int({INTS} + 8), user_short({INTS} + 8), \
         user_char({INTS} + 8), user_char({INTS} + 11))
         printf(\"%d %d %d %d %d\\n\", user_uint32({INTS} + 8), user_ushort({INTS} + 8), \
         user_uint16({INTS} + 8), user_uint8({INTS} + 8), user_int8({INTS} + 10))
         printf(\"%d %d %d %d %d\\n\", user_long({HOLE}), user_int({HOLE}), user_short({HOLE}), \
         user_char({HOLE}), user_ulong({INTS} + 9)) }}"
    ));
    assert_eq!(
        out,
        "807060504030201 4030201 201 1\n\
         2139160319 -257 -1 127\n\
         2139160319 65279 65279 255 -128\n\
         0 0 0 0 8356094\n"
    );
}

#[test]
fn register_reads_the_probe_registers_by_name() {
    let e = HostEnv {
        ip: 0xffff_ffff_8100_0000,
        retval: 0xffff_fffe,
        args: [11, 22, 33, 44, 55, -66],
        ..env()
    };
    let out = run_in(
        "probe kernel.function(\"vfs_read\") {
            printf(\"%d %d %d %d %d %d\\n\", register(\"di\"), register(\"rsi\"), register(\"dx\"),
                   register(\"rcx\"), register(\"r8\"), register(\"r9\"))
            printf(\"%x %d %d %d %d\\n\", register(\"ip\"), register(\"ax\"), register(\"eax\"),
                   u_register(\"eax\"), register(\"r15\"))
            asmlinkage()
        }
        probe kernel.function(\"vfs_write\") { println(register(\"xyz\")) }",
        e,
    );
    assert_eq!(
        out,
        "11 22 33 44 55 -66\nffffffff81000000 4294967294 -2 4294967294 0\n\
         ERROR: Unknown register: xyz\n"
    );
    // No registers (addr() is 0: begin, end, timers in the kernel).
    let out = run_in("probe begin { println(register(\"ax\")) }", env());
    assert_eq!(out, "ERROR: cannot access CPU registers in this context\n");
}

#[test]
fn is_return_is_1_only_in_return_probes_and_their_functions() {
    let out = run(
        "function f() { return is_return() }
         probe begin { printf(\"begin %d\\n\", is_return()) }
         probe kernel.function(\"vfs_read\") { printf(\"entry %d %d\\n\", is_return(), f()) }
         probe kernel.function(\"vfs_read\").return { printf(\"return %d %d\\n\", is_return(), f()) }",
    );
    assert_eq!(out, "begin 0\nentry 0 0\nreturn 1 1\n");
}

#[test]
fn uaddr_is_the_user_instruction_pointer() {
    let src = "probe kernel.function(\"vfs_read\") { printf(\"%x\\n\", uaddr()) }";
    let user = HostEnv {
        ip: 0x40_1000,
        user_mode: true,
        ..env()
    };
    assert_eq!(run_in(src, user), "401000\n");
    let kernel = HostEnv {
        ip: 0xffff_ffff_8100_0000,
        ..env()
    };
    assert_eq!(run_in(src, kernel), "0\n");
}

#[test]
fn pid2task_and_pid2execname_find_the_thread() {
    let out = run(
        "probe begin { printf(\"%d %d [%s] [%s]\\n\", pid2task(tid()) == task_current(), pid2task(7),
                              pid2execname(43), pid2execname(7)) }",
    );
    assert_eq!(out, "1 0 [curl] []\n");
}

#[test]
fn modname_and_probemod_fail_without_kernel_symbols() {
    // The user-space build has no symbols (helpers.h MODNAME): stap's
    // error where the module cannot be determined.
    let e = HostEnv {
        ip: 0xffff_ffff_8100_0000,
        ..env()
    };
    let out = run_in(
        "probe begin { println(modname(0xffffffff81000000)) }
         probe kernel.function(\"vfs_read\") { println(probemod()) }
         probe end { println(probemod()) }",
        e,
    );
    assert_eq!(
        out,
        "ERROR: Cannot determine kernel module name\n\
         ERROR: Cannot determine kernel module name\n\
         ERROR: Cannot determine kernel module name\n"
    );
}

#[test]
fn symbolic_stacks_print_one_line_per_frame() {
    let e = HostEnv {
        stack: vec![0xffff_ffff_8100_0010, 0xffff_ffff_8100_0abc],
        ..env()
    };
    let out = run_in(
        "probe begin { s = sprint_backtrace(); print(s); print_stack(backtrace());
                       print(sprint_stack(\"0x10\")); printf(\"%d\\n\", strlen(s)) }",
        e,
    );
    let l1 = " 0xffffffff81000010 : 0xffffffff81000010\n";
    let l2 = " 0xffffffff81000abc : 0xffffffff81000abc\n";
    let l3 = " 0x0000000000000010 : 0x10\n";
    assert_eq!(
        out,
        format!("{l1}{l2}{l1}{l2}{l3}{}\n", l1.len() + l2.len())
    );
}

#[test]
fn sprint_backtrace_keeps_whole_lines_within_maxstringlen() {
    let e = HostEnv {
        stack: vec![0xffff_ffff_8100_0010; 20],
        ..env()
    };
    let out = run_in(
        "probe begin { printf(\"%d\\n\", strlen(sprint_backtrace())) }",
        e,
    );
    // 41-byte lines; MAXSTRINGLEN 512 holds 12 whole ones in 511 bytes.
    assert_eq!(out, "492\n");
}

#[test]
fn thread_indent_and_indent_nest_per_thread() {
    let out = run("probe begin {
            printf(\"%s->a\\n\", thread_indent(1))
            printf(\"%s->b\\n\", thread_indent(1))
            printf(\"%s<-b\\n\", thread_indent(-1))
            printf(\"%s<-a\\n\", thread_indent(-1))
            printf(\"[%s][%s][%s]\\n\", indent(1), indent(1), indent(-1))
            printf(\"%d %d %d\\n\", thread_indent_depth(1), thread_indent_depth(1), indent_depth(0))
        }");
    assert_eq!(
        out,
        "     0 bash(43):->a\n     0 bash(43): ->b\n     0 bash(43): <-b\n     0 bash(43):<-a\n\
         [     0 :][     0 : ][     0 : ]\n0 1 0\n"
    );
}
