//! `stapvm doctor`: what this machine needs to run stapvm, checked one
//! item at a time (kernel release, BTF, kallsyms, the kernel's probe
//! support, lockdown, stapvm.ko and /dev/stapvm, debugfs and tracefs, the
//! caller's privileges), each with what to do when it is missing. Every
//! path is read below a root directory (`/` on a real machine; a fake tree
//! in the tests), and nothing is changed.
use std::fmt::Write as _;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// How one item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Present and usable.
    Ok,
    /// Usable, with a limit worth knowing.
    Warn,
    /// stapvm cannot work until it is fixed.
    Fail,
}

/// One checked item.
#[derive(Debug, Clone)]
pub struct Check {
    /// What was checked (`btf`, `module`, ...).
    pub item: &'static str,
    /// Its state.
    pub state: State,
    /// What was found.
    pub found: String,
    /// What to do, for a warning or a failure.
    pub fix: Option<String>,
}

fn check(item: &'static str, state: State, found: String, fix: Option<&str>) -> Check {
    Check {
        item,
        state,
        found,
        fix: fix.map(str::to_string),
    }
}

fn read(root: &Path, path: &str) -> Option<String> {
    std::fs::read_to_string(root.join(path.trim_start_matches('/'))).ok()
}

/// The kernel configuration's value of `name` (`y`, `m`, a number...)
/// from /boot/config-RELEASE; `None` when there is no such file, `Some("")`
/// when the option is not set.
fn config<'a>(cfg: Option<&'a str>, name: &str) -> Option<&'a str> {
    let cfg = cfg?;
    Some(
        cfg.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
            .unwrap_or(""),
    )
}

/// Every check, in the order they are printed.
pub fn run(root: &Path, euid: u32) -> Vec<Check> {
    use State::*;
    let mut out = Vec::new();
    let release = read(root, "/proc/sys/kernel/osrelease").map(|s| s.trim().to_string());
    out.push(match &release {
        Some(r) => check("kernel", Ok, format!("Linux {r}"), None),
        None => check(
            "kernel",
            Fail,
            "no /proc/sys/kernel/osrelease".into(),
            Some("mount /proc"),
        ),
    });
    let release = release.unwrap_or_default();

    let btf = root.join("sys/kernel/btf/vmlinux");
    out.push(match std::fs::metadata(&btf) {
        Result::Ok(m) => check("btf", Ok, format!("/sys/kernel/btf/vmlinux, {} KiB", m.len() / 1024), None),
        Err(_) => check(
            "btf",
            Fail,
            "no /sys/kernel/btf/vmlinux".into(),
            Some("target variables, @cast and struct members need a kernel built with CONFIG_DEBUG_INFO_BTF=y (Debian's kernels are)"),
        ),
    });

    out.push(match read(root, "/proc/kallsyms") {
        // Hidden addresses read as 0 (the first lines, per-CPU offsets,
        // may be 0 anyway).
        Some(k)
            if k.lines().any(|l| {
                l.split_whitespace()
                    .next()
                    .is_some_and(|a| a.bytes().any(|b| b != b'0'))
            }) =>
        {
            check(
                "kallsyms",
                Ok,
                format!("/proc/kallsyms, {} symbols", k.lines().count()),
                None,
            )
        }
        Some(_) => check(
            "kallsyms",
            Warn,
            "/proc/kallsyms shows no addresses".into(),
            Some("run stapvm as root (kernel.kptr_restrict hides them from others)"),
        ),
        None => check(
            "kallsyms",
            Fail,
            "no /proc/kallsyms".into(),
            Some("the kernel needs CONFIG_KALLSYMS=y"),
        ),
    });

    let cfg_text = read(root, &format!("/boot/config-{release}"));
    let cfg = cfg_text.as_deref();
    let wanted = [
        ("CONFIG_KPROBES", "kprobes (kernel.function, syscall.*)"),
        ("CONFIG_KRETPROBES", "kretprobes (.return)"),
        ("CONFIG_UPROBES", "uprobes (process(...).function, .mark)"),
        ("CONFIG_TRACEPOINTS", "tracepoints (kernel.trace)"),
        ("CONFIG_PERF_EVENTS", "perf events (perf.*, timer.profile)"),
    ];
    match cfg {
        None => out.push(check(
            "probes",
            Warn,
            format!("no /boot/config-{release}: cannot tell which probe kinds the kernel has"),
            Some("install the kernel's config (Debian: in the linux-image package)"),
        )),
        Some(_) => {
            let missing: Vec<&str> = wanted
                .iter()
                .filter(|(name, _)| !matches!(config(cfg, name), Some("y")))
                .map(|(_, what)| *what)
                .collect();
            out.push(if missing.is_empty() {
                check(
                    "probes",
                    Ok,
                    "kprobes, kretprobes, uprobes, tracepoints, perf events".into(),
                    None,
                )
            } else {
                check(
                    "probes",
                    Warn,
                    format!("the kernel lacks {}", missing.join(", ")),
                    Some("those probe kinds cannot be armed on this kernel"),
                )
            });
        }
    }

    out.push(match read(root, "/sys/kernel/security/lockdown") {
        None => check("lockdown", Ok, "no lockdown LSM (or securityfs not mounted)".into(), None),
        Some(l) if l.contains("[none]") => check("lockdown", Ok, "none".into(), None),
        Some(l) if l.contains("[integrity]") => check(
            "lockdown",
            Warn,
            "integrity".into(),
            Some("stapvm.ko must be signed with a key the kernel trusts (README: Secure Boot)"),
        ),
        Some(l) if l.contains("[confidentiality]") => check(
            "lockdown",
            Warn,
            "confidentiality".into(),
            Some("programs that read kernel memory (@cast, $var->field, kernel_string) are refused; stapvm.ko must be signed"),
        ),
        Some(l) => check("lockdown", Warn, l.trim().to_string(), None),
    });

    let loaded =
        read(root, "/proc/modules").is_some_and(|m| m.lines().any(|l| l.starts_with("stapvm ")));
    let installed = ["updates/dkms", "updates", "extra", "kernel/extra"]
        .iter()
        .map(|d| format!("lib/modules/{release}/{d}/stapvm.ko"))
        .find(|p| root.join(p).exists() || root.join(format!("{p}.xz")).exists());
    out.push(match (loaded, &installed) {
        (true, _) => check("module", Ok, format!("stapvm.ko loaded in {release}"), None),
        (false, Some(p)) => check(
            "module",
            Fail,
            format!("stapvm.ko for {release} installed (/{p}) but not loaded"),
            Some("modprobe stapvm"),
        ),
        (false, None) => check(
            "module",
            Fail,
            format!("no stapvm.ko for {release}"),
            Some("install stapvm-modules-RELEASE or stapvm-dkms (with the kernel's headers), then modprobe stapvm"),
        ),
    });

    out.push(match std::fs::metadata(root.join("dev/stapvm")) {
        Result::Ok(m) if m.file_type().is_char_device() => {
            let who = if m.uid() == 0 { "root" } else { "a user" };
            check(
                "device",
                Ok,
                format!(
                    "/dev/stapvm, mode {:o}, owned by {who}: open needs CAP_SYS_ADMIN",
                    m.mode() & 0o777
                ),
                None,
            )
        }
        Result::Ok(_) => check(
            "device",
            Fail,
            "/dev/stapvm is not a character device".into(),
            Some("remove it and reload stapvm.ko"),
        ),
        Err(_) if loaded => check(
            "device",
            Fail,
            "stapvm.ko is loaded but there is no /dev/stapvm".into(),
            Some("check that devtmpfs or udev is running"),
        ),
        Err(_) => check(
            "device",
            Fail,
            "no /dev/stapvm".into(),
            Some("load stapvm.ko (above)"),
        ),
    });

    let mounts = read(root, "/proc/mounts").unwrap_or_default();
    let mounted = |fs: &str| {
        mounts
            .lines()
            .any(|l| l.split_whitespace().nth(2) == Some(fs))
    };
    // (item, the file systems that provide it, what to say when absent)
    let filesystems: [(&'static str, &[&str], &str); 2] = [
        (
            "debugfs",
            &["debugfs"],
            "stapvm does not need it; to see its kprobes: mount -t debugfs none /sys/kernel/debug",
        ),
        (
            "tracefs",
            &["tracefs", "debugfs"],
            "stapvm does not need it (tracepoints are found through BTF and kallsyms)",
        ),
    ];
    for (item, by, fix) in filesystems {
        out.push(if by.iter().any(|fs| mounted(fs)) {
            check(item, Ok, "mounted".into(), None)
        } else {
            check(item, Warn, "not mounted".into(), Some(fix))
        });
    }

    out.push(if euid == 0 {
        check("privileges", Ok, "root".into(), None)
    } else {
        check(
            "privileges",
            Warn,
            format!("uid {euid}"),
            Some("loading a program needs root or CAP_SYS_ADMIN: run stapvm with sudo"),
        )
    });
    out
}

/// The report, one line per item (and an indented line with what to do).
pub fn render(checks: &[Check]) -> String {
    let mut s = String::new();
    for c in checks {
        let tag = match c.state {
            State::Ok => "ok",
            State::Warn => "warn",
            State::Fail => "FAIL",
        };
        let _ = writeln!(s, "{tag:<5} {:<11} {}", c.item, c.found);
        if let Some(fix) = &c.fix {
            let _ = writeln!(s, "{:<17} -> {fix}", "");
        }
    }
    let fails = checks.iter().filter(|c| c.state == State::Fail).count();
    let warns = checks.iter().filter(|c| c.state == State::Warn).count();
    let _ = match fails {
        0 => writeln!(s, "stapvm can run here ({warns} warnings)"),
        n => writeln!(s, "stapvm cannot run here yet: {n} problems"),
    };
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn tree(files: &[(&str, &str)]) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "stapvm-doctor-{}-{}",
            std::process::id(),
            files.len()
        ));
        let _ = std::fs::remove_dir_all(&d);
        for (p, text) in files {
            let f = d.join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, text).unwrap();
        }
        d
    }

    fn state(c: &[Check], item: &str) -> State {
        c.iter().find(|c| c.item == item).unwrap().state
    }

    #[test]
    fn a_bare_machine_says_what_to_do() {
        let d = tree(&[("proc/sys/kernel/osrelease", "6.1.0-57-amd64\n")]);
        let c = run(&d, 1000);
        assert_eq!(state(&c, "kernel"), State::Ok);
        assert_eq!(state(&c, "btf"), State::Fail);
        assert_eq!(state(&c, "module"), State::Fail);
        assert_eq!(state(&c, "device"), State::Fail);
        assert_eq!(state(&c, "privileges"), State::Warn);
        let text = render(&c);
        assert!(text.contains("no stapvm.ko for 6.1.0-57-amd64"), "{text}");
        assert!(text.contains("-> install stapvm-modules-RELEASE"), "{text}");
        assert!(
            text.ends_with("stapvm cannot run here yet: 4 problems\n"),
            "{text}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_ready_machine_with_its_limits() {
        let d = tree(&[
            ("proc/sys/kernel/osrelease", "6.12.9\n"),
            ("sys/kernel/btf/vmlinux", "btf"),
            (
                "proc/kallsyms",
                "0000000000000000 A fixed_percpu_data\nffffffff81000000 T _stext\n",
            ),
            (
                "boot/config-6.12.9",
                "CONFIG_KPROBES=y\nCONFIG_KRETPROBES=y\nCONFIG_TRACEPOINTS=y\nCONFIG_PERF_EVENTS=y\n",
            ),
            ("sys/kernel/security/lockdown", "none [integrity] confidentiality\n"),
            ("proc/modules", "stapvm 90112 0 - Live 0x0\n"),
            ("proc/mounts", "debugfs /sys/kernel/debug debugfs rw 0 0\n"),
        ]);
        let c = run(&d, 0);
        assert_eq!(state(&c, "btf"), State::Ok);
        assert_eq!(state(&c, "kallsyms"), State::Ok);
        // No CONFIG_UPROBES in that config.
        assert_eq!(state(&c, "probes"), State::Warn);
        assert!(c[3].found.contains("uprobes"), "{:?}", c[3]);
        assert_eq!(state(&c, "lockdown"), State::Warn);
        assert_eq!(state(&c, "module"), State::Ok);
        // Loaded, but the fake tree has no device node.
        assert_eq!(state(&c, "device"), State::Fail);
        assert!(render(&c).contains("no /dev/stapvm"));
        assert_eq!(state(&c, "debugfs"), State::Ok);
        assert_eq!(state(&c, "privileges"), State::Ok);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn hidden_kallsyms_addresses_are_a_warning() {
        let d = tree(&[
            ("proc/sys/kernel/osrelease", "6.1.0\n"),
            (
                "proc/kallsyms",
                "0000000000000000 A fixed_percpu_data\n0000000000000000 T _stext\n",
            ),
            ("x", ""),
        ]);
        assert_eq!(state(&run(&d, 1000), "kallsyms"), State::Warn);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn config_values() {
        let cfg = Some("CONFIG_A=y\nCONFIG_AB=m\n# CONFIG_C is not set\n");
        assert_eq!(config(cfg, "CONFIG_A"), Some("y"));
        assert_eq!(config(cfg, "CONFIG_AB"), Some("m"));
        assert_eq!(config(cfg, "CONFIG_C"), Some(""));
        assert_eq!(config(None, "CONFIG_A"), None);
    }
}
