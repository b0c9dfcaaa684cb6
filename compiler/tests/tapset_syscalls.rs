//! The built-in tapset (compiler/src/tapset/): syscall probe points and
//! their alias variables, `@entry`, and the library functions, compiled
//! and run on the C core in user space (`HostSession`), with the syscall's
//! saved registers and user memory given by the `HostEnv`.
mod common;
use common::*;
use compiler::Options;
use vm_spec::abi;
use vm_spec::program::{ProbeTarget, Program};
use vm_testkit::host::HostSession;
use vm_testkit::HostEnv;

/// Runs begin then end probes, which must not fail; the output.
fn run(src: &str) -> String {
    run_begin_end(src, &Default::default()).ok()
}

/// Where `syscall_env` puts the path.
const STR: u64 = USER;

/// `common::syscall_env` of `cat`, with `path` (NUL-terminated) at `STR`.
fn syscall_env(nr: i64, args: [i64; 6], path: &str) -> HostEnv {
    let mut s = path.as_bytes().to_vec();
    s.push(0);
    HostEnv {
        execname: "cat".into(),
        ..common::syscall_env(nr, args, &s)
    }
}

/// `prog` with its wildcard targets replaced by one symbol, as the loader
/// expands them.
fn expanded(prog: &Program) -> Program {
    let mut p = prog.clone();
    for pr in &mut p.probes {
        if let ProbeTarget::Symbol { name, .. } = &mut pr.target {
            if name.contains('*') {
                *name = "__x64_sys_read".into();
            }
        }
    }
    p
}

/// Fires handler `h` of `prog` in `env`, which must not fail; the output.
fn run_handler(prog: &Program, h: u32, env: &HostEnv) -> String {
    let opts = RunOptions {
        env: env.clone(),
        fire: vec![h],
        ..Default::default()
    };
    run_program(&expanded(prog), &opts).expect("verifies").ok()
}

#[test]
fn syscall_open_defines_stap_variables() {
    let c = build(
        "probe syscall.open { printf(\"%s|%s|%s|%d|%#o\\n\", name, argstr, filename, flags, mode) }",
    );
    let p = &c.program;
    assert_eq!(p.probes.len(), 1);
    // O_WRONLY|O_CREAT, 0644.
    let env = syscall_env(2, [STR as i64, 65, 0o644, 0, 0, 0], "/tmp/x");
    assert_eq!(
        run_handler(p, 0, &env),
        "open|\"/tmp/x\", O_WRONLY|O_CREAT, 0644|\"/tmp/x\"|65|0644\n"
    );
    // Without O_CREAT no mode; a NULL path.
    let env = syscall_env(2, [0, 0, 0, 0, 0, 0], "");
    assert_eq!(run_handler(p, 0, &env), "open|NULL, O_RDONLY|NULL|0|00\n");
}

#[test]
fn wildcard_name_and_argstr_come_from_the_syscall_number() {
    let c = build("probe syscall.* { printf(\"%s(%s)\\n\", name, argstr) }");
    let p = &c.program;
    assert_eq!(
        p.probes[0].target,
        ProbeTarget::Symbol {
            name: "__x64_sys_*".into(),
            offset: 0
        }
    );
    let h = p.probes[0].handler;
    // read(3, 0x1000, 512), with an int fd sign-extended.
    let env = syscall_env(0, [3, 0x1000, 512, 0, 0, 0], "");
    assert_eq!(run_handler(p, h, &env), "read(3, 0x1000, 512)\n");
    let env = syscall_env(0, [0xffff_ffff, 0x1000, 512, 0, 0, 0], "");
    assert_eq!(run_handler(p, h, &env), "read(-1, 0x1000, 512)\n");
    // openat(AT_FDCWD, "/etc/motd", O_RDONLY|O_CLOEXEC)
    let env = syscall_env(257, [-100, STR as i64, 0o2000000, 0, 0, 0], "/etc/motd");
    assert_eq!(
        run_handler(p, h, &env),
        "openat(AT_FDCWD, \"/etc/motd\", O_RDONLY|O_CLOEXEC)\n"
    );
    // A path that cannot be read prints as its address (no error).
    let env = syscall_env(2, [0x7000_0000, 0, 0, 0, 0, 0], "");
    assert_eq!(run_handler(p, h, &env), "open(0x70000000, O_RDONLY)\n");
    // getpid(): no arguments; an unknown number.
    let env = syscall_env(39, [0; 6], "");
    assert_eq!(run_handler(p, h, &env), "getpid()\n");
    let env = syscall_env(999, [0; 6], "");
    assert_eq!(run_handler(p, h, &env), "syscall_999()\n");
}

#[test]
fn wildcard_return_probes_save_the_registers_at_entry() {
    let c = build("probe syscall.open*.return { printf(\"%s = %s\\n\", name, retstr) }");
    let p = &c.program;
    let kinds: Vec<u32> = p.probes.iter().map(|x| u32::from(x.kind)).collect();
    assert_eq!(kinds, [abi::STP_PROBE_KPROBE, abi::STP_PROBE_KRETPROBE]);
    for pr in &p.probes {
        assert_eq!(
            pr.target,
            ProbeTarget::Symbol {
                name: "__x64_sys_open*".into(),
                offset: 0
            }
        );
    }
    // The saved registers live in a wrap-around array keyed by thread.
    assert!(p
        .maps
        .iter()
        .any(|m| m.wrap && m.name.starts_with("__entry_")));
    let mut s = HostSession::from_program(&expanded(p)).expect("verifies");
    let mut env = syscall_env(2, [0; 6], "");
    env.tid = 7;
    s.run_handler(p.probes[0].handler, &env).expect("entry");
    env.retval = -2;
    s.run_handler(p.probes[1].handler, &env).expect("return");
    // A return without its entry (another thread): no registers, number -1.
    env.tid = 8;
    env.retval = 5;
    s.run_handler(p.probes[1].handler, &env).expect("return");
    assert_eq!(
        String::from_utf8_lossy(&s.output()),
        "open = -2 (ENOENT)\nsyscall_-1 = 5\n"
    );
}

#[test]
fn entry_values_in_return_probes() {
    let c = build(
        "probe kernel.function(\"vfs_read\").return { printf(\"%d %d %d\\n\", @entry(tid() * 10), $return, @entry(gettimeofday_ns())) }",
    );
    let p = &c.program;
    assert_eq!(p.probes.len(), 2);
    assert_eq!(u32::from(p.probes[0].kind), abi::STP_PROBE_KPROBE);
    let mut s = HostSession::from_program(p).expect("verifies");
    let mut env = HostEnv {
        tid: 3,
        wall_ns: 1000,
        ..Default::default()
    };
    s.run_handler(p.probes[0].handler, &env).expect("entry");
    env.wall_ns = 5000;
    env.retval = 42;
    s.run_handler(p.probes[1].handler, &env).expect("return");
    // Read once: a second return of the same thread sees no entry.
    s.run_handler(p.probes[1].handler, &env).expect("return");
    assert_eq!(String::from_utf8_lossy(&s.output()), "30 42 1000\n0 42 0\n");
    // $param in a .return probe is @entry($param): an entry probe reads it.
    let c = build("probe kernel.function(\"vfs_read\").return { x = $count }");
    assert_eq!(c.program.probes.len(), 2);
    assert_eq!(c.program.target_vars.len(), 1);
    assert_eq!(
        c.program.target_vars[0].handler,
        c.program.probes[0].handler
    );
}

#[test]
fn syscall_any_uses_the_raw_syscall_tracepoints() {
    let c = build(
        "global n\nprobe syscall_any { n[name]++ }\nprobe syscall_any.return { if (retval < 0) n[name]-- }",
    );
    let p = &c.program;
    let t: Vec<(u32, ProbeTarget)> = p
        .probes
        .iter()
        .map(|x| (u32::from(x.kind), x.target.clone()))
        .collect();
    let sym = |n: &str| ProbeTarget::Symbol {
        name: n.into(),
        offset: 0,
    };
    assert_eq!(
        t,
        [
            (abi::STP_PROBE_TRACEPOINT, sym("sys_enter")),
            (abi::STP_PROBE_TRACEPOINT, sym("sys_exit"))
        ]
    );
    // sys_enter(regs, id): name from id.
    let c = build("probe syscall_any { printf(\"%s %d\\n\", name, syscall_nr) }");
    let env = HostEnv {
        args: [0, 62, 0, 0, 0, 0],
        ..Default::default()
    };
    assert_eq!(run_handler(&c.program, 0, &env), "kill 62\n");
}

#[test]
fn arg_functions_follow_the_probe() {
    // In a syscall probe: the syscall's registers; int_arg sign-extends.
    let c =
        build("probe nd_syscall.kill { printf(\"%d %d %d\\n\", int_arg(1), uint_arg(1), pid) }");
    let env = syscall_env(62, [-5 & 0xffff_ffff, 9, 0, 0, 0, 0], "");
    assert_eq!(run_handler(&c.program, 0, &env), "-5 4294967291 -5\n");
    // In a kprobe: the function's own arguments.
    let c =
        build("probe kernel.function(\"f\") { printf(\"%d %p\\n\", int_arg(2), pointer_arg(1)) }");
    let env = HostEnv {
        args: [0x1234, 0xffff_fffe, 0, 0, 0, 0],
        ..Default::default()
    };
    assert_eq!(run_handler(&c.program, 0, &env), "-2 0x1234\n");
    // returnval() / returnstr() in a .return probe.
    let c = build(
        "probe kernel.function(\"f\").return { printf(\"%d %s\\n\", returnval(), returnstr(1)) }",
    );
    let env = HostEnv {
        retval: -13,
        ..Default::default()
    };
    assert_eq!(run_handler(&c.program, 0, &env), "-13 -13 (EACCES)\n");
}

#[test]
fn precise_refusals() {
    let first = first_semantic_error;
    assert_eq!(
        first("probe begin { x = int_arg(1) }"),
        "semantic error: not supported yet: int_arg() outside a function entry probe: identifier 'int_arg' at x.stp:1:19"
    );
    assert_eq!(
        first("probe syscall.read { x = int_arg(y) }"),
        "semantic error: not supported yet: int_arg() with an argument other than a constant 1 to 6: identifier 'int_arg' at x.stp:1:26"
    );
    // The prometheus macros write to `$value`, the buffer of a procfs
    // read probe (compiler/tests/listings.rs).
    assert!(
        first("global a\nprobe begin { a[1] = 2; @prometheus_dump_array1(a, \"n\", \"k\") }")
            .starts_with("semantic error: not supported yet: $value outside a procfs read probe"),
    );
}

#[test]
fn library_functions() {
    assert_eq!(
        run("probe begin { println(ctime(0)); println(ctime(1234567890)); println(ctime(2147483647)); println(ctime(-1)) }"),
        "Thu Jan  1 00:00:00 1970\nFri Feb 13 23:31:30 2009\nTue Jan 19 03:14:07 2038\n<invalid time>\n"
    );
    assert_eq!(
        run("probe begin { printf(\"%s %s [%s] %d %d\\n\", errno_str(2), errno_str(-13), errno_str(4095), errno_p(-2), errno_p(5)) }"),
        "ENOENT EACCES [] 2 0\n"
    );
    assert_eq!(
        run("probe begin { printf(\"%s|%s|%s|%s\\n\", return_str(1, -2), return_str(2, 255), return_str(3, 8), return_str(1, -5000)) }"),
        "-2 (ENOENT)|0xff|010|-5000\n"
    );
    assert_eq!(
        run("probe begin { printf(\"%s %s %s\\n\", syscall_name(0), syscall_name(231), syscall_name(-1)) }"),
        "read exit_group syscall_-1\n"
    );
    assert_eq!(
        run("probe begin { start_stopwatch(\"a\"); stop_stopwatch(\"a\"); x = read_stopwatch_us(\"a\"); start_stopwatch(\"b\"); delete_stopwatch(\"b\"); printf(\"%d %d\\n\", x >= 0, read_stopwatch_ns(\"b\")) }"),
        "1 0\n"
    );
    assert_eq!(
        run("probe begin { ansi_set_color(31, 40, 1); ansi_reset_color(); ansi_set_color(32, 41, 0); ansi_new_line(); ansi_set_color(33); ansi_set_color(34, 42) }"),
        "\x1b[31;40;1m\x1b[0;0m\x1b[32;41m\n\x1b[33m\x1b[34;42m"
    );
    // ctime() is now: 24 characters.
    assert_eq!(run("probe begin { println(strlen(ctime())) }"), "24\n");
    // The script's own definition wins.
    assert_eq!(
        run("function ctime(x) { return \"mine\" }\nprobe begin { println(ctime(0)) }"),
        "mine\n"
    );
}

#[test]
fn user_string_with_a_default() {
    let c = build(
        "probe kernel.function(\"f\") { printf(\"%s|%s\\n\", user_string(pointer_arg(1), \"-\"), user_string(pointer_arg(2), \"-\")) }",
    );
    let mut env = syscall_env(0, [0; 6], "/x");
    env.args = [STR as i64, 0x7000_0000, 0, 0, 0, 0];
    assert_eq!(run_handler(&c.program, 0, &env), "/x|-\n");
}

#[test]
fn argv_globals_are_the_script_arguments() {
    let opts = RunOptions {
        compile: Options {
            defines: vec![],
            args: vec!["5".into()],
        },
        ..Default::default()
    };
    let r = run_begin_end(
        "probe begin { printf(\"[%s] [%s]\\n\", argv_1, argv_2) }",
        &opts,
    );
    assert_eq!(r.output(), "[5] []\n");
}

#[test]
fn stap_alias_variables_from_the_syscall_vars_table() {
    // fanotify_mark(fd, flags, mask, dirfd, pathname): stap's names, the
    // 64-bit mask in one register (ulonglong_arg), the unquoted path.
    let c = build(
        "probe syscall.fanotify_mark { printf(\"%d|%u|%#x|%d|%s\\n\", fanotify_fd, flags, mask, dirfd, pathname_unquoted) }",
    );
    let env = syscall_env(301, [3, 1, 0x1_0000_0008, -100, STR as i64, 0], "/tmp/m");
    assert_eq!(
        run_handler(&c.program, 0, &env),
        "3|1|0x100000008|-100|/tmp/m\n"
    );
    // stap's pread is the kernel's pread64, its offset the fourth argument.
    let c = build(
        "probe syscall.pread { printf(\"%s|%d|%p|%u|%d\\n\", name, fd, buf_uaddr, count, offset) }",
    );
    assert_eq!(
        c.program.probes[0].target,
        ProbeTarget::FirstOf(vec![
            "__x64_sys_pread64".into(),
            "__se_sys_pread64".into(),
            "sys_pread64".into()
        ])
    );
    let env = syscall_env(17, [4, 0x1000, 512, 4096, 0, 0], "");
    assert_eq!(
        run_handler(&c.program, 0, &env),
        "pread|4|0x1000|512|4096\n"
    );
}

#[test]
fn points_of_system_calls_x86_64_lacks_are_dropped() {
    let c =
        build("probe syscall.adjtimex, syscall.compat_adjtimex ? { printf(\"%p\\n\", buf_uaddr) }");
    assert_eq!(c.program.probes.len(), 1);
    let env = syscall_env(159, [0x2000, 0, 0, 0, 0, 0], "");
    assert_eq!(run_handler(&c.program, 0, &env), "0x2000\n");
}
