//! Test support: C programs built with the machine's `cc` for the unit
//! tests of the modules that read binaries (ELF symbols, USDT notes, user
//! stacks, DWARF).
use std::path::PathBuf;
use std::process::Command;

/// `source` written as `NAME.c` in a fresh directory `stapvm-TAG-PID` of
/// the temporary directory and built with `cc FLAGS NAME.c -o NAME`; the
/// program's path. Panics (the test fails) when `cc` does.
pub fn build_c(tag: &str, name: &str, source: &str, flags: &[&str]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stapvm-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.c")), source).unwrap();
    let out = Command::new("cc")
        .current_dir(&dir)
        .args(flags)
        .args([&format!("{name}.c"), "-o", name])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join(name)
}
