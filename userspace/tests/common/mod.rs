//! Helpers shared by the loader's end-to-end tests (filepat.rs,
//! statements.rs, uprobes.rs): a fresh temporary directory, the running
//! kernel's release, which names the fake debuginfo files, and `cc`.
use std::path::PathBuf;

/// A new, empty directory `stapvm-TAG-PID-NAME` in the temporary directory.
pub fn tmpdir(tag: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("stapvm-{tag}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The running kernel's release (`uname -r`).
#[allow(dead_code)] // (not every test file reads it)
pub fn release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap()
        .trim()
        .to_string()
}

/// Runs `cc ARGS` in `dir`; the test fails with cc's messages if it does.
#[allow(dead_code)] // (not every test file builds C)
pub fn cc(dir: &std::path::Path, args: &[&std::ffi::OsStr]) {
    let out = std::process::Command::new("cc")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
