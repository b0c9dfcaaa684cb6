//! End-to-end tests of source-file patterns (`kernel.function("vfs_*@fs/*.c")`)
//! in the loader, without the kernel module: `stapvm dump --kernel` resolves
//! probes as `load` does, against /proc/kallsyms and the debuginfo below
//! `$STAPVM_DEBUGINFO` (a fake `boot/vmlinux-$(uname -r)` built with `cc -g`
//! here), and names the package to install when the debuginfo is missing.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::release;

fn tmpdir(name: &str) -> PathBuf {
    common::tmpdir("filepat", name)
}

/// Asserts that the command of `out` succeeded (its stderr is the panic
/// message).
fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Compiles `script` into DIR/x.stpb and runs `stapvm dump --kernel` on it
/// with the debug root `root`.
fn dump_kernel(dir: &Path, script: &str, root: &Path) -> Output {
    let bin = env!("CARGO_BIN_EXE_stapvm");
    let stp = dir.join("x.stp");
    std::fs::write(&stp, script).unwrap();
    let stpb = dir.join("x.stpb");
    let out = Command::new(bin)
        .args([
            "compile",
            stp.to_str().unwrap(),
            "-o",
            stpb.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_success(&out);
    Command::new(bin)
        .args(["dump", "--kernel", stpb.to_str().unwrap()])
        .env("STAPVM_DEBUGINFO", root)
        .output()
        .unwrap()
}

#[test]
fn missing_debuginfo_names_the_file_and_the_package() {
    let d = tmpdir("missing");
    let rel = release();
    let out = dump_kernel(
        &d,
        "probe kernel.function(\"*@fs/*.c\").call { }\n",
        &d.join("none"),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "ERROR: probe point 'kernel.function(\"*@fs/*.c\").call' cannot be resolved: \
             source-file patterns need the kernel's debuginfo: {}/none/boot/vmlinux-{rel} \
             not found (install linux-image-{rel}-dbg)\n",
            d.display()
        )
    );
    // Optional: skipped with a warning.
    let out = dump_kernel(
        &d,
        "probe kernel.function(\"*@fs/*.c\")? { }\nprobe begin { exit() }\n",
        &d.join("none"),
    );
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with(
            "WARNING: optional probe point 'kernel.function(\"*@fs/*.c\")?' skipped: \
             source-file patterns need the kernel's debuginfo:"
        ),
        "{err}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn file_patterns_select_functions_by_their_dwarf_source_file() {
    // Real kernel function names, in a fake vmlinux whose DWARF puts
    // vfs_read and vfs_write in fs/read_write.c and vfs_fsync in mm/.
    let kallsyms = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
    let text = |n: &str| {
        kallsyms.lines().any(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() == 3 && matches!(f[1], "t" | "T") && f[2] == n
        })
    };
    if !["vfs_read", "vfs_write", "vfs_fsync"]
        .iter()
        .all(|n| text(n))
    {
        eprintln!("skipped: /proc/kallsyms lacks vfs_read/vfs_write/vfs_fsync");
        return;
    }
    let d = tmpdir("select");
    let src = d.join("src");
    std::fs::create_dir_all(src.join("fs")).unwrap();
    std::fs::create_dir_all(src.join("mm")).unwrap();
    std::fs::write(
        src.join("fs/read_write.c"),
        "long vfs_read(long a) { return a + 1; }\nlong vfs_write(long a) { return a + 2; }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("mm/x.c"),
        "long vfs_read(long); long vfs_write(long);\n\
         long vfs_fsync(long a) { return vfs_read(a) + vfs_write(a); }\n\
         int main(void) { return (int)vfs_fsync(1); }\n",
    )
    .unwrap();
    let root = d.join("root");
    std::fs::create_dir_all(root.join("boot")).unwrap();
    let vmlinux = root.join(format!("boot/vmlinux-{}", release()));
    let out = Command::new("cc")
        .current_dir(&src)
        .args(["-g", "-O1", "fs/read_write.c", "mm/x.c", "-o"])
        .arg(&vmlinux)
        .output()
        .unwrap();
    assert_success(&out);
    let out = dump_kernel(&d, "probe kernel.function(\"vfs_*@fs/*.c\") { }\n", &root);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_success(&out);
    let targets: Vec<&str> = stdout
        .lines()
        .filter_map(|l| {
            l.split_once(", target ")
                .map(|(_, t)| t.trim_end_matches(']'))
        })
        .collect();
    assert_eq!(targets, ["vfs_read", "vfs_write"], "{stdout}");
    // `stapvm list` (stap -l) the same way.
    let out = Command::new(env!("CARGO_BIN_EXE_stapvm"))
        .args(["list", "kernel.function(\"vfs_*@fs/*.c\").return"])
        .env("STAPVM_DEBUGINFO", &root)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "kernel.function(\"vfs_read\").return\nkernel.function(\"vfs_write\").return\n"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_stapvm"))
        .args(["list", "kernel.function(\"vfs_*@fs/*.c\")"])
        .env("STAPVM_DEBUGINFO", d.join("none"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with(
            "ERROR: cannot list 'kernel.function(\"vfs_*@fs/*.c\")': source-file patterns need \
             the kernel's debuginfo:"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A file pattern that selects nothing: stap's no-match, naming it.
    let out = dump_kernel(
        &d,
        "probe kernel.function(\"vfs_*@kernel/*.c\") { }\n",
        &root,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "ERROR: probe point 'kernel.function(\"vfs_*@kernel/*.c\")' cannot be resolved: \
         no match for 'vfs_*@kernel/*.c' among the kernel's probeable functions\n"
    );
    std::fs::remove_dir_all(&d).unwrap();
}
