//! The shared libraries of a program, for `process("EXE").library("LIB")`:
//! the library a name or glob means is looked for among the program's
//! dependencies (its `DT_NEEDED` entries and theirs, each found as the
//! dynamic linker finds it: `DT_RPATH`/`DT_RUNPATH` with `$ORIGIN`, the
//! directories of `/etc/ld.so.conf`, the system's default ones), then,
//! for a library the program only opens at run time (`dlopen`), in those
//! directories directly. A `LIB` with a `/` is that file.
use crate::kallsyms::glob;
use crate::ubinary::entries_matching;
use object::read::elf::{Dyn, ElfFile64, FileHeader, SectionHeader};
use object::Endianness;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Dependencies followed at most (a program's whole closure is a few dozen).
const MAX_LIBS: usize = 256;

/// `/etc/ld.so.conf` include levels followed at most.
const MAX_CONF_DEPTH: usize = 4;

/// The directories the dynamic linker searches after a binary's own
/// paths, when `/etc/ld.so.conf` names none of them (x86-64 Debian's
/// multiarch ones, then the traditional ones).
const DEFAULT_DIRS: &[&str] = &[
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];

/// The libraries `lib` (a file name or glob, or a path) means for the
/// program `exe`, canonical, each once; empty when there is none.
pub fn find_library(exe: &Path, lib: &str) -> Vec<PathBuf> {
    if lib.contains('/') {
        return std::fs::canonicalize(lib)
            .ok()
            .filter(|p| p.is_file())
            .into_iter()
            .collect();
    }
    let dirs = system_dirs();
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    for dep in dependencies(exe, &dirs) {
        let name = dep.file_name().map(|n| n.to_string_lossy().into_owned());
        if name.is_some_and(|n| glob(lib, &n)) {
            push_canonical(&mut found, &mut seen, &dep);
        }
    }
    if found.is_empty() {
        for d in &dirs {
            for p in entries_matching(d, lib) {
                push_canonical(&mut found, &mut seen, &p);
            }
        }
    }
    found
}

/// Adds `p`'s canonical path to `found` unless already there (`seen`) or
/// not a regular file.
fn push_canonical(found: &mut Vec<PathBuf>, seen: &mut HashSet<PathBuf>, p: &Path) {
    if let Ok(c) = std::fs::canonicalize(p) {
        if c.is_file() && seen.insert(c.clone()) {
            found.push(c);
        }
    }
}

/// The libraries `exe` loads at start, breadth first (its `DT_NEEDED`,
/// then theirs), as paths found in their search directories; at most
/// [`MAX_LIBS`].
fn dependencies(exe: &Path, system: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut names = HashSet::new();
    let mut queue = vec![exe.to_path_buf()];
    let mut at = 0;
    while at < queue.len() && out.len() < MAX_LIBS {
        let bin = queue[at].clone();
        at += 1;
        let Some(dynamic) = read_dynamic(&bin) else {
            continue;
        };
        let origin = bin.parent().map(Path::to_path_buf).unwrap_or_default();
        let own: Vec<PathBuf> = dynamic
            .paths
            .iter()
            .flat_map(|p| p.split(':'))
            .filter(|d| !d.is_empty())
            .map(|d| {
                PathBuf::from(
                    d.replace("${ORIGIN}", "$ORIGIN")
                        .replace("$ORIGIN", &origin.to_string_lossy()),
                )
            })
            .collect();
        for n in dynamic.needed {
            if !names.insert(n.clone()) {
                continue;
            }
            let found = if n.contains('/') {
                Some(PathBuf::from(&n)).filter(|p| p.is_file())
            } else {
                own.iter()
                    .chain(system)
                    .map(|d| d.join(&n))
                    .find(|p| p.is_file())
            };
            if let Some(p) = found {
                queue.push(p.clone());
                out.push(p);
            }
        }
    }
    out
}

/// What a binary's dynamic section says about its libraries.
#[derive(Default)]
struct Dynamic {
    /// `DT_NEEDED`, in order.
    needed: Vec<String>,
    /// `DT_RUNPATH`, else `DT_RPATH` (colon-separated lists).
    paths: Vec<String>,
}

/// The dynamic section of the ELF file at `path`; `None` when it is not a
/// 64-bit ELF file or cannot be read.
fn read_dynamic(path: &Path) -> Option<Dynamic> {
    let file = std::fs::File::open(path).ok()?;
    // SAFETY: the file is only read (see ubinary::Binary::open).
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    let data: &[u8] = &map;
    let elf = ElfFile64::<Endianness>::parse(data).ok()?;
    let endian = elf.endian();
    let sections = elf.elf_header().sections(endian, data).ok()?;
    let (dyns, link) = sections.dynamic(endian, data).ok()??;
    let strings = sections.section(link).ok()?.strings(endian, data).ok()??;
    let mut out = Dynamic::default();
    let (mut runpath, mut rpath) = (Vec::new(), Vec::new());
    for d in dyns {
        let tag = d.tag32(endian);
        let text = || {
            d.string(endian, strings)
                .ok()
                .map(|s| String::from_utf8_lossy(s).into_owned())
        };
        match tag {
            Some(object::elf::DT_NEEDED) => out.needed.extend(text()),
            Some(object::elf::DT_RUNPATH) => runpath.extend(text()),
            Some(object::elf::DT_RPATH) => rpath.extend(text()),
            Some(object::elf::DT_NULL) => break,
            _ => {}
        }
    }
    // The linker ignores DT_RPATH when DT_RUNPATH is there.
    out.paths = if runpath.is_empty() { rpath } else { runpath };
    Some(out)
}

/// The system's library directories: those of `/etc/ld.so.conf` (and the
/// files it includes), then [`DEFAULT_DIRS`], each once.
fn system_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    read_conf(Path::new("/etc/ld.so.conf"), 0, &mut dirs);
    for d in DEFAULT_DIRS {
        dirs.push(PathBuf::from(d));
    }
    let mut seen = HashSet::new();
    dirs.retain(|d| seen.insert(d.clone()));
    dirs
}

/// The directories of an `ld.so.conf` file, its `include GLOB` lines
/// followed up to [`MAX_CONF_DEPTH`] levels.
fn read_conf(path: &Path, depth: usize, dirs: &mut Vec<PathBuf>) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(pat) = line.strip_prefix("include") {
            if depth >= MAX_CONF_DEPTH {
                continue;
            }
            let pat = pat.trim();
            let pat = if pat.starts_with('/') {
                PathBuf::from(pat)
            } else {
                path.parent().unwrap_or(Path::new("/")).join(pat)
            };
            let (Some(dir), Some(name)) = (pat.parent(), pat.file_name()) else {
                continue;
            };
            for f in entries_matching(dir, &name.to_string_lossy()) {
                read_conf(&f, depth + 1, dirs);
            }
        } else if line.starts_with('/') {
            dirs.push(PathBuf::from(line));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dynamic_programs_libc_is_found_among_its_dependencies() {
        let sh = crate::ubinary::find_program("sh").unwrap();
        let libs = find_library(&sh, "libc.so.6");
        assert_eq!(libs.len(), 1, "{libs:?}");
        assert!(libs[0].is_absolute());
        assert!(
            libs[0]
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("libc"),
            "{libs:?}"
        );
        // A glob, and the same file through a path.
        assert_eq!(find_library(&sh, "libc.so*"), libs);
        assert_eq!(find_library(&sh, &libs[0].to_string_lossy()), libs);
    }

    #[test]
    fn an_unknown_library_is_none() {
        let sh = crate::ubinary::find_program("sh").unwrap();
        assert!(find_library(&sh, "libstapvm-nonexistent.so.9").is_empty());
        assert!(find_library(&sh, "/nonexistent/libx.so").is_empty());
    }
}
