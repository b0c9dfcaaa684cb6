//! `/proc/kallsyms`: which kernel text symbols the running kernel has, and
//! the resolution of a probe's symbolic target (`ProbeTarget`) against them.
//! Only the names the program asks for are kept, so reading a kernel's
//! hundred thousand symbols costs one pass and no per-line allocation.
use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::{self, BufRead, BufReader};
use thiserror::Error;
use vm_spec::program::ProbeTarget;

/// Where the running kernel lists its symbols.
pub const KALLSYMS_PATH: &str = "/proc/kallsyms";

/// The addresses of the vmlinux symbols in `names` (any type: `@var`
/// reads data, `D`/`d`/`B`/`b`/`R`/`r`), read from kallsyms text at `path`;
/// a name listed twice (two static variables of different files) keeps
/// its first listing. Module symbols are skipped.
pub fn data_symbols(path: &str, names: &[&str]) -> io::Result<HashMap<String, u64>> {
    let file = std::fs::File::open(path)?;
    scan_data_symbols(BufReader::with_capacity(1 << 16, file), names)
}

/// `data_symbols` from a reader: stops once every name is found.
pub fn scan_data_symbols<R: BufRead>(mut r: R, names: &[&str]) -> io::Result<HashMap<String, u64>> {
    let mut out = HashMap::new();
    let mut line = Vec::with_capacity(256);
    while out.len() < names.len() {
        line.clear();
        if r.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let Some(Line {
            addr,
            name,
            module: None,
            ..
        }) = Line::parse(&line)
        else {
            continue;
        };
        let Some(&name) = std::str::from_utf8(name)
            .ok()
            .and_then(|n| names.iter().find(|w| **w == n))
        else {
            continue;
        };
        let Some(addr) = std::str::from_utf8(addr)
            .ok()
            .and_then(|a| u64::from_str_radix(a, 16).ok())
        else {
            continue;
        };
        out.entry(name.to_string()).or_insert(addr);
    }
    Ok(out)
}

/// One line of /proc/kallsyms: `ADDR TYPE NAME [\[MODULE\]]`, as bytes.
pub(crate) struct Line<'a> {
    /// The address, in hex.
    pub(crate) addr: &'a [u8],
    /// The symbol type letter (`t`, `T`, `d`, ...).
    pub(crate) ty: &'a [u8],
    /// The symbol name.
    pub(crate) name: &'a [u8],
    /// The field after the name, `[module]` for a module's symbol.
    pub(crate) module: Option<&'a [u8]>,
}

impl<'a> Line<'a> {
    /// Splits `line` on blanks; `None` for a line of fewer than three
    /// fields.
    pub(crate) fn parse(line: &'a [u8]) -> Option<Self> {
        let mut fields = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|f| !f.is_empty());
        let (addr, ty, name) = (fields.next()?, fields.next()?, fields.next()?);
        Some(Line {
            addr,
            ty,
            name,
            module: fields.next(),
        })
    }
}

/// Why a target could not be resolved.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ResolveError {
    /// The one symbol named is not a text symbol of the running kernel.
    #[error("the kernel has no function '{0}' (not in {KALLSYMS_PATH})")]
    Missing(String),
    /// None of the alternatives is present.
    #[error("the kernel has none of the functions {} (not in {KALLSYMS_PATH})", .0.join(", "))]
    NoneOf(Vec<String>),
    /// A wildcard or module target matches no probeable function.
    #[error("no match for '{0}' among the kernel's probeable functions")]
    NoMatch(String),
    /// A source-file pattern (`f@FILEPAT`) whose debuginfo is missing or
    /// unreadable (`crate::debuginfo`).
    #[error("source-file patterns need the kernel's debuginfo: {0}")]
    Debuginfo(String),
    /// A `kernel.trace` name or pattern that no tracepoint of the running
    /// kernel matches (`crate::tracepoints`).
    #[error("the kernel has no tracepoint matching '{0}'")]
    NoTracepoint(String),
    /// A `module("m")` target whose module has no symbol in kallsyms: it
    /// is not loaded (or not a module of this kernel).
    #[error("module '{0}' is not loaded (no symbol of [{0}] in {KALLSYMS_PATH}; load it first, or mark the probe point optional with '?')")]
    ModuleNotLoaded(String),
    /// A function kallsyms lists only as a compiler clone, for a probe
    /// that reads target variables: the clone's parameters are not the
    /// function's (isra/constprop drop or change them) and BTF describes
    /// only the function.
    #[error("'{name}' is in the kernel only as the compiler clone '{clone}', whose parameters BTF does not describe (the probe reads target variables)")]
    CloneOnly {
        /// The function asked for.
        name: String,
        /// The clone kallsyms lists.
        clone: String,
    },
}

/// Is this `ProbeTarget::Symbol` name a pattern for the loader to expand
/// (see `ProbeTarget::Symbol`): a glob (`*`, `?`), a `module:` prefix
/// and/or a `@FILEPAT` suffix? Real kernel symbol names have none of these
/// characters (the compiler checks).
pub fn is_pattern(name: &str) -> bool {
    name.contains(['*', '?', ':', '@'])
}

/// Splits a pattern into (module, glob), without its `@FILEPAT` (which
/// `crate::debuginfo::restrict_to_source_files` applies).
pub fn split_pattern(name: &str) -> (Option<&str>, &str) {
    let name = vm_spec::program::split_source_file(name).0;
    match name.split_once(':') {
        Some((m, g)) => (Some(m), g),
        None => (None, name),
    }
}

/// A pattern's module part `pm` (a name or a glob, `module("*scsi*")`)
/// names the loaded module `m`.
fn module_fits(pm: Option<&str>, m: &str) -> bool {
    pm.is_some_and(|pm| glob(pm, m))
}

/// Shell-style match of `s` against `pat` (fnmatch(3): `*`, `?`, `[...]`),
/// the compiler's one implementation.
pub fn glob(pat: &str, s: &str) -> bool {
    compiler::glob::fnmatch(pat.as_bytes(), s.as_bytes())
}

/// Functions a wildcard never expands to, though kallsyms lists them as
/// text: compiler-split parts (`f.cold`, `f.isra.0`), and the machinery
/// a kprobe handler itself runs through (kprobes, ftrace, tracing, RCU,
/// locking, NMI/exception entry, preemption accounting) or stapvm itself.
/// The kernel's own blacklist (`/sys/kernel/debug/kprobes/blacklist`) is
/// applied on top by the loader.
pub fn unsafe_for_wildcard(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "kprobe",
        "__kprobe",
        "arch_",
        "ftrace",
        "__ftrace",
        "trace_",
        "__trace",
        "tracing_",
        "rcu",
        "__rcu",
        "_raw_",
        "__raw_",
        "lock",
        "__lock",
        "preempt",
        "__preempt",
        "nmi",
        "exc_",
        "asm_",
        "do_int3",
        "notify_",
        "native_",
        "debug_",
        "__x86_",
        "__sanitizer",
        "__asan",
        "__ubsan",
        "__kasan",
        "stp_",
        "stapvm",
        "irq",
        "__irq",
        "context_tracking",
        "ct_",
        "perf_",
        "__perf",
        "hrtimer",
        "sched_clock",
        "_stext",
        "_text",
        "__fentry",
        "__cfi",
        "__pfx_",
    ];
    name.contains('.') || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The text symbols of interest present in the running kernel.
#[derive(Debug, Default, Clone)]
pub struct Kallsyms {
    present: HashSet<String>,
    /// Each pattern target's matches (`split_pattern`), sorted, deduplicated:
    /// the probe symbol to use (`f`, or `m:f` for a module's function).
    matches: HashMap<String, BTreeSet<String>>,
    /// Patterns that cannot be resolved at all, and why (a source-file
    /// pattern without debuginfo).
    failed: HashMap<String, ResolveError>,
    /// The modules some pattern names that have a text symbol in kallsyms
    /// (loaded).
    modules: HashSet<String>,
    /// The module of each wanted symbol whose first listing is a module's
    /// (vmlinux lists its symbols first): `kernel.function("f")` on a
    /// module's function probes `m:f`, so the loader reads its parameters
    /// from the module's BTF.
    module_of: HashMap<String, String>,
    /// Wanted names kallsyms lists only as a compiler clone
    /// (`finish_task_switch.isra.0`, `f.constprop.0`): the first clone,
    /// probed when the plain name is absent, as stap finds the function
    /// in DWARF under its own name.
    clones: HashMap<String, String>,
}

/// The function a compiler clone of it stands for: `f` for `f.isra.0`,
/// `f.constprop.1`, `f.constprop.0.isra.0`; None for other names (split
/// parts such as `f.cold` or `f.part.0` are not the function's entry).
pub fn clone_of(name: &str) -> Option<&str> {
    let (base, rest) = name.split_once('.')?;
    let mut words = rest.split('.');
    let mut any = false;
    while let Some(kind) = words.next() {
        if !matches!(kind, "isra" | "constprop") {
            return None;
        }
        let n = words.next()?;
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        any = true;
    }
    any.then_some(base)
}

/// Every symbol name a set of targets may need.
pub fn wanted_names<'a>(targets: impl IntoIterator<Item = &'a ProbeTarget>) -> HashSet<String> {
    let mut out = HashSet::new();
    for t in targets {
        match t {
            // Addresses and statements are symbols by now
            // (crate::absolute, crate::statements); uprobes need none.
            ProbeTarget::None
            | ProbeTarget::File { .. }
            | ProbeTarget::Address(_)
            | ProbeTarget::Statement { .. }
            | ProbeTarget::User { .. }
            | ProbeTarget::Process { .. } => {}
            ProbeTarget::Symbol { name, .. } if is_pattern(name) => {}
            ProbeTarget::Symbol { name, .. } => {
                out.insert(name.clone());
            }
            ProbeTarget::FirstOf(list) => out.extend(list.iter().cloned()),
        }
    }
    out
}

/// The pattern targets among `targets`.
pub fn pattern_names<'a>(targets: impl IntoIterator<Item = &'a ProbeTarget>) -> Vec<String> {
    let mut out: Vec<String> = targets
        .into_iter()
        .filter_map(|t| match t {
            ProbeTarget::Symbol { name, .. } if is_pattern(name) => Some(name.clone()),
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The symbol each target prefers (the one symbol, or the first of a
/// list): once all of them are found, reading further cannot change any
/// resolution.
pub fn preferred_names<'a>(targets: impl IntoIterator<Item = &'a ProbeTarget>) -> HashSet<String> {
    targets
        .into_iter()
        .filter_map(|t| match t {
            ProbeTarget::None
            | ProbeTarget::File { .. }
            | ProbeTarget::Address(_)
            | ProbeTarget::Statement { .. }
            | ProbeTarget::User { .. }
            | ProbeTarget::Process { .. } => None,
            ProbeTarget::Symbol { name, .. } => Some(name.clone()),
            ProbeTarget::FirstOf(list) => list.first().cloned(),
        })
        .collect()
}

impl Kallsyms {
    /// Parses kallsyms text (`ADDR TYPE NAME [MODULE]` per line), keeping the
    /// text symbols (type `t` or `T`) whose name is in `wanted`. Malformed
    /// lines are ignored.
    #[cfg(test)]
    pub fn parse(text: &str, wanted: &HashSet<String>) -> Self {
        // Reading from memory cannot fail.
        Self::scan(text.as_bytes(), wanted, &HashSet::new(), &[]).unwrap_or_default()
    }

    /// Like `parse`, from a reader, one line at a time; stops reading as
    /// soon as every name in `preferred` has been found (an empty set reads
    /// everything). The kernel formats /proc/kallsyms as it is read, a
    /// hundred thousand lines, so stopping early matters at launch.
    /// `patterns` (see `is_pattern`) collect every text symbol they match;
    /// with any pattern the whole file is read.
    pub fn scan<R: BufRead>(
        mut r: R,
        wanted: &HashSet<String>,
        preferred: &HashSet<String>,
        patterns: &[String],
    ) -> io::Result<Self> {
        let mut present = HashSet::new();
        let mut modules = HashSet::new();
        let mut module_of = HashMap::new();
        let mut clones: HashMap<String, String> = HashMap::new();
        let mut matches: HashMap<String, BTreeSet<String>> = patterns
            .iter()
            .map(|p| (p.clone(), BTreeSet::new()))
            .collect();
        let split: Vec<(&String, Option<&str>, &str)> = patterns
            .iter()
            .map(|p| {
                let (m, g) = split_pattern(p);
                (p, m, g)
            })
            .collect();
        let mut pending = if patterns.is_empty() {
            preferred.len()
        } else {
            usize::MAX
        };
        let mut line = Vec::with_capacity(256);
        loop {
            line.clear();
            if r.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            let Some(Line {
                ty, name, module, ..
            }) = Line::parse(&line)
            else {
                continue;
            };
            if ty != b"t" && ty != b"T" {
                continue;
            }
            let Ok(name) = std::str::from_utf8(name) else {
                continue;
            };
            let wanted_here = wanted.contains(name);
            if !wanted_here {
                if let Some(base) = clone_of(name).filter(|b| wanted.contains(*b)) {
                    // A vmlinux clone only: module symbols come qualified.
                    clones
                        .entry(base.to_string())
                        .or_insert_with(|| name.to_string());
                }
            }
            // `[module]`, when the symbol is a module's.
            let module = if !split.is_empty() || wanted_here {
                module
                    .and_then(|m| m.strip_prefix(b"["))
                    .and_then(|m| m.strip_suffix(b"]"))
                    .and_then(|m| std::str::from_utf8(m).ok())
            } else {
                None
            };
            if !split.is_empty() {
                if let Some(m) = module {
                    if !modules.contains(m) && split.iter().any(|(_, pm, _)| module_fits(*pm, m)) {
                        modules.insert(m.to_string());
                    }
                }
                for (p, m, g) in &split {
                    let here = match (m, module) {
                        (None, None) => true,
                        (Some(pm), Some(mm)) => module_fits(Some(pm), mm),
                        _ => false,
                    };
                    if here && glob(g, name) {
                        if let Some(set) = matches.get_mut(*p) {
                            set.insert(match module {
                                Some(mm) => format!("{mm}:{name}"),
                                None => name.to_string(),
                            });
                        }
                    }
                }
            }
            if wanted_here && present.insert(name.to_string()) {
                if let Some(m) = module {
                    module_of.insert(name.to_string(), m.to_string());
                }
                if preferred.contains(name) {
                    pending -= 1;
                    if pending == 0 {
                        break;
                    }
                }
            }
        }
        Ok(Kallsyms {
            present,
            matches,
            failed: HashMap::new(),
            modules,
            module_of,
            clones,
        })
    }

    /// Reads `/proc/kallsyms` (or another file in the same format) until
    /// every target's preferred symbol is found.
    pub fn read(path: &str, targets: &[&ProbeTarget]) -> io::Result<Self> {
        let file = std::fs::File::open(path)?;
        let wanted = wanted_names(targets.iter().copied());
        let preferred = preferred_names(targets.iter().copied());
        let patterns = pattern_names(targets.iter().copied());
        Self::scan(
            BufReader::with_capacity(1 << 16, file),
            &wanted,
            &preferred,
            &patterns,
        )
    }

    /// Keeps, of each pattern's matches, the functions a kprobe may go on:
    /// those in `allowed` (ftrace's `available_filter_functions`, when the
    /// kernel has it), not in the kernel's kprobe `blacklist`, and, for
    /// wildcards, not `unsafe_for_wildcard`. An exact `module:function`
    /// is only checked against the blacklist.
    pub fn restrict(&mut self, allowed: Option<&HashSet<String>>, blacklist: &HashSet<String>) {
        for (pat, set) in self.matches.iter_mut() {
            let (m, g) = split_pattern(pat);
            let wild = g.contains(['*', '?']) || m.is_some_and(|m| m.contains(['*', '?']));
            set.retain(|sym| {
                let f = split_pattern(sym).1;
                !blacklist.contains(f)
                    && (!wild
                        || (allowed.map_or(true, |a| a.contains(f)) && !unsafe_for_wildcard(f)))
            });
        }
    }

    /// Keeps, of `pattern`'s matches, the functions named in `names` (those
    /// its `@FILEPAT` selects in the debuginfo).
    pub fn restrict_to_names(&mut self, pattern: &str, names: &BTreeSet<String>) {
        if let Some(set) = self.matches.get_mut(pattern) {
            set.retain(|sym| names.contains(split_pattern(sym).1));
        }
    }

    /// Makes `pattern` unresolvable, for `why`.
    pub fn fail_pattern(&mut self, pattern: &str, why: ResolveError) {
        self.matches.remove(pattern);
        self.failed.insert(pattern.to_string(), why);
    }

    /// Why `pattern` cannot be resolved at all (`fail_pattern`), if so.
    pub fn failure(&self, pattern: &str) -> Option<&ResolveError> {
        self.failed.get(pattern)
    }

    /// The functions a pattern target matches (after `restrict`).
    pub fn pattern_matches(&self, pattern: &str) -> Vec<String> {
        self.matches
            .get(pattern)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The probe symbol of present symbol `name`: `m:name` when it is
    /// module `m`'s function, else `name`.
    fn qualified(&self, name: &str) -> String {
        match self.module_of.get(name) {
            Some(m) => format!("{m}:{name}"),
            None => name.to_string(),
        }
    }

    /// True when `name` is a text symbol of the kernel (among those wanted).
    pub fn has(&self, name: &str) -> bool {
        self.present.contains(name)
    }

    /// Resolves a probe target: `Ok(None)` for a target without a symbol,
    /// `Ok(Some((symbol, offset)))` for the symbol chosen. A function
    /// kallsyms lists only as a compiler clone (`f.isra.0`) resolves to the
    /// clone when `clones` is true (the probe reads no target variables:
    /// its entry is still `f`'s, as stap finds it in DWARF), else it is
    /// `ResolveError::CloneOnly`.
    pub fn resolve(
        &self,
        target: &ProbeTarget,
        clones: bool,
    ) -> Result<Option<(String, u32)>, ResolveError> {
        let clone_of = |name: &String| -> Option<Result<String, ResolveError>> {
            let clone = self.clones.get(name)?;
            Some(if clones {
                Ok(clone.clone())
            } else {
                Err(ResolveError::CloneOnly {
                    name: name.clone(),
                    clone: clone.clone(),
                })
            })
        };
        match target {
            // Addresses and statements are symbols by now
            // (crate::absolute, crate::statements).
            ProbeTarget::None
            | ProbeTarget::Process { .. }
            | ProbeTarget::Address(_)
            | ProbeTarget::Statement { .. } => Ok(None),
            // A uprobe's symbol is its binary (crate::uprobes placed it).
            ProbeTarget::User { path, .. } => Ok(Some((path.clone(), 0))),
            ProbeTarget::File { name, mode } => Ok(Some((name.clone(), *mode))),
            ProbeTarget::Symbol { name, .. } if self.failed.contains_key(name) => {
                Err(self.failed[name].clone())
            }
            ProbeTarget::Symbol { name, .. } if is_pattern(name) => self
                .pattern_matches(name)
                .into_iter()
                .next()
                .map(|n| Some((n, 0)))
                .ok_or_else(|| match split_pattern(name).0 {
                    Some(m) if !self.modules.iter().any(|x| module_fits(Some(m), x)) => {
                        ResolveError::ModuleNotLoaded(m.to_string())
                    }
                    _ => ResolveError::NoMatch(name.clone()),
                }),
            ProbeTarget::Symbol { name, offset } => {
                if self.has(name) {
                    Ok(Some((self.qualified(name), *offset)))
                } else if let Some(clone) = clone_of(name) {
                    clone.map(|c| Some((c, *offset)))
                } else {
                    Err(ResolveError::Missing(name.clone()))
                }
            }
            ProbeTarget::FirstOf(list) => {
                if let Some(n) = list.iter().find(|n| self.has(n)) {
                    return Ok(Some((self.qualified(n), 0)));
                }
                match list.iter().find_map(clone_of) {
                    Some(clone) => clone.map(|c| Some((c, 0))),
                    None => Err(ResolveError::NoneOf(list.clone())),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = "\
ffffffff81000000 T _stext
ffffffff81234560 T __x64_sys_openat
ffffffff81234600 t __se_sys_open
ffffffff81234700 T vfs_read
ffffffff81234800 D sys_open
ffffffff81234900 W weak_fn
0000000000000000 t ext4_file_read_iter\t[ext4]
garbage
";

    #[test]
    fn data_symbols_take_vmlinux_addresses_of_any_type() {
        let text = format!(
            "{FIXTURE}ffffffff82000010 D jiffies\nffffffff82000020 b avenrun\n\
             ffffffff82000030 d avenrun\nffffffffc0001000 d jiffies\t[ext4]\n"
        );
        let got = scan_data_symbols(text.as_bytes(), &["jiffies", "avenrun", "vfs_read", "none"])
            .unwrap();
        assert_eq!(got.get("jiffies"), Some(&0xffff_ffff_8200_0010));
        // The first listing wins.
        assert_eq!(got.get("avenrun"), Some(&0xffff_ffff_8200_0020));
        assert_eq!(got.get("vfs_read"), Some(&0xffff_ffff_8123_4700));
        assert_eq!(got.get("none"), None);
        // A module's symbol is not vmlinux's.
        let got =
            scan_data_symbols("ffffffffc0001000 d mvar\t[ext4]\n".as_bytes(), &["mvar"]).unwrap();
        assert!(got.is_empty());
    }

    fn sym(name: &str, offset: u32) -> ProbeTarget {
        ProbeTarget::Symbol {
            name: name.into(),
            offset,
        }
    }

    fn syms(names: &[&str]) -> Kallsyms {
        let wanted = names.iter().map(|s| s.to_string()).collect();
        Kallsyms::parse(FIXTURE, &wanted)
    }

    #[test]
    fn keeps_only_wanted_text_symbols() {
        let k = syms(&["vfs_read", "sys_open", "weak_fn", "ext4_file_read_iter"]);
        assert!(k.has("vfs_read"));
        assert!(!k.has("sys_open"), "data symbol");
        assert!(!k.has("weak_fn"), "not t/T");
        assert!(k.has("ext4_file_read_iter"), "module text symbol");
        assert!(!k.has("_stext"), "not wanted");
    }

    /// `kernel.function("f")` on a module's function probes `m:f` (the
    /// loader then reads the module's BTF); vmlinux's symbols stay bare,
    /// also when a module has one of the same name after them.
    #[test]
    fn module_functions_resolve_qualified() {
        let text = format!("{FIXTURE}ffffffff81000090 t vfs_read\t[other]\n");
        let wanted = ["vfs_read", "ext4_file_read_iter"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let k = Kallsyms::parse(&text, &wanted);
        let t = sym("ext4_file_read_iter", 0);
        assert_eq!(
            k.resolve(&t, true),
            Ok(Some(("ext4:ext4_file_read_iter".into(), 0)))
        );
        let t = ProbeTarget::FirstOf(vec!["nope".into(), "ext4_file_read_iter".into()]);
        assert_eq!(
            k.resolve(&t, true),
            Ok(Some(("ext4:ext4_file_read_iter".into(), 0)))
        );
        assert_eq!(
            k.resolve(&sym("vfs_read", 0), true),
            Ok(Some(("vfs_read".into(), 0)))
        );
    }

    #[test]
    fn clones_stand_for_absent_functions() {
        assert_eq!(
            clone_of("finish_task_switch.isra.0"),
            Some("finish_task_switch")
        );
        assert_eq!(clone_of("f.constprop.0.isra.0"), Some("f"));
        assert_eq!(clone_of("f.cold"), None);
        assert_eq!(clone_of("f.part.0"), None);
        assert_eq!(clone_of("f.isra"), None);
        assert_eq!(clone_of("f"), None);
        let text = "ffffffff81000000 t finish_task_switch.isra.0\n\
                    ffffffff81000100 t vfs_read.cold\n\
                    ffffffff81000200 T g\n\
                    ffffffff81000300 t g.constprop.0\n";
        let wanted: HashSet<String> = ["finish_task_switch", "vfs_read", "g"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let k = Kallsyms::parse(text, &wanted);
        let t = sym("finish_task_switch", 0);
        assert_eq!(
            k.resolve(&t, true),
            Ok(Some(("finish_task_switch.isra.0".into(), 0)))
        );
        // A probe that reads parameters cannot use the clone's.
        assert_eq!(
            k.resolve(&t, false),
            Err(ResolveError::CloneOnly {
                name: "finish_task_switch".into(),
                clone: "finish_task_switch.isra.0".into(),
            })
        );
        let first = ProbeTarget::FirstOf(vec!["nope".into(), "finish_task_switch".into()]);
        assert_eq!(
            k.resolve(&first, true),
            Ok(Some(("finish_task_switch.isra.0".into(), 0)))
        );
        assert!(matches!(
            k.resolve(&first, false),
            Err(ResolveError::CloneOnly { .. })
        ));
        // The plain name wins where it exists; a split part is no entry.
        assert_eq!(k.resolve(&sym("g", 0), true), Ok(Some(("g".into(), 0))));
        assert!(k.resolve(&sym("vfs_read", 0), true).is_err());
    }

    #[test]
    fn resolves_symbols() {
        let k = syms(&["vfs_read", "nope"]);
        let t = sym("vfs_read", 4);
        assert_eq!(k.resolve(&t, true), Ok(Some(("vfs_read".into(), 4))));
        let t = sym("nope", 0);
        assert_eq!(
            k.resolve(&t, true),
            Err(ResolveError::Missing("nope".into()))
        );
        assert_eq!(k.resolve(&ProbeTarget::None, true), Ok(None));
    }

    /// A reader that fails once its text is used up: proves a scan
    /// stopped before the end.
    struct Then<'a>(&'a [u8]);
    impl io::Read for Then<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::Error::other("read past the point"));
            }
            let n = buf.len().min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn scan_stops_once_every_preferred_symbol_is_found() {
        let t1 = ProbeTarget::FirstOf(vec!["__x64_sys_openat".into(), "sys_openat".into()]);
        let t2 = sym("vfs_read", 0);
        let wanted = wanted_names([&t1, &t2]);
        let preferred = preferred_names([&t1, &t2]);
        // Everything up to vfs_read, then an error: never reached.
        let end = FIXTURE.find("ffffffff81234800").unwrap();
        let r = io::BufReader::new(Then(&FIXTURE.as_bytes()[..end]));
        let k = Kallsyms::scan(r, &wanted, &preferred, &[]).unwrap();
        assert!(k.has("__x64_sys_openat") && k.has("vfs_read"));
        // A missing preferred symbol reads to the end.
        let t3 = ProbeTarget::FirstOf(vec!["nope".into(), "vfs_read".into()]);
        let r = io::BufReader::new(Then(FIXTURE.as_bytes()));
        let e = Kallsyms::scan(r, &wanted_names([&t3]), &preferred_names([&t3]), &[]);
        assert!(e.is_err());
        let k = Kallsyms::scan(
            FIXTURE.as_bytes(),
            &wanted_names([&t3]),
            &preferred_names([&t3]),
            &[],
        )
        .unwrap();
        assert_eq!(k.resolve(&t3, true), Ok(Some(("vfs_read".into(), 0))));
    }

    #[test]
    fn first_of_picks_the_first_present() {
        let list: Vec<String> = ["__x64_sys_open", "__se_sys_open", "sys_open"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let t = ProbeTarget::FirstOf(list.clone());
        let k = Kallsyms::parse(FIXTURE, &wanted_names([&t]));
        assert_eq!(k.resolve(&t, true), Ok(Some(("__se_sys_open".into(), 0))));
        let t2 = ProbeTarget::FirstOf(vec!["a".into(), "b".into()]);
        let k = Kallsyms::parse(FIXTURE, &wanted_names([&t2]));
        let err = k.resolve(&t2, true).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the kernel has none of the functions a, b (not in /proc/kallsyms)"
        );
    }

    #[test]
    fn patterns_match_text_symbols_by_module() {
        let text = "\
ffffffff81000000 T vfs_read
ffffffff81000010 T vfs_readv
ffffffff81000020 t vfs_readv
ffffffff81000030 T vfs_write
ffffffff81000040 t vfs_read.cold
ffffffff81000050 D vfs_read_data
ffffffff81000060 t ext4_file_read_iter\t[ext4]
ffffffff81000070 t ext4_llseek\t[ext4]
ffffffff81000080 t kprobe_vfs_readx
";
        let pats: Vec<String> = [
            "vfs_read*",
            "ext4:ext4_*",
            "ext4:ext4_llseek",
            "nope*",
            "ext4:nope",
            "nfsd:nfsd_dispatch",
            "*xt*:*",
            "nfs*:*",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut k =
            Kallsyms::scan(text.as_bytes(), &HashSet::new(), &HashSet::new(), &pats).unwrap();
        assert_eq!(
            k.pattern_matches("vfs_read*"),
            ["vfs_read", "vfs_read.cold", "vfs_readv"]
        );
        assert_eq!(
            k.pattern_matches("ext4:ext4_*"),
            ["ext4:ext4_file_read_iter", "ext4:ext4_llseek"]
        );
        // A module glob: each match named by its own module.
        assert_eq!(
            k.pattern_matches("*xt*:*"),
            ["ext4:ext4_file_read_iter", "ext4:ext4_llseek"]
        );
        assert_eq!(
            k.resolve(&sym("nfs*:*", 0), true),
            Err(ResolveError::ModuleNotLoaded("nfs*".into()))
        );
        let allowed: HashSet<String> = [
            "vfs_read",
            "vfs_read.cold",
            "ext4_llseek",
            "ext4_file_read_iter",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let black: HashSet<String> = ["ext4_file_read_iter".to_string()].into();
        k.restrict(Some(&allowed), &black);
        assert_eq!(k.pattern_matches("vfs_read*"), ["vfs_read"]);
        assert_eq!(k.pattern_matches("ext4:ext4_*"), ["ext4:ext4_llseek"]);
        let t = sym("ext4:ext4_llseek", 0);
        assert_eq!(
            k.resolve(&t, true),
            Ok(Some(("ext4:ext4_llseek".into(), 0)))
        );
        let t = sym("nope*", 0);
        assert_eq!(
            k.resolve(&t, true),
            Err(ResolveError::NoMatch("nope*".into()))
        );
        // A loaded module without the function, and a module not loaded.
        let t = sym("ext4:nope", 0);
        assert_eq!(
            k.resolve(&t, true),
            Err(ResolveError::NoMatch("ext4:nope".into()))
        );
        let t = sym("nfsd:nfsd_dispatch", 0);
        let e = k.resolve(&t, true).unwrap_err();
        assert_eq!(e, ResolveError::ModuleNotLoaded("nfsd".into()));
        assert!(e.to_string().starts_with("module 'nfsd' is not loaded"));
        assert!(glob("a?c*", "abcdef") && !glob("a?c", "ac"));
    }
}
