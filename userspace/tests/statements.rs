//! End-to-end tests of statement probes by source line in the loader,
//! without the kernel module: `stapvm dump --kernel` places the lines as
//! `load` does (the debuginfo below `$STAPVM_DEBUGINFO`: a fake
//! `boot/vmlinux-$(uname -r)` built with `cc -g` whose functions have
//! real kernel names, matched against /proc/kallsyms), `stapvm list`
//! lists them, and missing debuginfo names the package.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::release;

fn tmpdir(name: &str) -> PathBuf {
    common::tmpdir("stmt-cli", name)
}

fn stapvm(args: &[&str], root: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stapvm"))
        .args(args)
        .env("STAPVM_DEBUGINFO", root)
        .output()
        .unwrap()
}

/// The probe lines of `stapvm dump --kernel` of `script`: (display,
/// target).
fn placed(dir: &Path, script: &str, root: &Path) -> Result<Vec<(String, String)>, String> {
    let stp = dir.join("x.stp");
    std::fs::write(&stp, script).unwrap();
    let stpb = dir.join("x.stpb");
    let out = stapvm(
        &[
            "compile",
            stp.to_str().unwrap(),
            "-o",
            stpb.to_str().unwrap(),
        ],
        root,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = stapvm(&["dump", "--kernel", stpb.to_str().unwrap()], root);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.trim_start().starts_with("probe#"))
        .filter_map(|l| {
            let (head, target) = l.split_once(", target ")?;
            let display = head.split_whitespace().nth(1)?.to_string();
            Some((display, target.trim_end_matches(']').to_string()))
        })
        .collect())
}

#[test]
fn lines_become_function_offsets_named_as_stap_names_them() {
    let kallsyms = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
    if !kallsyms.lines().any(|l| l.ends_with(" vfs_read")) {
        eprintln!("skipped: /proc/kallsyms lacks vfs_read");
        return;
    }
    let d = tmpdir("lines");
    let src = d.join("src");
    std::fs::create_dir_all(src.join("fs")).unwrap();
    std::fs::write(
        src.join("fs/read_write.c"),
        "volatile long sink;\n\
         long vfs_read(long a)\n\
         {\n\
         \tlong r = a + 1;\n\
         \n\
         \tsink = r;\n\
         \treturn r * 3;\n\
         }\n\
         int main(void) { return (int)vfs_read(1); }\n",
    )
    .unwrap();
    let root = d.join("root");
    std::fs::create_dir_all(root.join("boot")).unwrap();
    let vmlinux = root.join(format!("boot/vmlinux-{}", release()));
    let mut args: Vec<&std::ffi::OsStr> = ["-g", "-O1", "fs/read_write.c", "-o"]
        .map(std::ffi::OsStr::new)
        .to_vec();
    args.push(vmlinux.as_os_str());
    common::cc(&src, &args);
    let got = placed(
        &d,
        "probe kernel.statement(\"vfs_read@fs/read_write.c:*\") { println(pp()) }\n\
         probe kernel.statement(\"vfs_read@fs/read_write.c:5\").nearest { }\n",
        &root,
    )
    .unwrap();
    // Lines 4 (the brace's address too), 6 and 7 have code; the first
    // is the function's entry, the others past it.
    let lines: Vec<&str> = got.iter().map(|(d, _)| d.as_str()).collect();
    assert!(
        lines.contains(&"kernel.statement(\"vfs_read@fs/read_write.c:6\")"),
        "{got:?}"
    );
    assert!(
        lines.contains(&"kernel.statement(\"vfs_read@fs/read_write.c:7\")"),
        "{got:?}"
    );
    let six = got.iter().find(|(d, _)| d.ends_with(":6\")")).unwrap();
    assert!(six.1.starts_with("vfs_read+0x"), "{six:?}");
    // .nearest: line 5 is blank; 4 and 6 are as near, the later wins.
    assert_eq!(
        got.last().unwrap().0,
        "kernel.statement(\"vfs_read@fs/read_write.c:6\")"
    );
    // stap -l.
    let out = stapvm(&["list", "kernel.statement(\"vfs_read@*:6\")"], &root);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "kernel.statement(\"vfs_read@fs/read_write.c:6\")\n"
    );
    // A line without code, named as stap would want it fixed.
    let e = placed(
        &d,
        "probe kernel.statement(\"vfs_read@fs/read_write.c:5\") { }\n",
        &root,
    )
    .unwrap_err();
    assert_eq!(
        e,
        "ERROR: probe point 'kernel.statement(\"vfs_read@fs/read_write.c:5\")' cannot be \
         resolved: no code at fs/read_write.c:5 in function vfs_read (try :4 or :6, or .nearest)\n"
    );
    // No debuginfo: the file and the package.
    let e = placed(
        &d,
        "probe kernel.statement(\"vfs_read@*:6\") { }\n",
        &d.join("none"),
    )
    .unwrap_err();
    assert!(
        e.contains(&format!(
            "statement probes need the debuginfo: {}/none/boot/vmlinux-{rel} not found \
             (install linux-image-{rel}-dbg)",
            d.display(),
            rel = release()
        )),
        "{e}"
    );
    // Optional: skipped with a warning.
    let e = placed(
        &d,
        "probe kernel.statement(\"vfs_read@*:6\")? { } probe begin { }\n",
        &d.join("none"),
    );
    assert!(e.is_ok(), "{e:?}");
    std::fs::remove_dir_all(&d).unwrap();
}
