//! `-v` prints stap's pass lines on standard error, with real numbers
//! (`Pass 1: parsed user script and N library scripts using
//! Vvirt/Rres/Sshr/Ddata kb, in Uusr/Ssys/Rreal ms.` ...), up to the pass
//! the command stops after; without `-v` nothing is added.
use std::path::PathBuf;
use std::process::{Command, Output};

fn stapvm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stapvm"))
        .args(args)
        .output()
        .expect("run stapvm")
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("stapvm-verbose-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `text` is `N` followed by `unit`: the rest after it.
fn number_then<'a>(text: &'a str, unit: &str) -> Option<&'a str> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0).then_some(())?;
    text[digits..].strip_prefix(unit)
}

/// ` in Uusr/Ssys/Rreal ms.` and nothing after it.
fn times_ok(text: &str) -> bool {
    let parse = || -> Option<()> {
        let t = text.strip_prefix("in ")?;
        let t = number_then(t, "usr/")?;
        let t = number_then(t, "sys/")?;
        let t = number_then(t, "real ms.")?;
        t.is_empty().then_some(())
    };
    parse().is_some()
}

/// `using Vvirt/Rres/Sshr/Ddata kb, in ...`, with resident memory > 0.
fn memory_and_times_ok(text: &str) -> bool {
    let parse = || -> Option<&str> {
        let t = text.strip_prefix("using ")?;
        let t = number_then(t, "virt/")?;
        let res = t.bytes().take_while(u8::is_ascii_digit).count();
        (t[..res].parse::<u64>().ok()? > 0).then_some(())?;
        let t = number_then(t, "res/")?;
        let t = number_then(t, "shr/")?;
        number_then(t, "data kb, ")
    };
    parse().is_some_and(times_ok)
}

/// What follows `head` on the line that starts with it.
fn pass_line<'a>(stderr: &'a str, head: &str) -> &'a str {
    let line = stderr
        .lines()
        .find(|l| l.starts_with(head))
        .unwrap_or_else(|| panic!("no line {head:?} in:\n{stderr}"));
    line.strip_prefix(head).unwrap()
}

fn pass_numbers(stderr: &str) -> Vec<u8> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("Pass "))
        .filter_map(|l| l.bytes().next())
        .map(|b| b - b'0')
        .collect()
}

#[test]
fn compile_v_prints_passes_1_to_4() {
    let dir = tmpdir("compile");
    let out_file = dir.join("x.stpb");
    let out = stapvm(&[
        "compile",
        "-v",
        "-e",
        "global n\nfunction f() { return 1 }\nprobe begin { n = f(); exit() }\nprobe end { println(n) }",
        "-o",
        out_file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(pass_numbers(&err), [1, 2, 3, 4], "{err}");
    let l1 = pass_line(&err, "Pass 1: parsed user script and 0 library scripts ");
    assert!(memory_and_times_ok(l1), "{l1}");
    let l2 = pass_line(
        &err,
        "Pass 2: analyzed script: 2 probes, 1 function, 0 embeds, 1 global ",
    );
    assert!(memory_and_times_ok(l2), "{l2}");
    let l3 = pass_line(&err, "Pass 3: translated to bytecode: 3 handlers, ");
    let (insns, rest) = l3.split_once(" instructions ").unwrap();
    assert!(insns.parse::<u32>().unwrap() > 3, "{l3}");
    assert!(memory_and_times_ok(rest), "{l3}");
    let l4 = pass_line(
        &err,
        &format!("Pass 4: verified and wrote \"{}\" ", out_file.display()),
    );
    assert!(times_ok(l4), "{l4}");
    assert!(out_file.is_file());
    // Without -v: nothing on standard error.
    let out = stapvm(&[
        "compile",
        "-e",
        "probe begin { exit() }",
        "-o",
        out_file.to_str().unwrap(),
    ]);
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn each_command_stops_where_stap_p_stops() {
    let script = "probe begin { exit() }";
    let passes = |args: &[&str]| -> Vec<u8> {
        let out = stapvm(args);
        assert!(out.status.success(), "{args:?}: {out:?}");
        pass_numbers(&String::from_utf8_lossy(&out.stderr))
    };
    assert_eq!(passes(&["check", "-v", "-e", script]), [1, 2]);
    assert_eq!(passes(&["-p2", "-v", "-e", script]), [1, 2]);
    assert_eq!(passes(&["check", "--parse-only", "-v", "-e", script]), [1]);
    assert_eq!(passes(&["-p1", "-v", "-e", script]), [1]);
    assert_eq!(passes(&["-p3", "-v", "-e", script]), [1, 2, 3]);
    assert_eq!(passes(&["check", "-e", script]), Vec::<u8>::new());
    // -p3 still prints the disassembly on standard output.
    let out = stapvm(&["-p3", "-v", "-e", script]);
    assert!(!out.stdout.is_empty(), "{out:?}");
}

#[test]
fn library_scripts_are_the_tapset_files_parsed() {
    let dir = tmpdir("tapset");
    std::fs::write(dir.join("a.stp"), "function a() { return 1 }\n").unwrap();
    std::fs::write(dir.join("b.stp"), "function b() { return 2 }\n").unwrap();
    let out = stapvm(&[
        "check",
        "-v",
        "-I",
        dir.to_str().unwrap(),
        "-e",
        "probe begin { println(a()) }",
    ]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    pass_line(
        &err,
        "Pass 1: parsed user script and 2 library scripts using ",
    );
    pass_line(&err, "Pass 2: analyzed script: 1 probe, 1 function, ");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_pass_prints_no_pass_line_of_its_own() {
    let out = stapvm(&[
        "compile",
        "-v",
        "-e",
        "probe begin { x = }",
        "-o",
        "/dev/null",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(pass_numbers(&err), [1], "{err}");
    assert!(err.contains("Pass 1: parse failed."), "{err}");
    assert!(!err.contains("Pass 1: parsed"), "{err}");
}

#[test]
fn run_v_reaches_pass_5_before_loading() {
    if std::path::Path::new("/dev/stapvm").exists() {
        eprintln!("/dev/stapvm exists: not starting a session from a unit test");
        return;
    }
    let out = stapvm(&["run", "-v", "-e", "probe begin { exit() }"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(pass_numbers(&err), [1, 2, 3, 4, 5], "{err}");
    let l4 = pass_line(&err, "Pass 4: verified the bytecode ");
    assert!(times_ok(l4), "{l4}");
    let lines: Vec<&str> = err.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == "Pass 5: starting run.")
        .unwrap();
    assert!(lines[start + 1].starts_with("ERROR: "), "{err}");
}

#[test]
fn the_line_checkers_refuse_other_shapes() {
    assert!(times_ok("in 12usr/0sys/15real ms."));
    assert!(!times_ok("in 12usr/0sys/15real ms"));
    assert!(!times_ok("in usr/0sys/15real ms."));
    assert!(memory_and_times_ok(
        "using 9512virt/5120res/4096shr/3324data kb, in 0usr/0sys/1real ms."
    ));
    assert!(!memory_and_times_ok(
        "using 9512virt/0res/4096shr/3324data kb, in 0usr/0sys/1real ms."
    ));
    assert!(!memory_and_times_ok(
        "using 1virt/2res/3shr kb, in 0usr/0sys/1real ms."
    ));
}
