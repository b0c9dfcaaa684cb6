//! End-to-end tests of the `stapvm` binary that need no kernel module:
//! `dump` of a hand-built program, the errors of `load` and `debug
//! load-image` when /dev/stapvm is absent, probe resolution failures,
//! stap's command-line form (-p 1..5, --version) and the usage errors.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use vm_spec::abi;
use vm_spec::program::*;

fn stapvm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stapvm"))
        .args(args)
        .output()
        .expect("run stapvm")
}

/// stapvm run in `dir`.
fn stapvm_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stapvm"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run stapvm")
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("stapvm-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn program(target: ProbeTarget, optional: bool) -> Program {
    Program {
        source_name: "hello.stp".into(),
        source: "probe begin { printf(\"hello %s\\n\", \"world\") }\n".into(),
        compiler_version: "hand".into(),
        limits: default_limits(),
        strings: vec![b"world".to_vec()],
        formats: vec![Format {
            text: "hello %s\n".into(),
            args: vec![ArgKind::Str],
        }],
        handlers: vec![Handler {
            ctx: abi::STP_CTX_KPROBE as u8,
            nregs: 0,
            nsregs: 1,
            code: vec![
                Insn::new(abi::STP_OP_SLDK, 0, 0, 0, 0),
                Insn::new(abi::STP_OP_PRINTF, 0, 0, 0, 0),
                Insn::new(abi::STP_OP_RET, 0, 0, 0, 0),
            ],
            locs: vec![SrcLoc { line: 1, col: 15 }; 3],
            probe_point: "kprobe.function(\"f\")".into(),
        }],
        probes: vec![Probe {
            kind: abi::STP_PROBE_KPROBE as u8,
            flags: if optional {
                abi::STP_PROBE_F_OPTIONAL as u8
            } else {
                0
            },
            handler: 0,
            target,
            maxactive: 0,
            period_ns: 0,
            randomize: 0,
            perf: None,
            watch: None,
            netfilter: None,
            uprobe: None,
            display: "kprobe.function(\"no_such_function_xyz\")".into(),
        }],
        ..Default::default()
    }
}

fn write_stpb(dir: &Path, prog: &Program) -> PathBuf {
    let p = dir.join("p.stpb");
    std::fs::write(&p, vm_spec::container::write(prog)).unwrap();
    p
}

fn missing_symbol() -> ProbeTarget {
    ProbeTarget::Symbol {
        name: "no_such_function_xyz".into(),
        offset: 0,
    }
}

fn device_present() -> bool {
    Path::new("/dev/stapvm").exists()
}

#[test]
fn dump_disassembles() {
    let d = tmpdir("dump");
    let p = write_stpb(&d, &program(missing_symbol(), false));
    let out = stapvm(&["dump", p.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("  0000  SLDK     s0, str#0 \"world\""),
        "{text}"
    );
    assert!(text.contains("  0001  PRINTF   fmt#0 \"hello %s\\n\", r0.., s0.."));
    assert!(text.contains("  0002  RET"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn dump_of_a_non_program_is_an_error() {
    let d = tmpdir("bad");
    let p = d.join("x.stpb");
    std::fs::write(&p, b"not a program").unwrap();
    let out = stapvm(&["dump", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("ERROR: "), "{err}");
    assert!(err.contains("not a stapvm program (bad magic)"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn list_echoes_points_without_symbols_and_refuses_bad_ones() {
    let out = stapvm(&["list", "timer.s(1)", "begin", "begin"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "begin\ntimer.s(1)\n"
    );
    let out = stapvm(&["list", "foo.bar"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("probe point mismatch"), "{err}");
    assert!(!err.contains("ERROR:"), "{err}");
}

#[test]
fn load_names_the_unresolvable_probe_point() {
    let d = tmpdir("unres");
    let p = write_stpb(&d, &program(missing_symbol(), false));
    let out = stapvm(&["load", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err,
        "ERROR: probe point 'kprobe.function(\"no_such_function_xyz\")' cannot be resolved: \
         the kernel has no function 'no_such_function_xyz' (not in /proc/kallsyms)\n"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn load_without_the_module() {
    if device_present() {
        return;
    }
    let d = tmpdir("nomod");
    let mut prog = program(ProbeTarget::None, false);
    prog.handlers[0].ctx = abi::STP_CTX_BEGIN as u8;
    prog.probes[0].kind = abi::STP_PROBE_BEGIN as u8;
    let p = write_stpb(&d, &prog);
    let out = stapvm(&["load", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "ERROR: stapvm.ko is not loaded (no /dev/stapvm)\n"
    );
    // An optional unresolvable probe alongside: warned about, then the
    // missing module is the error.
    let mut prog2 = prog.clone();
    let mut opt = program(missing_symbol(), true).probes.remove(0);
    opt.display = "kprobe.function(\"no_such_function_xyz\")?".into();
    prog2.probes.push(opt);
    let p = write_stpb(&d, &prog2);
    let out = stapvm(&["load", p.to_str().unwrap()]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with(
            "WARNING: optional probe point 'kprobe.function(\"no_such_function_xyz\")?' skipped"
        ),
        "{err}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn debug_load_image_without_the_module_exits_2() {
    if device_present() {
        return;
    }
    let d = tmpdir("img");
    let p = d.join("x.img");
    std::fs::write(&p, b"STPI").unwrap();
    let out = stapvm(&["debug", "load-image", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn stap_form_passes_and_version() {
    let d = tmpdir("passes");
    let script = "probe begin { printf(\"hi\\n\"); exit() }";
    // -p1 and -p2 check, -p3 prints the bytecode, -p4 writes a.stpb and
    // prints its name, as stap -p4 prints its module's.
    for p in ["-p1", "-p2"] {
        let out = stapvm_in(&d, &[p, "-e", script]);
        assert_eq!(out.status.code(), Some(0), "{p}: {out:?}");
    }
    let out = stapvm_in(&d, &["-p3", "-e", script]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("PRINTF"), "{text}");
    assert!(!d.join("a.stpb").exists());
    let out = stapvm_in(&d, &["-p", "4", "-e", script]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "a.stpb\n");
    assert!(d.join("a.stpb").exists());
    // A syntax error stops -p1 with stap's message.
    let out = stapvm_in(&d, &["-p1", "-e", "probe begin {"]);
    assert_eq!(out.status.code(), Some(1));
    let out = stapvm(&["--version"]);
    let v = String::from_utf8(out.stdout).unwrap();
    assert!(
        v.starts_with("stapvm ") && v.contains(".stpb format") && v.contains("image ABI"),
        "{v}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn usage_errors() {
    let out = stapvm(&["compile"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "ERROR: no script given (a script file, '-' for standard input, or -e SCRIPT)\n"
    );
    // stap's form: a first word that is no subcommand is the script.
    let out = stapvm(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("ERROR: cannot read script frobnicate"),
        "{err}"
    );
    let out = stapvm(&["--frobnicate", "x.stp"]);
    assert_eq!(out.status.code(), Some(2), "clap usage error");
    let out = stapvm(&["-p", "6", "x.stp"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "ERROR: Invalid pass number '6' (should be 1-5).\n"
    );
    let out = stapvm(&["run", "/nonexistent/x.stp"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("ERROR: cannot read script /nonexistent/x.stp"),
        "{err}"
    );
}

#[test]
fn guru_mode_is_refused_with_the_reason() {
    let want = "ERROR: -g (guru mode) is not available: stapvm runs only verified bytecode \
                and has no guru mode (there is no -g)\n";
    for args in [
        &["-g", "x.stp"][..],
        &["run", "-g", "-e", "probe begin { exit() }"],
        &["compile", "x.stp", "-g"],
        &["check", "-g", "x.stp"],
    ] {
        let out = stapvm(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(String::from_utf8(out.stderr).unwrap(), want, "{args:?}");
    }
}

#[test]
fn embedded_c_is_refused_once() {
    let out = stapvm(&["check", "-e", "%{ int a; %}\n%{ int b; %}\nprobe begin { }"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.matches("embedded C cannot run").count(), 1, "{err}");
    assert!(err.contains("at <input>:1:1"), "{err}");
}

#[test]
fn compile_then_dump() {
    let d = tmpdir("compile");
    let out = d.join("h.stpb");
    let r = stapvm(&[
        "compile",
        "-e",
        "probe begin { printf(\"hi %s\\n\", @1); exit() }",
        "-o",
        out.to_str().unwrap(),
        "there",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let r = stapvm(&["dump", out.to_str().unwrap()]);
    let text = String::from_utf8(r.stdout).unwrap();
    assert!(text.contains("source:    <input>"), "{text}");
    assert!(text.contains("str#0    \"there\""), "{text}");
    assert!(text.contains("PRINTF   fmt#0 \"hi %s\\n\""), "{text}");
    assert!(text.contains("EXIT"), "{text}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn compile_default_output_name() {
    let d = tmpdir("defout");
    std::fs::write(d.join("trace.stp"), "probe begin { exit() }\n").unwrap();
    let r = Command::new(env!("CARGO_BIN_EXE_stapvm"))
        .current_dir(&d)
        .args(["compile", "trace.stp"])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(d.join("trace.stpb").exists());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn compiler_errors_are_printed_as_rendered() {
    let r = stapvm(&["compile", "-e", "probe begin { x = \"a\" + 1 }"]);
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8(r.stderr).unwrap();
    assert!(err.contains("<input>:1:"), "{err}");
    assert!(
        err.ends_with("Pass 2: analysis failed.  [man error::pass2]\n"),
        "{err}"
    );
    assert!(!err.contains("ERROR: 1 error"), "no extra summary: {err}");
}

#[test]
fn check_and_parse_only() {
    let bad_types = "probe begin { x = \"a\" + 1 }";
    let r = stapvm(&["check", "-e", bad_types]);
    assert_eq!(r.status.code(), Some(1));
    let r = stapvm(&["check", "--parse-only", "-e", bad_types]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    // stap -p1: the parse tree printed back as script text.
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        "# parse tree dump\n# file <input>\nprobe begin {\n  x = \"a\" + 1;\n}\n"
    );
    let r = stapvm(&["check", "--parse-only", "-e", "probe begin { x = }"]);
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8(r.stderr).unwrap();
    assert!(
        err.ends_with("Pass 1: parse failed.  [man error::pass1]\n"),
        "{err}"
    );
    let r = stapvm(&["check", "-e", "probe begin { exit() }"]);
    assert!(r.status.success());
}

#[test]
fn run_from_stdin_without_the_module() {
    if device_present() {
        return;
    }
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_stapvm"))
        .args(["run", "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"probe begin { exit() }\n")
        .unwrap();
    let r = child.wait_with_output().unwrap();
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(r.stderr).unwrap(),
        "ERROR: stapvm.ko is not loaded (no /dev/stapvm)\n"
    );
}

/// The strings of `compile --disasm` (`str#N "text"` lines).
fn disasm_strings(args: &[&str]) -> Vec<String> {
    let r = stapvm(args);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    String::from_utf8(r.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("str#"))
        .filter_map(|l| {
            l.split_once('"')
                .map(|(_, s)| s.trim_end_matches('"').to_string())
        })
        .collect()
}

#[test]
fn kernel_v_is_the_target_release() {
    let script = "probe begin { print(%( kernel_v == \"5.10.0\" %? \"v510\" %: \"other\" %)) \
                  print(%( kernel_vr == \"5.10.0-9-amd64\" %? \"vr\" %: \"novr\" %)) \
                  print(%( kernel_v >= \"6.2\" %? \"new\" %: \"old\" %)) }";
    // -r RELEASE: kernel_v is its part before the first '-'.
    assert_eq!(
        disasm_strings(&["compile", "--disasm", "-r", "5.10.0-9-amd64", "-e", script]),
        ["v510", "vr", "old"]
    );
    assert_eq!(
        disasm_strings(&["-p3", "-r", "6.12.1", "-e", script]),
        ["other", "novr", "new"]
    );
    // By default, the running kernel's release (uname -r).
    let rel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let rel = rel.trim();
    let want =
        format!("probe begin {{ print(%( kernel_vr == \"{rel}\" %? \"running\" %: \"not\" %)) }}");
    assert_eq!(
        disasm_strings(&["compile", "--disasm", "-e", &want]),
        ["running"]
    );
    // check and run take -r too; a build directory is refused.
    let r = stapvm(&["check", "-r", "5.10.0", "-e", "probe begin { exit() }"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let r = stapvm(&["run", "-r", "/lib/modules/x/build", "-e", "probe begin {}"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("is not a kernel release"));
}

/// stapvm with standard output a pipe whose reader has gone (`| head`
/// that has exited): every write fails with EPIPE.
fn stapvm_into_closed_pipe(args: &[&str]) -> Output {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: pipe2 succeeded: both descriptors are new and ours.
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_stapvm"))
        .args(args)
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("run stapvm")
}

#[test]
fn printing_into_a_closed_pipe_ends_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tmpdir("epipe");
    let stpb = write_stpb(&dir, &program(missing_symbol(), false));
    let stpb = stpb.to_str().unwrap();
    let doctor_root = dir.to_str().unwrap();
    let cases: [&[&str]; 7] = [
        &["dump", stpb],
        &["list", "kernel.function(\"vfs_read\")"],
        &["compile", "--disasm", "-e", "probe begin { exit() }"],
        &["-p3", "-e", "probe begin { exit() }"],
        &["completions", "bash"],
        &["doctor", "--root", doctor_root],
        &["--help"],
    ];
    for args in cases {
        let r = stapvm_into_closed_pipe(args);
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
        // As cat: killed by SIGPIPE (141 in the shell), or done.
        assert!(
            r.status.signal() == Some(libc::SIGPIPE) || r.status.success(),
            "{args:?}: {:?} {err}",
            r.status
        );
    }
}

#[test]
fn unknown_d_names_are_warned_of_unless_w() {
    let script = "probe begin { exit() }";
    let r = stapvm(&["check", "-D", "KRETACTIVE=100", "-e", script]);
    assert!(r.status.success());
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.starts_with("WARNING: -D KRETACTIVE=100 has no effect in stapvm ("),
        "{err}"
    );
    let r = stapvm(&["check", "-w", "-D", "KRETACTIVE=100", "-e", script]);
    assert!(r.status.success());
    assert_eq!(String::from_utf8_lossy(&r.stderr), "");
    let r = stapvm(&["check", "-D", "MAXACTION=100", "-e", script]);
    assert_eq!(String::from_utf8_lossy(&r.stderr), "");
}
