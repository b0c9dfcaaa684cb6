//! Source files of kernel functions, from DWARF debuginfo: what a probe
//! point's `@FILEPAT` (`kernel.function("*@fs/*.c")`) needs and BTF and
//! kallsyms do not have. stap's rule (tapsets.cxx `query_cu` /
//! `query_dwarf_func`, dwflpp.cxx `collect_srcfiles_matching`): a function
//! is selected when its DWARF decl file (`dwarf_decl_file`: the line
//! table's file name, prefixed with its directory and `/` unless absolute)
//! matches FILEPAT or `*/FILEPAT` with fnmatch(3) without `FNM_PATHNAME`
//! (so `*` crosses `/`); a function without a decl file is selected when
//! some file of its compilation unit matches; a function declared in a
//! file of stap's blocklist (`compiler::symbols::BLOCKLISTED_FILES`,
//! `kernel/kprobes.c` ...) is never selected.
//!
//! Only out-of-line functions (a `DW_TAG_subprogram` child of a CU with
//! code: `DW_AT_low_pc` or `DW_AT_ranges`) are kept, by name; the loader
//! intersects the names with kallsyms, so KASLR does not matter. The file
//! is mmap'd and only the sections the walk needs are read; a CU none of
//! whose files matches is skipped after its line table header, and the
//! walk steps over each function's children with `DW_AT_sibling`. A
//! relocatable file (a module's `.ko` debug file) has its debug sections'
//! absolute relocations applied first.
use crate::kallsyms::{glob, Kallsyms, ResolveError};
use compiler::symbols::blocklisted_file;
use gimli::{AttributeValue, EndianSlice, RunTimeEndian, SectionId};
use object::{Object, ObjectSection, ObjectSymbol, RelocationKind, RelocationTarget};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Where Debian's `linux-image-$(uname -r)-dbg` installs the DWARF files
/// (`boot/vmlinux-REL`, `lib/modules/REL/...`).
pub const DEBUG_ROOT: &str = "/usr/lib/debug";
/// Environment variable that replaces `DEBUG_ROOT` (tests, other layouts).
pub const DEBUG_ROOT_ENV: &str = "STAPVM_DEBUGINFO";

/// Why the debuginfo could not be used.
#[derive(Debug, Error)]
pub enum DebuginfoError {
    /// The debug file is not installed.
    #[error("{} not found (install {package})", path.display())]
    Missing {
        /// The file looked for.
        path: PathBuf,
        /// The Debian package that has it.
        package: String,
    },
    /// The file exists but cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Not an ELF file, or a section does not decompress or relocate.
    #[error("{}: {why}", path.display())]
    Elf {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The DWARF data does not parse.
    #[error("{}: bad DWARF: {source}", path.display())]
    Dwarf {
        /// The file.
        path: PathBuf,
        /// gimli's error.
        source: gimli::Error,
    },
}

/// The kernel release (`uname -r`).
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The debug root: `$STAPVM_DEBUGINFO` or `DEBUG_ROOT`.
pub fn debug_root() -> PathBuf {
    std::env::var_os(DEBUG_ROOT_ENV)
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(DEBUG_ROOT), PathBuf::from)
}

/// Debian's package with the kernel's debuginfo.
pub fn package(release: &str) -> String {
    format!("linux-image-{release}-dbg")
}

/// Narrows the kallsyms matches of every `@FILEPAT` pattern among
/// `patterns` (`ProbeTarget::Symbol` names, `[module:]glob@FILEPAT`) to
/// the functions the debuginfo below `root` selects, one pass per DWARF
/// file; a pattern whose debuginfo is missing or unreadable fails
/// (`ResolveError::Debuginfo`).
pub fn restrict_to_source_files(k: &mut Kallsyms, patterns: &[String], root: &Path, release: &str) {
    let mut by_file: BTreeMap<Option<&str>, Vec<(&str, &str)>> = BTreeMap::new();
    for p in patterns {
        let (f, Some(file)) = vm_spec::program::split_source_file(p) else {
            continue;
        };
        let module = f.split_once(':').map(|(m, _)| m);
        by_file.entry(module).or_default().push((p, file));
    }
    for (module, list) in by_file {
        let files: Vec<&str> = list.iter().map(|(_, f)| *f).collect();
        match locate(root, release, module).and_then(|path| functions_in_files(&path, &files)) {
            Ok(sets) => {
                for ((p, _), names) in list.iter().zip(&sets) {
                    k.restrict_to_names(p, names);
                }
            }
            Err(e) => {
                for (p, _) in &list {
                    k.fail_pattern(p, ResolveError::Debuginfo(e.to_string()));
                }
            }
        }
    }
}

/// The DWARF file of vmlinux (`module` None) or of a module (found by
/// name under `lib/modules/REL/`, `-` and `_` alike) below `root`.
pub fn locate(root: &Path, release: &str, module: Option<&str>) -> Result<PathBuf, DebuginfoError> {
    let missing = |path: PathBuf| DebuginfoError::Missing {
        path,
        package: package(release),
    };
    match module {
        None => {
            let path = root.join("boot").join(format!("vmlinux-{release}"));
            if path.is_file() {
                Ok(path)
            } else {
                Err(missing(path))
            }
        }
        Some(m) => {
            let dir = root.join("lib/modules").join(release);
            let want = m.replace('-', "_");
            find_module(&dir, &want, 0).ok_or_else(|| missing(dir.join(format!("**/{m}.ko"))))
        }
    }
}

/// Depth-first search of `dir` for `NAME.ko` (or `.ko.debug`).
fn find_module(dir: &Path, want: &str, depth: u32) -> Option<PathBuf> {
    if depth > 8 {
        return None;
    }
    let mut subdirs = Vec::new();
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let Ok(ty) = entry.file_type() else { continue };
        if ty.is_dir() {
            subdirs.push(path);
            continue;
        }
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let stem = name
            .strip_suffix(".ko")
            .or_else(|| name.strip_suffix(".ko.debug"));
        if stem.is_some_and(|s| s.replace('-', "_") == want) {
            return Some(path);
        }
    }
    subdirs.sort();
    subdirs.iter().find_map(|d| find_module(d, want, depth + 1))
}

/// The sections the walk reads; the others load as empty.
const NEEDED: &[SectionId] = &[
    SectionId::DebugAbbrev,
    SectionId::DebugInfo,
    SectionId::DebugLine,
    SectionId::DebugLineStr,
    SectionId::DebugStr,
    SectionId::DebugStrOffsets,
    SectionId::DebugAddr,
    SectionId::DebugRanges,
    SectionId::DebugRngLists,
];

/// The reader of every DWARF section (a slice of the mapped file).
pub(crate) type Reader<'a> = EndianSlice<'a, RunTimeEndian>;

/// For each pattern of `patterns` (FILEPAT, as written after `@`), the
/// names of the out-of-line functions of the DWARF file at `path` that
/// stap's rule selects.
pub fn functions_in_files(
    path: &Path,
    patterns: &[&str],
) -> Result<Vec<BTreeSet<String>>, DebuginfoError> {
    with_dwarf(path, |dwarf, _| walk(dwarf, patterns))
}

/// Maps the DWARF file at `path` (relocating a module's debug sections)
/// and runs `f` on its DWARF and its ELF file; a gimli error of `f`
/// becomes `DebuginfoError::Dwarf`.
pub(crate) fn with_dwarf<T>(
    path: &Path,
    f: impl FnOnce(&gimli::Dwarf<Reader<'_>>, &object::File<'_>) -> gimli::Result<T>,
) -> Result<T, DebuginfoError> {
    let io = |source| DebuginfoError::Io {
        path: path.to_path_buf(),
        source,
    };
    let elf = |why: String| DebuginfoError::Elf {
        path: path.to_path_buf(),
        why,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    // SAFETY: the file is only read; a concurrent truncation is the same
    // hazard every debugger reading debuginfo accepts.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
    let obj = object::File::parse(&*map).map_err(|e| elf(e.to_string()))?;
    let endian = if obj.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    if obj.section_by_name(".debug_info").is_none() {
        return Err(elf("no DWARF (.debug_info) in this file".into()));
    }
    let relocatable = obj.kind() == object::ObjectKind::Relocatable;
    let sections = gimli::DwarfSections::load(|id| -> Result<Cow<[u8]>, String> {
        if !NEEDED.contains(&id) {
            return Ok(Cow::Borrowed(&[]));
        }
        let Some(sec) = obj.section_by_name(id.name()) else {
            return Ok(Cow::Borrowed(&[]));
        };
        let mut data = sec
            .uncompressed_data()
            .map_err(|e| format!("{}: {e}", id.name()))?;
        if relocatable {
            relocate(&obj, &sec, &mut data).map_err(|e| format!("{}: {e}", id.name()))?;
        }
        Ok(data)
    })
    .map_err(elf)?;
    let dwarf = sections.borrow(|s| EndianSlice::new(s, endian));
    f(&dwarf, &obj).map_err(|source| DebuginfoError::Dwarf {
        path: path.to_path_buf(),
        source,
    })
}

/// Applies the absolute relocations of `sec` (those DWARF uses between
/// its sections) to `data`.
fn relocate<'d>(
    obj: &object::File<'d>,
    sec: &object::Section<'d, '_>,
    data: &mut Cow<'d, [u8]>,
) -> Result<(), String> {
    for (off, r) in sec.relocations() {
        if r.kind() != RelocationKind::Absolute {
            continue;
        }
        let RelocationTarget::Symbol(idx) = r.target() else {
            continue;
        };
        let sym = obj.symbol_by_index(idx).map_err(|e| e.to_string())?;
        let size = usize::from(r.size() / 8);
        let off = usize::try_from(off).map_err(|e| e.to_string())?;
        let Some(slot) = data.get(off..off + size) else {
            return Err(format!("relocation at {off:#x} outside the section"));
        };
        let implicit = if r.has_implicit_addend() {
            match size {
                4 => u64::from(read_u32(slot, obj.is_little_endian())),
                8 => read_u64(slot, obj.is_little_endian()),
                _ => continue,
            }
        } else {
            0
        };
        let value = symbol_address(obj, &sym)
            .wrapping_add(r.addend() as u64)
            .wrapping_add(implicit);
        let le = obj.is_little_endian();
        let out = &mut data.to_mut()[off..off + size];
        match size {
            4 => out.copy_from_slice(&if le {
                (value as u32).to_le_bytes()
            } else {
                (value as u32).to_be_bytes()
            }),
            8 => out.copy_from_slice(&if le {
                value.to_le_bytes()
            } else {
                value.to_be_bytes()
            }),
            _ => {}
        }
    }
    Ok(())
}

/// A symbol's address as the relocated DWARF sees it. Each section of a
/// relocatable file starts at 0: a base of its own (its index << 32)
/// keeps the code of different sections (.text, .init.text) apart in
/// the line table, the ranges and the symbols (crate::statements).
/// (An executable's symbols are at their addresses.)
pub(crate) fn symbol_address(obj: &object::File<'_>, sym: &object::Symbol<'_, '_>) -> u64 {
    let relocatable = obj.kind() == object::ObjectKind::Relocatable;
    let base = match sym.section_index() {
        Some(object::SectionIndex(i)) if relocatable => (i as u64) << 32,
        _ => 0,
    };
    sym.address().wrapping_add(base)
}

fn read_u32(b: &[u8], le: bool) -> u32 {
    let a = [b[0], b[1], b[2], b[3]];
    if le {
        u32::from_le_bytes(a)
    } else {
        u32::from_be_bytes(a)
    }
}

fn read_u64(b: &[u8], le: bool) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    if le {
        u64::from_le_bytes(a)
    } else {
        u64::from_be_bytes(a)
    }
}

/// stap's match of one source file name against FILEPAT.
pub fn file_matches(pattern: &str, file: &str) -> bool {
    glob(pattern, file) || glob(&format!("*/{pattern}"), file)
}

/// The walk over every CU (see the module comment).
fn walk(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    patterns: &[&str],
) -> gimli::Result<Vec<BTreeSet<String>>> {
    let mut out = vec![BTreeSet::new(); patterns.len()];
    let mut units = dwarf.units();
    while let Some(header) = units.next()? {
        let unit = dwarf.unit(header)?;
        let Some(lp) = unit.line_program.as_ref() else {
            continue;
        };
        let lh = lp.header();
        // Which patterns each file index matches (index as the CU's
        // DW_AT_decl_file counts: from 1 before DWARF 5).
        let first = if lh.version() <= 4 { 1 } else { 0 };
        let count = lh.file_names().len() as u64;
        let mut files: Vec<Vec<bool>> = Vec::with_capacity(count as usize + 1);
        let mut any = vec![false; patterns.len()];
        for i in 0..first + count {
            let m = match lh.file(i) {
                Some(f) if i >= first => {
                    let name = file_path(dwarf, &unit, lh, f)?;
                    // stap never probes a function declared in a
                    // blocklisted file (`*@kernel/kprobes.c` matches none).
                    let blocked = blocklisted_file(&name);
                    patterns
                        .iter()
                        .map(|p| !blocked && file_matches(p, &name))
                        .collect()
                }
                _ => vec![false; patterns.len()],
            };
            for (a, b) in any.iter_mut().zip(&m) {
                *a |= *b;
            }
            files.push(m);
        }
        if !any.iter().any(|a| *a) {
            continue;
        }
        let mut cur = unit.entries();
        let Some((_, root)) = cur.next_dfs()? else {
            continue;
        };
        if !root.has_children() || cur.next_dfs()?.is_none() {
            continue;
        }
        loop {
            if let Some(e) = cur.current() {
                if e.tag() == gimli::DW_TAG_subprogram {
                    if let Some(name) = out_of_line(dwarf, &unit, e)? {
                        let decl = integrated(&unit, e, gimli::DW_AT_decl_file)?;
                        let sel = match decl {
                            Some(AttributeValue::FileIndex(i) | AttributeValue::Udata(i)) => {
                                files.get(i as usize).map(|m| m.as_slice())
                            }
                            _ => Some(any.as_slice()),
                        };
                        for (k, hit) in sel.unwrap_or(&[]).iter().enumerate() {
                            if *hit {
                                out[k].insert(name.clone());
                            }
                        }
                    }
                }
            }
            if cur.next_sibling()?.is_none() {
                break;
            }
        }
    }
    Ok(out)
}

/// `dwarf_filesrc`'s name of a line table file: absolute as written, else
/// its directory (as written) `/` the name.
pub(crate) fn file_path(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    lh: &gimli::LineProgramHeader<Reader<'_>>,
    f: &gimli::FileEntry<Reader<'_>>,
) -> gimli::Result<String> {
    let name = dwarf.attr_string(unit, f.path_name())?;
    let name = name.to_string_lossy();
    if name.starts_with('/') {
        return Ok(name.into_owned());
    }
    match f.directory(lh) {
        Some(d) => {
            let d = dwarf.attr_string(unit, d)?;
            Ok(format!("{}/{name}", d.to_string_lossy()))
        }
        None => Ok(name.into_owned()),
    }
}

/// The name of a subprogram DIE that is an out-of-line function (has code,
/// is no declaration), following `DW_AT_abstract_origin` /
/// `DW_AT_specification` for the name.
pub(crate) fn out_of_line(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    e: &gimli::DebuggingInformationEntry<Reader<'_>>,
) -> gimli::Result<Option<String>> {
    if e.attr_value(gimli::DW_AT_declaration)?.is_some()
        || (e.attr_value(gimli::DW_AT_low_pc)?.is_none()
            && e.attr_value(gimli::DW_AT_ranges)?.is_none())
    {
        return Ok(None);
    }
    Ok(match integrated(unit, e, gimli::DW_AT_name)? {
        Some(v) => Some(dwarf.attr_string(unit, v)?.to_string_lossy().into_owned()),
        None => None,
    })
}

/// `dwarf_attr_integrate`: `at` of `e`, or of the DIE its
/// `DW_AT_abstract_origin` / `DW_AT_specification` names (same CU), a few
/// levels deep.
pub(crate) fn integrated<'a>(
    unit: &gimli::Unit<Reader<'a>>,
    e: &gimli::DebuggingInformationEntry<Reader<'a>>,
    at: gimli::DwAt,
) -> gimli::Result<Option<AttributeValue<Reader<'a>>>> {
    if let Some(v) = e.attr_value(at)? {
        return Ok(Some(v));
    }
    let mut next = origin(e)?;
    for _ in 0..4 {
        let Some(off) = next else { break };
        let d = unit.entry(off)?;
        if let Some(v) = d.attr_value(at)? {
            return Ok(Some(v));
        }
        next = origin(&d)?;
    }
    Ok(None)
}

fn origin(
    e: &gimli::DebuggingInformationEntry<Reader<'_>>,
) -> gimli::Result<Option<gimli::UnitOffset>> {
    for at in [gimli::DW_AT_abstract_origin, gimli::DW_AT_specification] {
        if let Some(AttributeValue::UnitRef(o)) = e.attr_value(at)? {
            return Ok(Some(o));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::process::Command;

    /// Runs `cmd`, which must succeed (its stderr is the panic message).
    fn succeeds(cmd: &mut Command) {
        let out = cmd.output().expect("cc runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A tree of C files compiled with `cc -g` from relative paths (so a
    /// CU's name is `fs/a.c`, as in a kernel build), except
    /// `kernel/b.c`, compiled by absolute path; `flags` choose the DWARF
    /// version and compression.
    fn fixture(tag: &str, flags: &[&str]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("stapvm-dbg-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in ["fs/sub", "kernel", "include"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        let files = [
            (
                "include/h.h",
                "static __attribute__((noinline)) int h_func(int x) { return x * 3; }\n\
                 static inline int h_inline(int x) { return x + 1; }\n",
            ),
            (
                "fs/a.c",
                "#include \"../include/h.h\"\n\
                 static __attribute__((noinline)) int fs_helper(int x) { return h_inline(x); }\n\
                 int fs_read(int x) { return fs_helper(x) + h_func(x); }\n\
                 extern int fs_decl_only(int);\n",
            ),
            ("fs/sub/c.c", "int sub_fn(int x) { return x - 1; }\n"),
            ("kernel/kprobes.c", "int kp_fn(int x) { return x - 2; }\n"),
            (
                "kernel/b.c",
                "int fs_read(int); int sub_fn(int);\n\
                 int k_fn(int x) { return fs_read(x) + sub_fn(x); }\n\
                 int main(int argc, char **argv) { (void)argv; return k_fn(argc); }\n",
            ),
        ];
        for (f, text) in files {
            std::fs::write(dir.join(f), text).unwrap();
        }
        let abs = dir.join("kernel/b.c");
        // `cc FLAGS -g -O1` in the tree; `succeeds` runs it with the rest.
        let cc = || {
            let mut cmd = Command::new("cc");
            cmd.current_dir(&dir).args(flags).args(["-g", "-O1"]);
            cmd
        };
        succeeds(
            cc().args(["-o", "vmlinux", "fs/a.c", "fs/sub/c.c", "kernel/kprobes.c"])
                .arg(&abs),
        );
        succeeds(cc().args(["-c", "-o", "a.o", "fs/a.c"]));
        dir
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn selects_functions_by_decl_file_as_stap_does() {
        for flags in [
            &["-gdwarf-4"][..],
            &["-gdwarf-5"],
            &["-gdwarf-5", "-gz=zlib"],
        ] {
            selects_with(flags);
        }
    }

    fn selects_with(flags: &[&str]) {
        let dir = fixture("sel", flags);
        let pats = [
            "fs/*.c",
            "fs/a.c",
            "kernel/*.c",
            "*/h.h",
            "include/*",
            "a.c",
            "*",
            "mm/*.c",
            "kernel/kprobes.c",
        ];
        eprintln!("cc {flags:?}");
        let got = functions_in_files(&dir.join("vmlinux"), &pats).unwrap();
        // `*` crosses `/`: fs/sub/c.c is under fs/*.c; h_func is declared
        // in a header, not in fs/a.c, though its code is in that CU.
        assert_eq!(got[0], set(&["fs_helper", "fs_read", "sub_fn"]));
        assert_eq!(got[1], set(&["fs_helper", "fs_read"]));
        // An absolute CU path matches through the implicit `*/`;
        // kernel/kprobes.c is on stap's blocklist.
        assert_eq!(got[2], set(&["k_fn", "main"]));
        assert!(got[8].is_empty(), "{:?}", got[8]);
        assert_eq!(got[3], set(&["h_func"]));
        // `fs/a.c` includes `../include/h.h`: the line table keeps the
        // directory as written, so `include/*` matches only via `*/`.
        assert_eq!(got[4], set(&["h_func"]));
        // A bare name matches a file in any directory (`*/a.c`).
        assert_eq!(got[5], set(&["fs_helper", "fs_read"]));
        let all = &got[6];
        for f in ["fs_helper", "fs_read", "sub_fn", "k_fn", "main", "h_func"] {
            assert!(all.contains(f), "{f} in {all:?}");
        }
        assert!(!all.contains("kp_fn"), "blocklisted file");
        assert!(
            !all.contains("h_inline"),
            "inlined only: no code of its own"
        );
        assert!(!all.contains("fs_decl_only"), "a declaration");
        assert!(got[7].is_empty());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn relocatable_debug_files_are_relocated() {
        // A module's .ko debug file is ET_REL: its DWARF string offsets
        // are in relocations; unrelocated, every name would read as the
        // first string of .debug_str.
        let dir = fixture("rel", &["-gdwarf-5"]);
        let got = functions_in_files(&dir.join("a.o"), &["fs/a.c", "*.h"]).unwrap();
        assert_eq!(got[0], set(&["fs_helper", "fs_read"]));
        assert_eq!(got[1], set(&["h_func"]));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn kallsyms_matches_are_narrowed_and_missing_debuginfo_is_named() {
        let dir = fixture("kal", &[]);
        let rel = "6.1.0-57-amd64";
        std::fs::create_dir_all(dir.join("root/boot")).unwrap();
        std::fs::copy(
            dir.join("vmlinux"),
            dir.join(format!("root/boot/vmlinux-{rel}")),
        )
        .unwrap();
        std::fs::create_dir_all(dir.join(format!("root/lib/modules/{rel}/kernel/fs/ext-4")))
            .unwrap();
        std::fs::copy(
            dir.join("a.o"),
            dir.join(format!("root/lib/modules/{rel}/kernel/fs/ext-4/my-mod.ko")),
        )
        .unwrap();
        let text = "\
ffffffff81000000 T fs_read
ffffffff81000010 t fs_helper
ffffffff81000020 T k_fn
ffffffff81000030 T sub_fn
ffffffff81000040 t h_func
ffffffff81000050 T vfs_read
ffffffffc0000000 t fs_read\t[my_mod]
ffffffffc0000010 t h_func\t[my_mod]
";
        let pats: Vec<String> = [
            "*@fs/*.c",
            "fs_*@fs/*.c",
            "*@*.h",
            "my_mod:*@fs/*.c",
            "k_fn@fs/*.c",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let scan =
            || Kallsyms::scan(text.as_bytes(), &HashSet::new(), &HashSet::new(), &pats).unwrap();
        let mut k = scan();
        assert_eq!(
            k.pattern_matches("*@fs/*.c").len(),
            6,
            "before: the glob alone"
        );
        restrict_to_source_files(&mut k, &pats, &dir.join("root"), rel);
        assert_eq!(
            k.pattern_matches("*@fs/*.c"),
            ["fs_helper", "fs_read", "sub_fn"]
        );
        assert_eq!(k.pattern_matches("fs_*@fs/*.c"), ["fs_helper", "fs_read"]);
        assert_eq!(k.pattern_matches("*@*.h"), ["h_func"]);
        assert_eq!(k.pattern_matches("my_mod:*@fs/*.c"), ["my_mod:fs_read"]);
        assert!(k.pattern_matches("k_fn@fs/*.c").is_empty());
        // Without the debug files: each pattern fails, naming the file
        // and the package.
        let mut k = scan();
        restrict_to_source_files(&mut k, &pats, &dir.join("nowhere"), rel);
        let t = vm_spec::program::ProbeTarget::Symbol {
            name: "*@fs/*.c".into(),
            offset: 0,
        };
        assert_eq!(
            k.resolve(&t, true).unwrap_err().to_string(),
            format!(
                "source-file patterns need the kernel's debuginfo: {}/nowhere/boot/vmlinux-{rel} \
                 not found (install linux-image-{rel}-dbg)",
                dir.display()
            )
        );
        let t = vm_spec::program::ProbeTarget::Symbol {
            name: "my_mod:*@fs/*.c".into(),
            offset: 0,
        };
        assert!(k
            .resolve(&t, true)
            .unwrap_err()
            .to_string()
            .contains("my_mod.ko not found"));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
