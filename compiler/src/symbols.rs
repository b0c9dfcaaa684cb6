//! Kernel function probe points checked against a symbol table, as stap's
//! pass 2 resolves them against the kernel's debuginfo: `stapvm check`
//! reads `/proc/kallsyms` when it can (the caller puts the table in
//! `Target::kernel_symbols`); `compile` leaves the resolution to the
//! loader on the target machine. A `kernel.function`, `kprobe.function` or
//! `module(M).function` point without `?` that matches no probeable text
//! symbol is stap's error:
//!
//! ```text
//! semantic error: while resolving probe point: identifier 'kernel' at x.stp:3:7
//!         source: probe kernel.function("nope") { }
//!                       ^
//!
//! semantic error: no match (similar functions: nope_a, nope_b)
//! ```
//!
//! Probeable: a text symbol (`t T w W`) of vmlinux (no `[module]`) or of
//! module M for `module(M)`, outside the init text (`_sinittext` ..
//! `_einittext`, freed after boot, which stap and kprobes refuse: the
//! testsuite's `init_setup`). Addresses read as 0 (kallsyms for an
//! unprivileged reader) make the init text unknown, and then nothing is
//! excluded.
use crate::diag::{Diagnostic, Diags};
use crate::glob::fnmatch;
use crate::passes::resolve::Resolved;
use std::collections::{HashMap, HashSet};
use vm_spec::abi;
use vm_spec::program::ProbeTarget;

/// The probeable function names of a kernel: vmlinux's and each module's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelSymbols {
    kernel: HashSet<String>,
    modules: HashMap<String, HashSet<String>>,
    /// The lowest and highest non-zero text address (`None` when kallsyms
    /// hides addresses): what an absolute statement probe may be in.
    text_span: Option<(u64, u64)>,
}

/// How far past the highest text symbol an address may be and still be
/// in its function (kallsyms has no sizes; `absolute.rs` in the loader
/// uses the same bound).
const MAX_FUNCTION_BYTES: u64 = 1 << 20;

impl KernelSymbols {
    /// Reads `/proc/kallsyms` text (`ADDR TYPE NAME [MODULE]` lines);
    /// malformed lines are skipped.
    pub fn from_kallsyms(text: &str) -> Self {
        let mut entries: Vec<(u64, &str, Option<&str>)> = Vec::new();
        let (mut sinit, mut einit) = (0u64, 0u64);
        for line in text.lines() {
            let mut w = line.split_whitespace();
            let (Some(addr), Some(ty), Some(name)) = (w.next(), w.next(), w.next()) else {
                continue;
            };
            let Ok(addr) = u64::from_str_radix(addr, 16) else {
                continue;
            };
            match name {
                "_sinittext" => sinit = addr,
                "_einittext" => einit = addr,
                _ => {}
            }
            if !matches!(ty, "t" | "T" | "w" | "W") {
                continue;
            }
            let module = w
                .next()
                .and_then(|m| m.strip_prefix('[')?.strip_suffix(']'));
            entries.push((addr, name, module));
        }
        let mut syms = KernelSymbols::default();
        for &(addr, ..) in entries.iter().filter(|e| e.0 != 0) {
            let (lo, hi) = syms.text_span.unwrap_or((addr, addr));
            syms.text_span = Some((lo.min(addr), hi.max(addr)));
        }
        for (addr, name, module) in entries {
            match module {
                Some(m) => {
                    syms.modules
                        .entry(m.to_string())
                        .or_default()
                        .insert(name.to_string());
                }
                None if sinit != 0 && (sinit..einit).contains(&addr) => {}
                None => {
                    syms.kernel.insert(name.to_string());
                }
            }
        }
        syms
    }

    /// Whether `address` may be in a function of the kernel or a module
    /// (within the text symbols' span; true when kallsyms hid the
    /// addresses, so nothing can be said).
    pub fn may_hold(&self, address: u64) -> bool {
        self.text_span
            .is_none_or(|(lo, hi)| address >= lo && address.saturating_sub(hi) < MAX_FUNCTION_BYTES)
    }

    /// stap's ` (similar functions: a, b)` for a `pattern` that matches
    /// nothing: the closest probeable names of vmlinux (or of module M for
    /// `M:name`); "" for a glob or an unknown module.
    pub fn similar(&self, pattern: &str) -> String {
        let (set, name) = match pattern.split_once(':') {
            Some((m, f)) => match self.modules.get(m) {
                Some(s) => (s, f),
                None => return String::new(),
            },
            None => (&self.kernel, pattern),
        };
        if name.contains(['*', '?', '[']) {
            return String::new();
        }
        crate::suggest::similar(name, set.iter().map(String::as_str)).replacen(
            " (similar: ",
            " (similar functions: ",
            1,
        )
    }

    /// Whether `pattern` (a name or glob; `module:glob` for a module)
    /// matches a probeable function.
    pub fn matches(&self, pattern: &str) -> bool {
        // A module glob (`*scsi*:*`): any loaded module it names.
        if let Some((m, f)) = pattern.split_once(':') {
            if m.contains(['*', '?']) {
                return self
                    .modules
                    .keys()
                    .filter(|k| fnmatch(m.as_bytes(), k.as_bytes()))
                    .any(|k| self.matches(&format!("{k}:{f}")));
            }
        }
        let (set, pat) = match pattern.split_once(':') {
            Some((m, f)) => match self.modules.get(m) {
                Some(s) => (s, f),
                None => return false,
            },
            None => (&self.kernel, pattern),
        };
        if pat.contains(['*', '?', '[']) {
            set.iter().any(|n| fnmatch(pat.as_bytes(), n.as_bytes()))
        } else {
            set.contains(pat)
        }
    }
}

/// stap's kernel source-file blocklist (dwflpp.cxx
/// `build_kernel_blocklist`, the regexps as globs): functions declared in
/// these files are never probed.
pub const BLOCKLISTED_FILES: &[&str] = &[
    "kernel/kprobes.c",
    "arch/*/kernel/kprobes.c",
    "*/include/asm/io.h",
    "*/include/asm/io-defs.h",
    "*/include/asm/io_64.h",
    "*/include/asm/bitops.h",
    "drivers/ide/ide-iops.c",
    "arch/*/kernel/paravirt.c",
    "*/include/asm/paravirt.h",
];

/// Whether a DWARF decl file is in `BLOCKLISTED_FILES`: the whole name, or
/// its tail after a `/` (decl files are often absolute, the compilation
/// directory joined in front, where stap's anchored regexps would miss).
pub fn blocklisted_file(file: &str) -> bool {
    BLOCKLISTED_FILES.iter().any(|b| {
        fnmatch(b.as_bytes(), file.as_bytes())
            || fnmatch(format!("*/{b}").as_bytes(), file.as_bytes())
    })
}

/// Whether every source file a `@FILEPAT` can select (FILEPAT itself, or a
/// name ending in `/FILEPAT`) is blocklisted: then no function matches,
/// whatever the debuginfo says (`*@kernel/kprobes.c`).
pub fn only_blocklisted_files(filepat: &str) -> bool {
    !filepat.contains(['*', '?', '[']) && blocklisted_file(filepat)
}

/// Adds stap's "no match" error for every function probe point (without
/// `?`) that `syms` does not have.
pub fn check(res: &Resolved, syms: &KernelSymbols, diags: &mut Diags) {
    for p in &res.probes {
        for pt in &p.points {
            let kind = u32::from(pt.kind);
            if (kind != abi::STP_PROBE_KPROBE && kind != abi::STP_PROBE_KRETPROBE)
                || u32::from(pt.flags) & abi::STP_PROBE_F_OPTIONAL != 0
            {
                continue;
            }
            if let ProbeTarget::Address(a) = pt.target {
                if !syms.may_hold(a) {
                    let d = Diagnostic::semantic("while resolving probe point", pt.span)
                        .with_note(format!("no kernel function holds address {a:#x}"), None);
                    if !diags.list.contains(&d) {
                        diags.push(d);
                    }
                }
                continue;
            }
            // Tapset aliases (`syscall.*`: the first of several names)
            // are the loader's business.
            let ProbeTarget::Symbol { name, .. } = &pt.target else {
                continue;
            };
            // kallsyms has no source files: a `@FILEPAT` is checked by the
            // loader against the kernel's debuginfo (one that can only
            // select blocklisted files is refused by resolve).
            let (name, _file) = vm_spec::program::split_source_file(name);
            if syms.matches(name) {
                continue;
            }
            // The renderer names the token: "...: identifier 'kernel' at".
            let d = Diagnostic::semantic("while resolving probe point", pt.span)
                .with_note(format!("no match{}", syms.similar(name)), None);
            if !diags.list.contains(&d) {
                diags.push(d);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KALLSYMS: &str = "ffffffff81000000 T _stext\n\
        ffffffff81001000 T vfs_read\n\
        ffffffff81002000 t do_sys_open\n\
        ffffffff81003000 D some_data\n\
        ffffffff82000000 T _sinittext\n\
        ffffffff82000100 t init_setup\n\
        ffffffff82100000 T _einittext\n\
        ffffffffc0001000 t ext4_file_open\t[ext4]\n";

    #[test]
    fn kallsyms_text_symbols_outside_init() {
        let s = KernelSymbols::from_kallsyms(KALLSYMS);
        assert!(s.matches("vfs_read") && s.matches("do_sys_open"));
        assert!(!s.matches("some_data"), "data is not probeable");
        assert!(!s.matches("init_setup"), "init text is freed");
        assert!(
            !s.matches("ext4_file_open"),
            "a module's symbol is not vmlinux's"
        );
        assert!(s.matches("ext4:ext4_*") && s.matches("ext4:*"));
        assert!(!s.matches("nosuchmod:*"));
        assert!(s.matches("vfs_*") && !s.matches("nope*"));
        // Unprivileged kallsyms: every address 0, the init text unknown.
        let zero = KALLSYMS
            .lines()
            .map(|l| format!("0000000000000000{}\n", &l[16..]))
            .collect::<String>();
        assert!(KernelSymbols::from_kallsyms(&zero).matches("init_setup"));
        // Absolute addresses: within the text, or unknown without addresses.
        assert!(s.may_hold(0xffffffff81001004) && s.may_hold(0xffffffffc0001010));
        assert!(!s.may_hold(0) && !s.may_hold(0x1000) && !s.may_hold(0xffffffffd0000000));
        assert!(KernelSymbols::from_kallsyms(&zero).may_hold(0));
    }

    #[test]
    fn similar_functions_for_a_misspelled_name() {
        let s = KernelSymbols::from_kallsyms(KALLSYMS);
        assert!(s
            .similar("vfs_raed")
            .starts_with(" (similar functions: vfs_read"));
        assert!(s.similar("ext4:ext4_file_opne").contains("ext4_file_open"));
        // Globs and unknown modules: nothing to suggest.
        assert_eq!(s.similar("vfs_r*"), "");
        assert_eq!(s.similar("nosuchmod:f"), "");
    }

    #[test]
    fn stap_file_blocklist() {
        for f in [
            "kernel/kprobes.c",
            "/build/linux/kernel/kprobes.c",
            "arch/x86/kernel/kprobes.c",
            "./arch/x86/include/asm/io.h",
            "/usr/src/linux/arch/x86/include/asm/paravirt.h",
        ] {
            assert!(blocklisted_file(f), "{f}");
        }
        for f in [
            "kernel/kprobes.h",
            "fs/read_write.c",
            "include/asm/io.h",
            "kernel/kprobes.c.orig",
        ] {
            assert!(!blocklisted_file(f), "{f}");
        }
        assert!(only_blocklisted_files("kernel/kprobes.c"));
        assert!(
            !only_blocklisted_files("kernel/*.c"),
            "kernel/fork.c is not"
        );
        assert!(!only_blocklisted_files("fs/*.c"));
    }
}
