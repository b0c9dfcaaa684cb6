//! User-space binaries of `process("PATH")` probes, on the target: the
//! program found as stap finds it (a name without `/` through `$PATH`,
//! then made absolute and canonical, since a uprobe is placed on the
//! file's inode), and the functions of its ELF symbol table with the file
//! offset of each entry (what `uprobe_register` takes: the virtual
//! address mapped back through the `PT_LOAD` segment holding it).
use crate::kallsyms::glob;
use object::{Object, ObjectSegment, ObjectSymbol};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a binary or a function in it cannot be probed.
#[derive(Debug, Error)]
pub enum BinaryError {
    /// No such program (after the `$PATH` search).
    #[error("no program '{0}' (not a file, and not found in $PATH)")]
    NotFound(String),
    /// The file cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Not an ELF file this machine runs.
    #[error("{}: not an ELF executable or shared library: {why}", path.display())]
    NotElf {
        /// The file.
        path: PathBuf,
        /// What the ELF reader said.
        why: String,
    },
    /// No function matches.
    #[error("no function matches '{pattern}' in {} (its symbol tables: {tables})", path.display())]
    NoFunction {
        /// The binary.
        path: PathBuf,
        /// The name or glob.
        pattern: String,
        /// Which symbol tables it has (`.symtab and .dynsym`, `.dynsym only`).
        tables: &'static str,
    },
    /// No USDT marker matches.
    #[error("no USDT marker matches '{pattern}' in {}: {why}", path.display())]
    NoMarker {
        /// The binary.
        path: PathBuf,
        /// The marker's name or glob.
        pattern: String,
        /// Why.
        why: &'static str,
    },
    /// A USDT argument spec stapvm cannot read.
    #[error("{}: marker {provider}:{name}: argument {n} '{spec}': {why}", path.display())]
    BadArg {
        /// The binary.
        path: PathBuf,
        /// The marker's provider.
        provider: String,
        /// The marker's name.
        name: String,
        /// The argument (1-based).
        n: usize,
        /// The spec as written.
        spec: String,
        /// Why.
        why: &'static str,
    },
    /// A program path with wildcards matches no file.
    #[error("no program matches '{0}'")]
    NoMatch(String),
    /// `.library("LIB")` names no library of the program.
    #[error("no library '{library}' of {} (not among its dependencies, nor in the library directories)", program.display())]
    NoLibrary {
        /// The program.
        program: PathBuf,
        /// The library's name or glob.
        library: String,
    },
    /// An address outside every loaded segment with code.
    #[error("address {address:#x} is not in the code of {}", path.display())]
    NotCode {
        /// The binary.
        path: PathBuf,
        /// The address.
        address: u64,
    },
}

/// The program a `process("NAME")` names: NAME itself when it has a `/`,
/// else the first executable file NAME in `$PATH` (stap's rule); then
/// absolute and with symbolic links resolved.
pub fn find_program(name: &str) -> Result<PathBuf, BinaryError> {
    let candidate = if name.contains('/') {
        Some(PathBuf::from(name))
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| is_executable(p))
        })
    };
    candidate
        .filter(|p| p.is_file())
        .and_then(|p| std::fs::canonicalize(p).ok())
        .ok_or_else(|| BinaryError::NotFound(name.to_string()))
}

/// Matches a glob path expands to at most.
const MAX_GLOB_MATCHES: usize = 256;

/// Debian's multiarch directory of x86-64 libraries, below `/lib`,
/// `/usr/lib` and the like.
const MULTIARCH: &str = "x86_64-linux-gnu";

/// The files an absolute path with wildcards (`*`, `?`, `[...]`, as stap
/// takes `process("/lib*/libc.so.*")`) names, sorted, at most
/// [`MAX_GLOB_MATCHES`]; `None` when `pattern` has no wildcard. A pattern
/// under a library directory that matches nothing is tried again with
/// Debian's multiarch directory below that one (`/lib*/libc.so.6` finds
/// `/lib/x86_64-linux-gnu/libc.so.6`), which scripts written for other
/// distributions expect.
pub fn expand_program_glob(pattern: &str) -> Option<Vec<PathBuf>> {
    if !pattern.starts_with('/') || !pattern.contains(['*', '?', '[']) {
        return None;
    }
    let found = glob_files(pattern);
    if !found.is_empty() {
        return Some(found);
    }
    // `/lib*/NAME`, `/usr/lib*/NAME`: the same with the multiarch
    // directory after the `lib*` component.
    let parts: Vec<&str> = pattern.split('/').collect();
    let at = parts
        .iter()
        .enumerate()
        .take(3)
        .find(|(_, c)| c.starts_with("lib"))
        .map(|(i, _)| i);
    if let Some(i) = at.filter(|&i| i + 1 < parts.len()) {
        let mut retry: Vec<&str> = parts[..=i].to_vec();
        retry.push(MULTIARCH);
        retry.extend(&parts[i + 1..]);
        return Some(glob_files(&retry.join("/")));
    }
    Some(found)
}

/// The regular files absolute `pattern` matches, component by component.
fn glob_files(pattern: &str) -> Vec<PathBuf> {
    let mut current = vec![PathBuf::from("/")];
    for comp in pattern.split('/').filter(|c| !c.is_empty()) {
        let mut next = Vec::new();
        for dir in &current {
            if !comp.contains(['*', '?', '[']) {
                let p = dir.join(comp);
                if p.exists() {
                    next.push(p);
                }
                continue;
            }
            next.extend(entries_matching(dir, comp));
        }
        next.truncate(MAX_GLOB_MATCHES);
        current = next;
    }
    // Each file once, canonical (`/lib` may be a link to `/usr/lib`).
    let mut seen = std::collections::HashSet::new();
    current
        .into_iter()
        .filter(|p| p.is_file())
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

/// The entries of directory `dir` whose names match glob `pattern`, sorted
/// (none when `dir` cannot be read).
pub fn entries_matching(dir: &Path, pattern: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| glob(pattern, &e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect();
    names.sort();
    names
}

/// Whether `p` is a regular file someone may execute.
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// One function of a binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserFunction {
    /// Its symbol name.
    pub name: String,
    /// Its virtual address in the ELF file.
    pub address: u64,
    /// The file offset of its first byte.
    pub offset: u64,
}

/// One USDT marker of a binary (`.note.stapsdt`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    /// Its provider.
    pub provider: String,
    /// Its name.
    pub name: String,
    /// The virtual address of its instruction (the note's, moved as the
    /// `.stapsdt.base` section moved, as stap does for prelinked files).
    pub address: u64,
    /// The file offset of that instruction.
    pub offset: u64,
    /// The file offset of its semaphore, 0 when it has none.
    pub semaphore: u64,
    /// Its argument specs as written (`-4@%eax 8@-16(%rbp)`).
    pub args: String,
}

/// A binary's ELF file, mapped.
pub struct Binary {
    path: PathBuf,
    map: memmap2::Mmap,
}

impl Binary {
    /// Maps the ELF file at `path`.
    pub fn open(path: &Path) -> Result<Self, BinaryError> {
        let io = |source| BinaryError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        // SAFETY: the file is only read; a concurrent truncation is the
        // hazard every tool reading binaries accepts.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        let b = Binary {
            path: path.to_path_buf(),
            map,
        };
        b.object()?;
        Ok(b)
    }

    fn object(&self) -> Result<object::File<'_>, BinaryError> {
        object::File::parse(&*self.map).map_err(|e| BinaryError::NotElf {
            path: self.path.clone(),
            why: e.to_string(),
        })
    }

    /// The file offset of virtual address `address`: inside the file bytes
    /// of a loaded executable segment (`PF_X`).
    pub fn offset_of(&self, address: u64) -> Result<u64, BinaryError> {
        self.segment_offset(address, true)
    }

    /// The file offset of virtual address `address` in any loaded segment
    /// (a semaphore is data).
    pub fn data_offset_of(&self, address: u64) -> Result<u64, BinaryError> {
        self.segment_offset(address, false)
    }

    /// The file offset of `address` in the file bytes of a loaded segment,
    /// an executable one when `code`.
    fn segment_offset(&self, address: u64, code: bool) -> Result<u64, BinaryError> {
        let obj = self.object()?;
        obj.segments()
            .filter(|s| {
                !code
                    || matches!(s.flags(), object::SegmentFlags::Elf { p_flags } if p_flags & object::elf::PF_X != 0)
            })
            .find_map(|s| {
                let (foff, fsize) = s.file_range();
                let start = s.address();
                (address >= start && address - start < fsize).then(|| foff + (address - start))
            })
            .ok_or(BinaryError::NotCode {
                path: self.path.clone(),
                address,
            })
    }

    /// The USDT markers (`.note.stapsdt`, owner `stapsdt`, type 3) whose
    /// provider (when given) and name match the globs, in note order.
    pub fn markers(&self, provider: Option<&str>, name: &str) -> Result<Vec<Marker>, BinaryError> {
        use object::ObjectSection;
        let obj = self.object()?;
        let le = obj.is_little_endian();
        let Some(notes) = obj.section_by_name(".note.stapsdt") else {
            return Err(BinaryError::NoMarker {
                path: self.path.clone(),
                pattern: name.to_string(),
                why: "it has no USDT markers (no .note.stapsdt section)",
            });
        };
        let data = notes.data().unwrap_or(&[]);
        let actual_base = obj.section_by_name(".stapsdt.base").map(|s| s.address());
        let word = |b: &[u8], at: usize| -> Option<u64> {
            let w: [u8; 8] = b.get(at..at + 8)?.try_into().ok()?;
            Some(if le {
                u64::from_le_bytes(w)
            } else {
                u64::from_be_bytes(w)
            })
        };
        let half = |b: &[u8], at: usize| -> Option<usize> {
            let w: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
            Some(
                (if le {
                    u32::from_le_bytes(w)
                } else {
                    u32::from_be_bytes(w)
                }) as usize,
            )
        };
        let align4 = |n: usize| n.div_ceil(4) * 4;
        let mut out = Vec::new();
        let mut at = 0usize;
        // Each note: namesz, descsz, type, the name, the descriptor.
        while let (Some(namesz), Some(descsz), Some(ty)) =
            (half(data, at), half(data, at + 4), half(data, at + 8))
        {
            let name_at = at + 12;
            let desc_at = name_at + align4(namesz);
            let next = desc_at + align4(descsz);
            if next > data.len() {
                break;
            }
            let owner = &data[name_at..name_at + namesz];
            if ty == 3 && owner.strip_suffix(b"\0").unwrap_or(owner) == b"stapsdt" {
                let desc = &data[desc_at..desc_at + descsz];
                if let (Some(pc), Some(base), Some(sem)) =
                    (word(desc, 0), word(desc, 8), word(desc, 16))
                {
                    let mut strs = desc.get(24..).unwrap_or(&[]).split(|b| *b == 0);
                    let mut text =
                        || String::from_utf8_lossy(strs.next().unwrap_or(&[])).into_owned();
                    let (prov, mname, args) = (text(), text(), text());
                    // Prelink moved the file: move the addresses with it.
                    let shift = actual_base.map_or(0, |a| a.wrapping_sub(base));
                    let pc = pc.wrapping_add(shift);
                    let sem = if sem == 0 { 0 } else { sem.wrapping_add(shift) };
                    if provider.map_or(true, |p| glob(p, &prov)) && glob(name, &mname) {
                        out.push(Marker {
                            offset: self.offset_of(pc)?,
                            semaphore: if sem == 0 {
                                0
                            } else {
                                self.data_offset_of(sem)?
                            },
                            provider: prov,
                            name: mname,
                            address: pc,
                            args,
                        });
                    }
                }
            }
            at = next;
        }
        if out.is_empty() {
            return Err(BinaryError::NoMarker {
                path: self.path.clone(),
                pattern: name.to_string(),
                why: "no marker of that name",
            });
        }
        Ok(out)
    }

    /// The address of symbol `name` (`.symtab`, then `.dynsym`).
    fn symbol_address(&self, name: &str) -> Option<u64> {
        let obj = self.object().ok()?;
        obj.symbols()
            .chain(obj.dynamic_symbols())
            .find(|s| s.name() == Ok(name) && !s.is_undefined())
            .map(|s| s.address())
    }

    /// The argument specs of marker `m` in the encoding of abi.h
    /// (`STP_UARG_*`): gcc's and clang's `SIZE@OPERAND` with a size of
    /// [-]1/2/4/8 and an operand `%reg`, `$imm`, `disp(%reg)` or
    /// `sym[+-off](%rip)` (made relative to the marker's own address,
    /// which the uprobe's ip is when it fires).
    pub fn usdt_args(&self, m: &Marker) -> Result<Vec<u64>, BinaryError> {
        let mut out = Vec::new();
        for (k, spec) in m.args.split_whitespace().enumerate() {
            let bad = |why| BinaryError::BadArg {
                path: self.path.clone(),
                provider: m.provider.clone(),
                name: m.name.clone(),
                n: k + 1,
                spec: spec.to_string(),
                why,
            };
            if k >= vm_spec::abi::STP_MAX_UARGS as usize {
                return Err(bad("more than 12 arguments"));
            }
            let (size, operand) = spec.split_once('@').ok_or_else(|| bad("no SIZE@"))?;
            let size: i64 = size.parse().map_err(|_| bad("bad size"))?;
            let bytes = size.unsigned_abs();
            if ![1, 2, 4, 8].contains(&bytes) {
                return Err(bad("size not 1, 2, 4 or 8"));
            }
            let mut a = (bytes << vm_spec::abi::STP_UARG_SIZE_SHIFT)
                | if size < 0 {
                    u64::from(vm_spec::abi::STP_UARG_SIGNED)
                } else {
                    0
                };
            let value = |v: i64| -> Result<u64, BinaryError> {
                let v =
                    i32::try_from(v).map_err(|_| bad("value or displacement beyond 32 bits"))?;
                Ok(u64::from(v as u32) << vm_spec::abi::STP_UARG_VALUE_SHIFT)
            };
            if let Some(imm) = operand.strip_prefix('$') {
                a |= u64::from(vm_spec::abi::STP_UARG_CONST)
                    | value(parse_int(imm).ok_or_else(|| bad("bad constant"))?)?;
            } else if let Some(r) = operand.strip_prefix('%') {
                let reg = pt_regs_word(r).ok_or_else(|| bad("unknown register"))?;
                a |= u64::from(vm_spec::abi::STP_UARG_REG)
                    | (u64::from(reg) << vm_spec::abi::STP_UARG_REG_SHIFT);
            } else if let Some((disp, rest)) = operand.split_once('(') {
                let reg_name = rest
                    .strip_suffix(')')
                    .and_then(|r| r.strip_prefix('%'))
                    .filter(|r| !r.contains(','))
                    .ok_or_else(|| bad("unsupported addressing mode"))?;
                let (reg, disp) = if reg_name == "rip" {
                    // sym, sym+N, sym-N: the symbol's address relative to
                    // the marker's.
                    let (sym, off) = match disp.find(['+', '-']) {
                        Some(i) => (
                            &disp[..i],
                            parse_int(&disp[i..]).ok_or_else(|| bad("bad offset"))?,
                        ),
                        None => (disp, 0),
                    };
                    let at = match parse_int(sym) {
                        Some(n) => n,
                        None => self
                            .symbol_address(sym)
                            .ok_or_else(|| bad("unknown symbol"))?
                            as i64,
                    };
                    (16u32, at.wrapping_add(off).wrapping_sub(m.address as i64))
                } else {
                    let d = if disp.is_empty() {
                        0
                    } else {
                        parse_int(disp).ok_or_else(|| bad("bad displacement"))?
                    };
                    (
                        pt_regs_word(reg_name).ok_or_else(|| bad("unknown register"))?,
                        d,
                    )
                };
                a |= u64::from(vm_spec::abi::STP_UARG_MEM)
                    | (u64::from(reg) << vm_spec::abi::STP_UARG_REG_SHIFT)
                    | value(disp)?;
            } else {
                return Err(bad("unsupported operand"));
            }
            out.push(a);
        }
        Ok(out)
    }

    /// The defined functions whose name matches `pattern` (a glob), from
    /// `.symtab` when the file has one, else `.dynsym`; one entry per
    /// address (aliases such as `__libc_malloc`/`malloc`: the name that
    /// matched, the first in table order), sorted by name.
    pub fn functions(&self, pattern: &str) -> Result<Vec<UserFunction>, BinaryError> {
        let obj = self.object()?;
        let has_symtab = obj.symbols().next().is_some();
        let tables = if has_symtab {
            ".symtab and .dynsym"
        } else {
            ".dynsym only"
        };
        let mut out: Vec<UserFunction> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let syms: Box<dyn Iterator<Item = object::Symbol<'_, '_>>> = if has_symtab {
            Box::new(obj.symbols().chain(obj.dynamic_symbols()))
        } else {
            Box::new(obj.dynamic_symbols())
        };
        for s in syms {
            if s.kind() != object::SymbolKind::Text || s.is_undefined() || s.address() == 0 {
                continue;
            }
            let Ok(name) = s.name() else { continue };
            // Versioned dynamic names (`malloc@@GLIBC_2.2.5`) match as
            // their plain name.
            let plain = name.split('@').next().unwrap_or(name);
            if plain.is_empty() || !glob(pattern, plain) || !seen.insert(s.address()) {
                continue;
            }
            let offset = self.offset_of(s.address())?;
            out.push(UserFunction {
                name: plain.to_string(),
                address: s.address(),
                offset,
            });
        }
        if out.is_empty() {
            return Err(BinaryError::NoFunction {
                path: self.path.clone(),
                pattern: pattern.to_string(),
                tables,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name).then(a.address.cmp(&b.address)));
        Ok(out)
    }
}

impl Binary {
    /// The symbol table stap's `-d` gives the module (abi.h: user-space
    /// symbol tables): the defined functions and data objects of
    /// `.symtab` and `.dynsym` (or `.dynsym` alone) whose address lies in
    /// the file bytes of a loaded segment, as (file offset, name) sorted
    /// by offset; of several names at one offset, a global one first
    /// (`malloc` over a local alias), else the first in table order.
    pub fn symbol_table(&self) -> Result<Vec<(u64, String)>, BinaryError> {
        let obj = self.object()?;
        let segs: Vec<(u64, u64, u64)> = obj
            .segments()
            .map(|s| {
                let (foff, fsize) = s.file_range();
                (s.address(), foff, fsize)
            })
            .collect();
        let mut best: std::collections::BTreeMap<u64, (bool, String)> =
            std::collections::BTreeMap::new();
        for s in obj.symbols().chain(obj.dynamic_symbols()) {
            if !matches!(
                s.kind(),
                object::SymbolKind::Text | object::SymbolKind::Data
            ) || s.is_undefined()
                || s.address() == 0
            {
                continue;
            }
            let Ok(name) = s.name() else { continue };
            let plain = name.split('@').next().unwrap_or(name);
            if plain.is_empty() {
                continue;
            }
            let a = s.address();
            let Some(off) = segs
                .iter()
                .find(|(start, _, size)| a >= *start && a - start < *size)
                .map(|(start, foff, _)| foff + (a - start))
            else {
                continue;
            };
            let global = s.is_global();
            match best.get(&off) {
                Some((g, _)) if *g || !global => {}
                _ => {
                    best.insert(off, (global, plain.to_string()));
                }
            }
        }
        Ok(best.into_iter().map(|(off, (_, n))| (off, n)).collect())
    }

    /// The shared libraries the binary needs (`DT_NEEDED`), found as
    /// ld.so finds them: through `DT_RPATH`/`DT_RUNPATH` (`$ORIGIN` the
    /// binary's directory), `$LD_LIBRARY_PATH`, then the default
    /// directories of x86-64 Debian; canonical paths, the ones found only.
    pub fn needed(&self) -> Vec<PathBuf> {
        use object::read::elf::{Dyn, FileHeader};
        let data = &*self.map;
        let Ok(hdr) = object::elf::FileHeader64::<object::Endianness>::parse(data) else {
            return Vec::new();
        };
        let Ok(endian) = hdr.endian() else {
            return Vec::new();
        };
        let Ok(sections) = hdr.sections(endian, data) else {
            return Vec::new();
        };
        let Ok(Some((dyns, link))) = sections.dynamic(endian, data) else {
            return Vec::new();
        };
        let Ok(strs) = sections.strings(endian, data, link) else {
            return Vec::new();
        };
        let origin = self
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let mut names = Vec::new();
        let mut dirs: Vec<PathBuf> = Vec::new();
        for d in dyns {
            let tag = d.d_tag(endian) as u32;
            let Ok(v) = d.string(endian, strs) else {
                continue;
            };
            let v = String::from_utf8_lossy(v).into_owned();
            match tag {
                object::elf::DT_NEEDED => names.push(v),
                object::elf::DT_RPATH | object::elf::DT_RUNPATH => dirs.extend(
                    v.split(':')
                        .map(|p| PathBuf::from(p.replace("$ORIGIN", &origin.to_string_lossy()))),
                ),
                _ => {}
            }
        }
        if let Some(lp) = std::env::var_os("LD_LIBRARY_PATH") {
            dirs.extend(std::env::split_paths(&lp));
        }
        dirs.extend(
            [
                "/lib/x86_64-linux-gnu",
                "/usr/lib/x86_64-linux-gnu",
                "/lib64",
                "/usr/lib64",
                "/lib",
                "/usr/lib",
            ]
            .map(PathBuf::from),
        );
        names
            .iter()
            .filter_map(|n| {
                if n.contains('/') {
                    return std::fs::canonicalize(n).ok();
                }
                dirs.iter()
                    .map(|d| d.join(n))
                    .find(|p| p.is_file())
                    .and_then(|p| std::fs::canonicalize(p).ok())
            })
            .collect()
    }
}

/// A decimal or `0x` hexadecimal integer with an optional sign.
fn parse_int(s: &str) -> Option<i64> {
    let (neg, t) = match s.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let v = match t.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None => t.parse::<i64>().ok()?,
    };
    Some(if neg { -v } else { v })
}

/// The `struct pt_regs` word (REGISTER's order) of an x86-64 register
/// named as in AT&T syntax, any width (`rax`, `eax`, `ax`, `al`, `r8d`).
fn pt_regs_word(name: &str) -> Option<u32> {
    const FULL: [(&str, u32); 16] = [
        ("r15", 0),
        ("r14", 1),
        ("r13", 2),
        ("r12", 3),
        ("rbp", 4),
        ("rbx", 5),
        ("r11", 6),
        ("r10", 7),
        ("r9", 8),
        ("r8", 9),
        ("rax", 10),
        ("rcx", 11),
        ("rdx", 12),
        ("rsi", 13),
        ("rdi", 14),
        ("rsp", 19),
    ];
    if let Some(w) = FULL.iter().find(|(n, _)| *n == name) {
        return Some(w.1);
    }
    // r8d, r8w, r8b (and r8l).
    if let Some(base) = name
        .strip_suffix(['d', 'w', 'b', 'l'])
        .filter(|b| b.starts_with('r') && b[1..].parse::<u8>().is_ok())
    {
        return FULL.iter().find(|(n, _)| *n == base).map(|w| w.1);
    }
    let legacy = match name {
        "eax" | "ax" | "al" => "rax",
        "ebx" | "bx" | "bl" => "rbx",
        "ecx" | "cx" | "cl" => "rcx",
        "edx" | "dx" | "dl" => "rdx",
        "esi" | "si" | "sil" => "rsi",
        "edi" | "di" | "dil" => "rdi",
        "ebp" | "bp" | "bpl" => "rbp",
        "esp" | "sp" | "spl" => "rsp",
        _ => return None,
    };
    FULL.iter().find(|(n, _)| *n == legacy).map(|w| w.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// `source` built with `cc -O2` as `NAME` in a fresh directory
    /// `stapvm-TAG-PID`; the directory.
    fn build_c(tag: &str, name: &str, source: &str) -> PathBuf {
        let exe = crate::testc::build_c(tag, name, source, &["-O2"]);
        exe.parent().map(PathBuf::from).unwrap_or(exe)
    }

    #[test]
    fn a_glob_path_expands_to_files_and_tries_the_multiarch_directory() {
        // A pattern without wildcards is not a glob.
        assert!(expand_program_glob("/bin/sh").is_none());
        assert!(expand_program_glob("sh*").is_none());
        let sh = find_program("sh").unwrap();
        let dir = sh.parent().unwrap().to_string_lossy().into_owned();
        let name = sh.file_name().unwrap().to_string_lossy().into_owned();
        let got = expand_program_glob(&format!("{dir}/{}*", &name[..1])).unwrap();
        assert!(got.contains(&sh), "{got:?}");
        assert!(expand_program_glob("/nonexistent*/x").unwrap().is_empty());
        // Debian's libc is below the multiarch directory only.
        let libc = std::path::Path::new("/lib/x86_64-linux-gnu/libc.so.6");
        if libc.exists() {
            let got = expand_program_glob("/lib*/libc.so.6").unwrap();
            assert_eq!(got, vec![std::fs::canonicalize(libc).unwrap()]);
        }
    }

    #[test]
    fn programs_are_found_through_path_and_canonicalised() {
        let sh = find_program("sh").unwrap();
        assert!(sh.is_absolute() && sh.is_file(), "{}", sh.display());
        assert!(!sh.to_string_lossy().contains("/../"));
        assert!(matches!(
            find_program("stapvm-no-such-program"),
            Err(BinaryError::NotFound(_))
        ));
        assert!(find_program("/nonexistent/x").is_err());
    }

    #[test]
    fn usdt_markers_have_their_offsets_and_semaphores() {
        if !Path::new("/usr/include/x86_64-linux-gnu/sys/sdt.h").exists() {
            eprintln!("skipped: no sys/sdt.h (systemtap-sdt-dev; tests/setup.sh installs it)");
            return;
        }
        let dir = build_c(
            "usdt",
            "m",
            "#define _SDT_HAS_SEMAPHORES 1\n#include <sys/sdt.h>\n\
             volatile unsigned short app_go_semaphore __attribute__((section(\".probes\")));\n\
             int main(int c, char **v) { (void)v; STAP_PROBE1(app, go, c); return 0; }\n",
        );
        let b = Binary::open(&dir.join("m")).unwrap();
        let m = b.markers(Some("app"), "g*").unwrap();
        assert_eq!(m.len(), 1);
        let m = &m[0];
        assert_eq!((m.provider.as_str(), m.name.as_str()), ("app", "go"));
        // STAP_PROBE's instruction is a nop; the argument spec as gcc
        // wrote it (4 bytes, signed, somewhere).
        let bytes = std::fs::read(dir.join("m")).unwrap();
        assert_eq!(bytes[m.offset as usize], 0x90, "{m:?}");
        assert!(m.args.starts_with("-4@"), "{m:?}");
        // The semaphore's offset is the file offset of its symbol.
        let nm = Command::new("nm").arg(dir.join("m")).output().unwrap();
        let sem = String::from_utf8_lossy(&nm.stdout)
            .lines()
            .find(|l| l.ends_with(" app_go_semaphore"))
            .and_then(|l| u64::from_str_radix(l.split_whitespace().next()?, 16).ok())
            .unwrap();
        assert_eq!(m.semaphore, b.data_offset_of(sem).unwrap());
        assert!(m.semaphore != 0);
        let e = b.markers(None, "nosuch").unwrap_err().to_string();
        assert!(e.contains("no USDT marker matches 'nosuch'"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn functions_have_the_file_offsets_of_their_entries() {
        let dir = build_c(
            "ubin",
            "u",
            "__attribute__((noinline)) int ufn_one(int x) { return x + 1; }\n\
             __attribute__((noinline)) int ufn_two(int x) { return x * 2; }\n\
             int main(int c, char **v) { (void)v; return ufn_one(c) + ufn_two(c); }\n",
        );
        let b = Binary::open(&dir.join("u")).unwrap();
        let f = b.functions("ufn_*").unwrap();
        let names: Vec<&str> = f.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["ufn_one", "ufn_two"]);
        // The bytes at each file offset are the function's code: the same
        // as objdump shows at its address.
        let bytes = std::fs::read(dir.join("u")).unwrap();
        for x in &f {
            let dump = Command::new("objdump")
                .args(["-d", "--start-address"])
                .arg(format!("{:#x}", x.address))
                .arg("--stop-address")
                .arg(format!("{:#x}", x.address + 1))
                .arg(dir.join("u"))
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&dump.stdout);
            let first = text
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{:x}:", x.address)))
                .and_then(|l| l.split('\t').nth(1))
                .and_then(|h| h.split_whitespace().next())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            assert_eq!(first, Some(bytes[x.offset as usize]), "{x:?}: {text}");
        }
        let e = b.functions("nosuch*").unwrap_err().to_string();
        assert!(e.starts_with("no function matches 'nosuch*' in "), "{e}");
        assert!(b.offset_of(0x10).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
