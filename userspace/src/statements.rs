//! Load-time addresses of statement probes by source line
//! (`kernel.statement("do_nanosleep@kernel/time/hrtimer.c:2040")`,
//! `module("m").statement("f@*:*")`, `.nearest`): the DWARF line table of
//! the kernel's (or the module's) debuginfo on the target says where each
//! line's code starts, and each selected line becomes a kprobe at the
//! function's symbol plus the offset of that line's first instruction
//! (`ProbeTarget::Symbol`), so KASLR and module load addresses do not
//! matter.
//!
//! The rules, after stap's (dwflpp.cxx `iterate_over_srcfile_lines`,
//! tapsets.cxx `query_srcfile_line`), kept simple where stap's are
//! heuristic:
//! - the functions are the out-of-line subprograms whose name matches FUNC
//!   (a glob) and, when a FILE other than `*` is given, whose declaration
//!   file matches FILE (stap's FILEPAT rule, `debuginfo::file_matches`);
//! - a function's lines are the line-table rows that are statements, lie
//!   in the function's range holding its entry (not in split-off `.cold`
//!   parts, which are other symbols), and belong to the function's own
//!   file (or, with a FILE pattern, to a file it matches): an inlined
//!   helper's header lines are not the function's;
//! - a line's address is the lowest address of its rows in the function;
//!   of lines that start at the same address, `:*` and `:A-B` keep only
//!   the last (a brace shares its address with the first statement);
//! - `:N` and `+N` (N lines after the declaration line) name one line,
//!   which must have code, or with `.nearest` move to the nearest line
//!   that has (the later on a tie); `:A-B` and `:*` take every line with
//!   code in the range; no line at all is the function's entry.
use crate::debuginfo::{file_matches, file_path, integrated, out_of_line, Reader};
use crate::kallsyms::glob;
use std::collections::BTreeMap;
use std::path::Path;
use thiserror::Error;
use vm_spec::program::{ProbeTarget, Program, StatementLines, StatementSpec};

/// Why a statement probe cannot be placed.
#[derive(Debug, Error)]
pub enum Error {
    /// The spec does not parse (the compiler checks it: a hand-made file).
    #[error("probe point '{display}' cannot be resolved: {why}")]
    Unresolved {
        /// The probe point as written.
        display: String,
        /// What is wrong or missing.
        why: String,
    },
    /// The handler reads target variables, which need DWARF locations.
    #[error("probe point '{display}': target variables are not available in a statement probe yet (stapvm reads no DWARF location lists); use register() or the *_arg() functions")]
    TargetVars {
        /// The probe point as written.
        display: String,
    },
    /// More probes than a session may have.
    #[error("probe point '{display}' expands to {count} statements: more than the {max} probes a session may have (narrow the pattern)")]
    TooMany {
        /// The probe point as written.
        display: String,
        /// Probes it would make.
        count: usize,
        /// The limit.
        max: u32,
    },
}

/// One placed line: a kprobe at `function` + `offset`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// The function's symbol (`module:symbol` for a module's): the
    /// function's name or a compiler clone of it (`f.isra.0`).
    pub function: String,
    /// The function's name in the source.
    pub name: String,
    /// Bytes from the function's entry to the line's first instruction.
    pub offset: u32,
    /// The line's source file, as stap prints it (no build directory).
    pub file: String,
    /// The line.
    pub line: u32,
}

/// One out-of-line function of a CU that a spec selects.
struct Func {
    name: String,
    spec: usize,
    entry: u64,
    end: u64,
    decl_line: u32,
    decl_file: String,
}

/// For each of `specs` (with its `.nearest`), the lines it selects in the
/// DWARF file at `path`, or why it selects none. `module` prefixes the
/// function names (`m:f`).
pub fn place_in(
    path: &Path,
    module: Option<&str>,
    specs: &[(StatementSpec<'_>, bool)],
) -> Result<Vec<Result<Vec<Placed>, String>>, crate::debuginfo::DebuginfoError> {
    let lines = crate::debuginfo::with_dwarf(path, |dwarf, obj| {
        let mut lines = lines_of(dwarf, specs)?;
        name_by_symbols(obj, &mut lines);
        Ok(lines)
    })?;
    Ok(lines
        .into_iter()
        .zip(specs)
        .map(|(funcs, (spec, nearest))| select(funcs, spec, *nearest, module))
        .collect())
}

/// Each function's ELF symbol: the function symbol at its entry, which
/// is what kallsyms lists (a compiler clone, `f.isra.0`, whose DWARF name
/// is `f`); the DWARF name where the file has none.
fn name_by_symbols(obj: &object::File<'_>, lines: &mut [Vec<FuncLines>]) {
    use object::{Object, ObjectSymbol};
    let mut wanted: std::collections::HashMap<u64, Vec<String>> = std::collections::HashMap::new();
    for f in lines.iter().flatten() {
        wanted.entry(f.entry).or_default();
    }
    if wanted.is_empty() {
        return;
    }
    for sym in obj.symbols() {
        if sym.kind() != object::SymbolKind::Text {
            continue;
        }
        let a = crate::debuginfo::symbol_address(obj, &sym);
        if let (Some(list), Ok(name)) = (wanted.get_mut(&a), sym.name()) {
            list.push(name.to_string());
        }
    }
    for f in lines.iter_mut().flatten() {
        let Some(list) = wanted.get(&f.entry) else {
            continue;
        };
        // The DWARF name itself, else its clone (`name.` prefix).
        let clone = format!("{}.", f.name);
        if let Some(s) = list
            .iter()
            .find(|s| **s == f.name)
            .or_else(|| list.iter().find(|s| s.starts_with(&clone)))
        {
            f.symbol = s.clone();
        }
    }
}

/// A selected function's lines with code: line → (lowest address offset,
/// file), plus its declaration line and file.
struct FuncLines {
    name: String,
    /// The ELF symbol at `entry` (`name`, or a clone `name.isra.0`).
    symbol: String,
    entry: u64,
    decl_line: u32,
    decl_file: String,
    lines: BTreeMap<u32, (u32, String)>,
}

/// Every function each spec selects, with its lines.
fn lines_of(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    specs: &[(StatementSpec<'_>, bool)],
) -> gimli::Result<Vec<Vec<FuncLines>>> {
    let mut out: Vec<Vec<FuncLines>> = specs.iter().map(|_| Vec::new()).collect();
    let mut units = dwarf.units();
    while let Some(header) = units.next()? {
        let unit = dwarf.unit(header)?;
        let Some(lp) = unit.line_program.clone() else {
            continue;
        };
        let comp_dir = match &unit.comp_dir {
            Some(d) => d.to_string_lossy().into_owned(),
            None => String::new(),
        };
        // The CU's file names, by line-table index.
        let lh = lp.header();
        let first = if lh.version() <= 4 { 1 } else { 0 };
        let count = lh.file_names().len() as u64;
        let mut names: Vec<String> = Vec::with_capacity(count as usize + 1);
        for i in 0..first + count {
            names.push(match lh.file(i) {
                Some(f) if i >= first => shown(&file_path(dwarf, &unit, lh, f)?, &comp_dir),
                _ => String::new(),
            });
        }
        // A spec with a FILE other than `*` needs a matching file here.
        let live: Vec<bool> = specs
            .iter()
            .map(|(s, _)| match s.file {
                Some(f) if f != "*" => names.iter().any(|n| file_matches(f, n)),
                _ => true,
            })
            .collect();
        if !live.iter().any(|l| *l) {
            continue;
        }
        let funcs = functions(dwarf, &unit, specs, &live, &names)?;
        if funcs.is_empty() {
            continue;
        }
        // The rows, once per CU: (address, file index, line).
        let mut rows_out: Vec<(u64, u64, u32)> = Vec::new();
        let mut rows = lp.rows();
        while let Some((_, row)) = rows.next_row()? {
            if row.end_sequence() || !row.is_stmt() {
                continue;
            }
            let Some(line) = row.line() else { continue };
            let Ok(line) = u32::try_from(line.get()) else {
                continue;
            };
            rows_out.push((row.address(), row.file_index(), line));
        }
        for f in funcs {
            let spec = &specs[f.spec].0;
            let pattern = spec.file.filter(|p| *p != "*");
            let mut lines: BTreeMap<u32, (u32, String)> = BTreeMap::new();
            for &(addr, fi, line) in &rows_out {
                if addr < f.entry || addr >= f.end {
                    continue;
                }
                let Some(name) = names.get(fi as usize) else {
                    continue;
                };
                let ours = match pattern {
                    Some(p) => file_matches(p, name),
                    None => *name == f.decl_file,
                };
                if !ours {
                    continue;
                }
                let Ok(off) = u32::try_from(addr - f.entry) else {
                    continue;
                };
                let e = lines.entry(line).or_insert((off, name.clone()));
                if off < e.0 {
                    *e = (off, name.clone());
                }
            }
            out[f.spec].push(FuncLines {
                symbol: f.name.clone(),
                entry: f.entry,
                name: f.name,
                decl_line: f.decl_line,
                decl_file: f.decl_file,
                lines,
            });
        }
    }
    Ok(out)
}

/// The out-of-line functions of `unit` that the live specs select.
fn functions(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    specs: &[(StatementSpec<'_>, bool)],
    live: &[bool],
    names: &[String],
) -> gimli::Result<Vec<Func>> {
    let mut out = Vec::new();
    let mut cur = unit.entries();
    let Some((_, root)) = cur.next_dfs()? else {
        return Ok(out);
    };
    if !root.has_children() || cur.next_dfs()?.is_none() {
        return Ok(out);
    }
    loop {
        if let Some(e) = cur.current() {
            if e.tag() == gimli::DW_TAG_subprogram {
                if let Some(name) = out_of_line(dwarf, unit, e)? {
                    let wanted: Vec<usize> = specs
                        .iter()
                        .enumerate()
                        .filter(|(k, (s, _))| live[*k] && glob(s.function, &name))
                        .map(|(k, _)| k)
                        .collect();
                    if !wanted.is_empty() {
                        let decl_file = match integrated(unit, e, gimli::DW_AT_decl_file)? {
                            Some(
                                gimli::AttributeValue::FileIndex(i)
                                | gimli::AttributeValue::Udata(i),
                            ) => names.get(i as usize).cloned().unwrap_or_default(),
                            _ => String::new(),
                        };
                        let decl_line = match integrated(unit, e, gimli::DW_AT_decl_line)? {
                            Some(v) => v.udata_value().unwrap_or(0) as u32,
                            None => 0,
                        };
                        if let Some((entry, end)) = entry_range(dwarf, unit, e)? {
                            for k in wanted {
                                let by_file = match specs[k].0.file {
                                    Some(f) if f != "*" => file_matches(f, &decl_file),
                                    _ => true,
                                };
                                if by_file {
                                    out.push(Func {
                                        name: name.clone(),
                                        spec: k,
                                        entry,
                                        end,
                                        decl_line,
                                        decl_file: decl_file.clone(),
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        if cur.next_sibling()?.is_none() {
            break;
        }
    }
    Ok(out)
}

/// The function's entry and the end of the address range holding it
/// (`DW_AT_low_pc`, else the first range's start).
fn entry_range(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    e: &gimli::DebuggingInformationEntry<Reader<'_>>,
) -> gimli::Result<Option<(u64, u64)>> {
    let low = match e.attr_value(gimli::DW_AT_low_pc)? {
        Some(v) => dwarf.attr_address(unit, v)?,
        None => None,
    };
    let mut ranges = dwarf.die_ranges(unit, e)?;
    let mut first = None;
    while let Some(r) = ranges.next()? {
        if r.begin >= r.end {
            continue;
        }
        if low.is_some_and(|l| r.begin <= l && l < r.end) {
            return Ok(low.map(|l| (l, r.end)));
        }
        first.get_or_insert((r.begin, r.end));
    }
    Ok(if low.is_none() { first } else { None })
}

/// A line-table file name as stap shows it: without the CU's build
/// directory and a leading `./`.
fn shown(name: &str, comp_dir: &str) -> String {
    let mut s = name;
    if !comp_dir.is_empty() {
        if let Some(rest) = s.strip_prefix(comp_dir).and_then(|r| r.strip_prefix('/')) {
            s = rest;
        }
    }
    while let Some(rest) = s.strip_prefix("./") {
        s = rest;
    }
    s.to_string()
}

/// The lines one spec selects among its functions' lines.
fn select(
    funcs: Vec<FuncLines>,
    spec: &StatementSpec<'_>,
    nearest: bool,
    module: Option<&str>,
) -> Result<Vec<Placed>, String> {
    if funcs.is_empty() {
        return Err(format!(
            "no function matches '{}{}' in the debuginfo",
            spec.function,
            spec.file.map(|f| format!("@{f}")).unwrap_or_default()
        ));
    }
    let qualified = |f: &str| match module {
        Some(m) => format!("{m}:{f}"),
        None => f.to_string(),
    };
    let mut out = Vec::new();
    let mut misses = Vec::new();
    for f in funcs {
        let place = |line: u32| {
            f.lines.get(&line).map(|(off, file)| Placed {
                function: qualified(&f.symbol),
                name: f.name.clone(),
                offset: *off,
                file: file.clone(),
                line,
            })
        };
        let one = |want: u32, misses: &mut Vec<String>| -> Option<Placed> {
            if let Some(p) = place(want) {
                return Some(p);
            }
            let below = f.lines.range(..want).next_back().map(|(l, _)| *l);
            let above = f.lines.range(want..).next().map(|(l, _)| *l);
            if nearest {
                let pick = match (below, above) {
                    (Some(b), Some(a)) if want - b < a - want => Some(b),
                    (_, Some(a)) => Some(a),
                    (b, None) => b,
                };
                return pick.and_then(place);
            }
            let tries: Vec<String> = [below, above]
                .iter()
                .flatten()
                .map(|l| format!(":{l}"))
                .collect();
            misses.push(format!(
                "no code at {}:{want} in function {}{}",
                f.decl_file,
                f.name,
                if tries.is_empty() {
                    String::new()
                } else {
                    format!(" (try {}, or .nearest)", tries.join(" or "))
                }
            ));
            None
        };
        match spec.lines {
            StatementLines::Entry => out.push(Placed {
                function: qualified(&f.symbol),
                name: f.name.clone(),
                offset: 0,
                file: f.decl_file.clone(),
                line: f.decl_line,
            }),
            StatementLines::One(n) => out.extend(one(n, &mut misses)),
            StatementLines::Relative(n) => {
                out.extend(one(f.decl_line.saturating_add(n), &mut misses))
            }
            // Lines that start at the same address (a brace and the first
            // statement) would fire together: the last one stands for
            // them.
            StatementLines::Range(a, b) => out.extend(
                f.lines
                    .range(a..=b)
                    .filter(|(l, (off, _))| !f.lines.range(**l + 1..=b).any(|(_, (o, _))| o == off))
                    .filter_map(|(l, _)| place(*l)),
            ),
            StatementLines::All => out.extend(
                f.lines
                    .iter()
                    .filter(|(l, (off, _))| !f.lines.range(**l + 1..).any(|(_, (o, _))| o == off))
                    .filter_map(|(l, _)| place(*l)),
            ),
        }
    }
    if out.is_empty() {
        return Err(misses
            .into_iter()
            .next()
            .unwrap_or_else(|| "no line with code in the range".to_string()));
    }
    Ok(out)
}

/// The probe point one placed line stands for, as stap's pp() names it:
/// `kernel.statement("f@file:N")` or `module("m").statement("f@file:N")`.
pub fn display_of(p: &Placed) -> String {
    match p.function.split_once(':') {
        Some((m, _)) => format!(
            "module(\"{m}\").statement(\"{}@{}:{}\")",
            p.name, p.file, p.line
        ),
        None => format!("kernel.statement(\"{}@{}:{}\")", p.name, p.file, p.line),
    }
}

/// A program whose statement probes were placed, and one warning per
/// optional statement probe dropped.
pub type Placement = (Program, Vec<String>);

/// The program with every statement probe replaced by one kprobe per
/// line it selects, the debuginfo found below `root` for `release`;
/// `None` when the program has none.
pub fn resolve_statements(
    prog: &Program,
    root: &Path,
    release: &str,
) -> Result<Option<Placement>, Error> {
    if !prog
        .probes
        .iter()
        .any(|p| matches!(p.target, ProbeTarget::Statement { .. }))
    {
        return Ok(None);
    }
    // Parse every spec; group by module (one DWARF file each).
    let mut by_file: BTreeMap<Option<&str>, Vec<usize>> = BTreeMap::new();
    let mut parsed: Vec<Option<(StatementSpec<'_>, bool)>> = Vec::with_capacity(prog.probes.len());
    for (i, p) in prog.probes.iter().enumerate() {
        let ProbeTarget::Statement { spec, nearest } = &p.target else {
            parsed.push(None);
            continue;
        };
        if crate::absolute::reads_probe_vars(prog, p.handler) {
            return Err(Error::TargetVars {
                display: p.display.clone(),
            });
        }
        let s = StatementSpec::parse(spec).map_err(|why| Error::Unresolved {
            display: p.display.clone(),
            why,
        })?;
        by_file.entry(s.module).or_default().push(i);
        parsed.push(Some((s, *nearest)));
    }
    let mut placed: Vec<Option<Result<Vec<Placed>, String>>> = vec![None; prog.probes.len()];
    for (module, list) in &by_file {
        let specs: Vec<(StatementSpec<'_>, bool)> =
            list.iter().filter_map(|&i| parsed[i].clone()).collect();
        let got = crate::debuginfo::locate(root, release, *module)
            .and_then(|path| place_in(&path, *module, &specs));
        match got {
            Ok(results) => {
                for (&i, r) in list.iter().zip(results) {
                    placed[i] = Some(r);
                }
            }
            Err(e) => {
                let why = format!("statement probes need the debuginfo: {e}");
                for &i in list {
                    placed[i] = Some(Err(why.clone()));
                }
            }
        }
    }
    let max = vm_spec::abi::STP_MAX_PROBES as usize;
    let mut out = prog.clone();
    out.probes.clear();
    let mut warnings = Vec::new();
    for (p, r) in prog.probes.iter().zip(placed) {
        let Some(r) = r else {
            out.probes.push(p.clone());
            continue;
        };
        let optional = u32::from(p.flags) & vm_spec::abi::STP_PROBE_F_OPTIONAL != 0;
        match r {
            Ok(lines) => {
                if out.probes.len() + lines.len() > max {
                    return Err(Error::TooMany {
                        display: p.display.clone(),
                        count: out.probes.len() + lines.len(),
                        max: vm_spec::abi::STP_MAX_PROBES,
                    });
                }
                for l in lines {
                    out.probes.push(vm_spec::program::Probe {
                        target: ProbeTarget::Symbol {
                            name: l.function.clone(),
                            offset: l.offset,
                        },
                        display: display_of(&l),
                        ..p.clone()
                    });
                }
            }
            Err(why) if optional => warnings.push(format!(
                "optional probe point '{}' skipped: {why}",
                p.display
            )),
            Err(why) => {
                return Err(Error::Unresolved {
                    display: p.display.clone(),
                    why,
                })
            }
        }
    }
    Ok(Some((out, warnings)))
}

/// [`resolve_statements`] with the running kernel's release and the debug
/// root (`$STAPVM_DEBUGINFO` or /usr/lib/debug).
pub fn resolve_running(prog: &Program) -> Result<Option<Placement>, Error> {
    resolve_statements(
        prog,
        &crate::debuginfo::debug_root(),
        &crate::debuginfo::kernel_release(),
    )
}

/// The probe points (`display_of`) of the lines one statement pattern
/// (`[module:]PAT`, as `ProbeTarget::Statement::spec`) selects, for
/// `stapvm list`; the error says why there are none.
pub fn list(spec: &str, nearest: bool, root: &Path, release: &str) -> Result<Vec<String>, String> {
    let s = StatementSpec::parse(spec)?;
    let path = crate::debuginfo::locate(root, release, s.module)
        .map_err(|e| format!("statement probes need the debuginfo: {e}"))?;
    let module = s.module;
    let mut got = place_in(&path, module, &[(s, nearest)]).map_err(|e| e.to_string())?;
    let lines = got.pop().unwrap_or_else(|| Err("no match".into()))?;
    Ok(lines.iter().map(display_of).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    const SRC: &str = "\
volatile int sink;

static __attribute__((noinline)) int walk(int n)
{
\tint i, sum = 0;

\tfor (i = 0; i < n; i++) {
\t\tsink = i;
\t\tsum += i;
\t}
\tif (sum > 100)
\t\tsink = -1;
\treturn sum;
}

int other(int n)
{
\tsink = n;
\treturn n + 1;
}

int main(int argc, char **argv)
{
\t(void)argv;
\twalk(argc);
\treturn other(argc);
}
";

    /// Runs `cmd`, which must succeed; its stdout.
    fn run(cmd: &mut Command) -> String {
        let out = cmd.output().expect("the tool runs");
        assert!(
            out.status.success(),
            "{:?}: {}",
            cmd,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// SRC built as `w.c` with `cc -g -O2 -ffunction-sections` into an
    /// executable and a relocatable object (a module's form).
    fn fixture(tag: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("stapvm-stmt-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("w.c"), SRC).unwrap();
        let cc = |extra: &[&str]| {
            let mut c = Command::new("cc");
            c.current_dir(&dir)
                .args(["-g", "-O2", "-ffunction-sections", "w.c"])
                .args(extra);
            run(&mut c);
        };
        cc(&["-o", "w"]);
        cc(&["-c", "-o", "w.o"]);
        dir
    }

    fn spec(s: &str) -> StatementSpec<'_> {
        StatementSpec::parse(s).unwrap()
    }

    /// The address of each text symbol of `exe` (nm).
    fn symbols(exe: &Path) -> std::collections::HashMap<String, u64> {
        run(Command::new("nm").arg(exe))
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() == 3 && matches!(f[1], "t" | "T"))
                    .then(|| (f[2].to_string(), u64::from_str_radix(f[0], 16).unwrap()))
            })
            .collect()
    }

    #[test]
    fn every_line_is_placed_at_a_row_of_its_line() {
        let dir = fixture("exe");
        let exe = dir.join("w");
        let got = place_in(&exe, None, &[(spec("walk@*:*"), false)]).unwrap();
        let lines = got[0].as_ref().unwrap();
        let syms = symbols(&exe);
        // (line, address) of every statement row, as objdump decodes them.
        let rows: std::collections::HashSet<(u32, u64)> =
            run(Command::new("objdump").arg("--dwarf=decodedline").arg(&exe))
                .lines()
                .filter_map(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    if f.len() < 3 || f[0] != "w.c" || f.last() != Some(&"x") {
                        return None;
                    }
                    Some((
                        f[1].parse::<u32>().ok()?,
                        u64::from_str_radix(f[2].trim_start_matches("0x"), 16).ok()?,
                    ))
                })
                .collect();
        assert!(!rows.is_empty());
        // The lines of walk's body with code: the loop, its body, the cap
        // and the return are among them, all in w.c and in walk.
        let numbers: Vec<u32> = lines.iter().map(|p| p.line).collect();
        for want in [8, 9, 12, 13] {
            assert!(numbers.contains(&want), "line {want} in {numbers:?}");
        }
        assert!(numbers.iter().all(|l| (3..=14).contains(l)), "{numbers:?}");
        for p in lines {
            assert_eq!(p.name, "walk");
            assert!(
                p.function == "walk" || p.function.starts_with("walk."),
                "{}",
                p.function
            );
            assert_eq!(p.file, "w.c");
            // binutils' decoding of the line table has a statement row of
            // this line at the symbol's address plus the offset.
            let addr = syms[&p.function] + u64::from(p.offset);
            assert!(
                rows.contains(&(p.line, addr)),
                "{}+{:#x}: no row of line {} at {addr:#x}",
                p.function,
                p.offset,
                p.line
            );
        }
        // The displays stap's pp() would print.
        assert_eq!(
            display_of(&lines[0]),
            format!("kernel.statement(\"walk@w.c:{}\")", lines[0].line)
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_relocatable_file_keeps_its_sections_apart() {
        // With -ffunction-sections every function of the .o starts at
        // offset 0 of a section of its own: the lines and offsets must
        // still be walk's alone, the same as in the linked file.
        let dir = fixture("rel");
        let want = place_in(&dir.join("w"), None, &[(spec("walk@*:*"), false)]).unwrap();
        let got = place_in(&dir.join("w.o"), Some("m"), &[(spec("walk@w.c:*"), false)]).unwrap();
        let strip =
            |v: &[Placed]| -> Vec<(u32, u32)> { v.iter().map(|p| (p.line, p.offset)).collect() };
        let (want, got) = (want[0].as_ref().unwrap(), got[0].as_ref().unwrap());
        assert_eq!(strip(got), strip(want));
        assert!(got.iter().all(|p| p.function.starts_with("m:walk")));
        assert!(display_of(&got[0]).starts_with("module(\"m\").statement(\"walk@w.c:"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn one_line_needs_code_or_nearest() {
        let dir = fixture("one");
        let exe = dir.join("w");
        // Line 10 is the loop's closing brace: no code.
        let got = place_in(
            &exe,
            None,
            &[
                (spec("walk@w.c:10"), false),
                (spec("walk@w.c:10"), true),
                (spec("walk@w.c:12"), false),
                (spec("walk@*+9"), false),
                (spec("walk"), false),
                (spec("other@w.c:8-20"), false),
                (spec("nosuch@*:*"), false),
                (spec("walk@nofile.c:*"), false),
            ],
        )
        .unwrap();
        let err = got[0].as_ref().unwrap_err();
        assert!(
            err.starts_with("no code at w.c:10 in function walk (try :9 or :11"),
            "{err}"
        );
        let near = got[1].as_ref().unwrap();
        assert_eq!(near.len(), 1);
        assert_eq!(near[0].line, 11, "the later of two equally near lines");
        assert_eq!(got[2].as_ref().unwrap()[0].line, 12);
        // +9 from the declaration line 3.
        assert_eq!(got[3].as_ref().unwrap()[0].line, 12);
        let entry = &got[4].as_ref().unwrap()[0];
        assert_eq!((entry.offset, entry.line), (0, 3));
        // A range clipped to the function's lines.
        let other: Vec<u32> = got[5].as_ref().unwrap().iter().map(|p| p.line).collect();
        assert!(
            !other.is_empty() && other.iter().all(|l| (16..=20).contains(l)),
            "{other:?}"
        );
        assert!(got[6]
            .as_ref()
            .unwrap_err()
            .starts_with("no function matches 'nosuch@*'"));
        assert!(got[7].is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
