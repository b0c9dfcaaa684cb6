//! `stapvm debug man DIR --page NAME.SECTION=FILE`: the pages it writes
//! render with groff without a warning (tbl included), and `man -l` shows
//! what they should say; where groff or man-db is not installed
//! (tests/setup.sh installs both) that part is skipped with a note.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn stapvm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stapvm"))
        .args(args)
        .output()
        .expect("run stapvm")
}

fn tapset_md() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/tapset.md")
}

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The pages of one `debug man` run, in a fresh directory.
fn make_pages(name: &str) -> (PathBuf, Vec<PathBuf>) {
    let dir = std::env::temp_dir().join(format!("stapvm-man-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let page = format!("stapvm-tapset.7={}", tapset_md().display());
    let out = stapvm(&["debug", "man", dir.to_str().unwrap(), "--page", &page]);
    assert!(out.status.success(), "{out:?}");
    let listed: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(PathBuf::from)
        .collect();
    (dir, listed)
}

const PAGES: [&str; 11] = [
    "stapvm.1",
    "stapvm-compile.1",
    "stapvm-load.1",
    "stapvm-run.1",
    "stapvm-check.1",
    "stapvm-dump.1",
    "stapvm-list.1",
    "stapvm-doctor.1",
    "stapvm-boot.1",
    "stapvm-completions.1",
    "stapvm-tapset.7",
];

#[test]
fn writes_a_page_per_subcommand_and_per_markdown_file() {
    let (dir, listed) = make_pages("list");
    let names: Vec<String> = listed
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, PAGES, "{listed:?}");
    for p in &listed {
        assert!(p.starts_with(&dir) && p.is_file(), "{}", p.display());
    }
    // No page for the hidden developer commands.
    assert!(!dir.join("stapvm-debug.1").exists());
    let main = std::fs::read_to_string(dir.join("stapvm.1")).unwrap();
    assert!(main.contains(".SH \"EXIT STATUS\""), "{main}");
    assert!(main.contains("\\fBstapvm\\-tapset\\fR(7)"), "{main}");
    let tapset = std::fs::read_to_string(dir.join("stapvm-tapset.7")).unwrap();
    assert!(
        tapset.starts_with(".TH \"STAPVM\\-TAPSET\" \"7\""),
        "{tapset}"
    );
    assert!(
        tapset.contains("\n.TS\n") && tapset.contains("\n.SS "),
        "tables, subsections"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pages_render_without_troff_warnings() {
    if !have("groff") {
        eprintln!("groff not installed (tests/setup.sh installs groff-base): not rendered");
        return;
    }
    let (dir, _) = make_pages("groff");
    for name in PAGES {
        let file = dir.join(name);
        // -t: tbl; -k: preconv; -ww: every warning; -z: no output.
        let out = Command::new("groff")
            .args(["-man", "-Tutf8", "-t", "-k", "-ww", "-z"])
            .arg(&file)
            .output()
            .expect("run groff");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && err.is_empty(), "{name}:\n{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn man_shows_the_pages() {
    if !have("man") {
        eprintln!("man not installed (tests/setup.sh installs man-db): not rendered");
        return;
    }
    let (dir, _) = make_pages("man");
    let man = |name: &str| -> String {
        let out = Command::new("man")
            .arg("-l")
            .arg(dir.join(name))
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env_remove("MAN_KEEP_FORMATTING")
            .output()
            .expect("run man");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && err.is_empty(), "{name}:\n{err}");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "{name}: too wide: {line}");
        }
        text
    };
    let main = man("stapvm.1");
    for want in [
        "NAME",
        "SYNOPSIS",
        "SUBCOMMANDS",
        "stapvm-compile(1)",
        "STAP COMMAND LINES",
        "check --parse-only",
        "EXIT STATUS",
        "SEE ALSO",
        "stapvm-tapset(7)",
    ] {
        assert!(main.contains(want), "stapvm.1 lacks {want}:\n{main}");
    }
    let compile = man("stapvm-compile.1");
    for want in [
        "stapvm-compile",
        "SYNOPSIS",
        "--disasm",
        "-o <FILE>",
        "stapvm(1)",
    ] {
        assert!(
            compile.contains(want),
            "stapvm-compile.1 lacks {want}:\n{compile}"
        );
    }
    let tapset = man("stapvm-tapset.7");
    for want in [
        "stapvm-tapset - The built-in tapset",
        "DESCRIPTION",
        "SYSCALL PROBE POINTS",
        "syscall_any",
        "tapset/syscall_table.rs",
    ] {
        assert!(tapset.contains(want), "stapvm-tapset.7 lacks {want}");
    }
    for name in PAGES {
        man(name);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_markdown_file_is_an_error() {
    let dir = std::env::temp_dir().join(format!("stapvm-man-{}-missing", std::process::id()));
    let out = stapvm(&[
        "debug",
        "man",
        dir.to_str().unwrap(),
        "--page",
        "stapvm-x.7=/nonexistent/x.md",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("ERROR: cannot read /nonexistent/x.md:"),
        "{err}"
    );
    // Nothing was written.
    assert!(!dir.join("stapvm.1").exists());
    let out = stapvm(&["debug", "man", dir.to_str().unwrap(), "--page", "x.md"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}
