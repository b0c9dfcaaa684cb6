//! `stapvm list` (stap `-l` / `-L`): the probe points a pattern matches on
//! the running kernel, one per line, sorted and deduplicated as stap prints
//! them; with `-L` each followed by its target variables and their types
//! from BTF (`kernel.function("vfs_read") $file:struct file* $buf:char*
//! ...`). Without DWARF there is no `@file:line` in the point.
//!
//! Function points (`kernel.function`, `kprobe.function`,
//! `module("m").function`, with `.call` / `.return` kept as written) expand
//! against `/proc/kallsyms` with the loader's rules (probeable functions
//! only); `syscall.GLOB` / `nd_syscall.GLOB` against the `__x64_sys_*`
//! wrappers (`sys_*` on kernels without them); `perf.*` globs against the
//! generic perf events (stap's perf tapset names). Any other point is
//! checked by the compiler and printed as written.
use crate::btf::{kind, Btf};
use crate::kallsyms::{Kallsyms, KALLSYMS_PATH};
use crate::resolve::{read_names, FILTER_FUNCTIONS, KPROBE_BLACKLIST};
use crate::targetvars::SYSCALL_TABLE;
use std::collections::{BTreeSet, HashSet};
use std::io::BufReader;
use thiserror::Error;

/// Why a pattern cannot be listed.
#[derive(Debug, Error)]
pub enum Error {
    /// /proc/kallsyms could not be read.
    #[error("cannot read {KALLSYMS_PATH}: {0}")]
    Kallsyms(std::io::Error),
    /// The compiler refused the probe point (diagnostics already printed).
    #[error("{0}")]
    Failed(String),
    /// A source-file pattern without usable debuginfo.
    #[error("cannot list '{0}': {1}")]
    Unresolved(String, crate::kallsyms::ResolveError),
    /// A statement pattern that selects no line (why, with the point).
    #[error("cannot list '{0}': {1}")]
    NoLines(String, String),
}

/// One `name` or `name(arg)` component of a probe point.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Comp {
    name: String,
    /// The argument as written inside the parentheses (quotes removed
    /// from a string).
    arg: Option<String>,
}

/// Splits a probe point at the dots outside quotes and parentheses.
fn components(point: &str) -> Option<Vec<Comp>> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut start) = (0usize, false, 0usize);
    let b = point.as_bytes();
    let mut parts = Vec::new();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'"' => quoted = !quoted,
            b'(' if !quoted => depth += 1,
            b')' if !quoted => depth = depth.checked_sub(1)?,
            b'.' if !quoted && depth == 0 => {
                parts.push(&point[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if quoted || depth != 0 {
        return None;
    }
    parts.push(&point[start..]);
    for p in parts {
        let p = p.trim();
        let (name, arg) = match p.find('(') {
            Some(i) => {
                let inner = p[i + 1..].strip_suffix(')')?.trim();
                let arg = inner
                    .strip_prefix('"')
                    .and_then(|s| s.strip_suffix('"'))
                    .unwrap_or(inner);
                (&p[..i], Some(arg.to_string()))
            }
            None => (p, None),
        };
        if name.is_empty() {
            return None;
        }
        out.push(Comp {
            name: name.to_string(),
            arg,
        });
    }
    Some(out)
}

/// What a pattern asks for.
#[derive(Debug, PartialEq, Eq)]
enum Query {
    /// A function point: the text before `.function(...)`, the module, the
    /// function glob, the suffix after it (`.return`, "" ...).
    Function {
        prefix: String,
        module: Option<String>,
        glob: String,
        suffix: String,
    },
    /// `syscall.GLOB[.return]`: family, glob, suffix.
    Syscall {
        family: String,
        glob: String,
        suffix: String,
    },
    /// `perf.…` with a `*`: the generic perf events it matches.
    Perf,
    /// Points with a fixed set of suffixes and variables, no kernel to ask
    /// (`procfs("f").*`, `input.*`): each point and its variables.
    Fixed(Vec<(String, String)>),
    /// `kernel.statement("PAT")` / `module("m").statement("PAT")`, maybe
    /// `.nearest`: `[module:]PAT` and the flag; each line it selects in
    /// the debuginfo.
    Statement(String, bool),
    /// `process("PATH")[.library("LIB")].function("GLOB")[.call|.return]`:
    /// the binary, the library, the glob, the suffix; each function of its
    /// symbol table.
    UserFunction {
        path: String,
        library: Option<String>,
        glob: String,
        suffix: String,
    },
    /// `process("PATH")[.library("LIB")][.provider("P")].mark("GLOB")`:
    /// each USDT marker, with `-L` its arguments.
    UserMark {
        path: String,
        library: Option<String>,
        provider: Option<String>,
        glob: String,
    },
    /// Anything else: the compiler checks it.
    Other,
}

/// Every `perf.sw.NAME`, `perf.hw.NAME` and `perf.hw_cache.ID.OP.RESULT`
/// point (compiler/src/passes/resolve/perf.rs), as stap's perf tapset
/// names them.
fn perf_points() -> Vec<String> {
    use compiler::passes::resolve::perf::*;
    let mut out: Vec<String> = SW_EVENTS.iter().map(|e| format!("perf.sw.{e}")).collect();
    out.extend(HW_EVENTS.iter().map(|e| format!("perf.hw.{e}")));
    for id in CACHE_IDS {
        for op in CACHE_OPS {
            for res in CACHE_RESULTS {
                out.push(format!("perf.hw_cache.{id}.{op}.{res}"));
            }
        }
    }
    out
}

/// The perf points `point` (components with `*` globs) matches.
fn perf_matches(point: &str) -> Vec<String> {
    let Some(pat) = components(point) else {
        return Vec::new();
    };
    perf_points()
        .into_iter()
        .filter(|cand| {
            let names: Vec<&str> = cand.split('.').collect();
            names.len() == pat.len()
                && pat
                    .iter()
                    .zip(&names)
                    .all(|(p, n)| p.arg.is_none() && crate::kallsyms::glob(&p.name, n))
        })
        .collect()
}

/// The procfs and input points a pattern's glob over their last
/// component matches, with their variables as `stap -L` lists them:
/// `procfs[("name")].read|write` and `input.char|line`.
fn fixed_points(c: &[Comp]) -> Option<Vec<(String, String)>> {
    let glob = |pat: &str, name: &str| crate::kallsyms::glob(pat, name);
    let names: Vec<&str> = c.iter().map(|x| x.name.as_str()).collect();
    let out: Vec<(String, String)> = match names.as_slice() {
        ["procfs", last] if c[1].arg.is_none() => {
            let head = match &c[0].arg {
                Some(a) => format!("procfs(\"{a}\")"),
                None => "procfs".to_string(),
            };
            ["read", "write"]
                .iter()
                .filter(|s| glob(last, s))
                .map(|s| (format!("{head}.{s}"), " $value:string".to_string()))
                .collect()
        }
        // The netfilter tapset's aliases: a pattern of their length, or
        // a shorter one ending in `*` / `**` (every alias under it).
        ["netfilter", ..] if c.iter().all(|x| x.arg.is_none()) => {
            let last_all = matches!(names.last(), Some(&("*" | "**")));
            compiler::passes::resolve::netfilter::alias_points()
                .into_iter()
                .filter(|(point, _)| {
                    let pn: Vec<&str> = point.split('.').collect();
                    let fits = |n: usize| names.iter().zip(&pn).take(n).all(|(p, q)| glob(p, q));
                    (pn.len() == names.len() && fits(pn.len()))
                        || (last_all && names.len() < pn.len() && fits(names.len() - 1))
                })
                .map(|(point, vars)| {
                    let text: String = vars
                        .iter()
                        .map(|(v, s)| format!(" {v}:{}", if *s { "string" } else { "long" }))
                        .collect();
                    (point, text)
                })
                .collect()
        }
        // stap's raw hook point: its context variables.
        ["netfilter", "hook" | "pf", "pf" | "hook", ..] if names.len() <= 4 => {
            let text: String = c
                .iter()
                .map(|x| match &x.arg {
                    Some(a) if a.parse::<i64>().is_ok() => format!("{}({a})", x.name),
                    Some(a) => format!("{}(\"{a}\")", x.name),
                    None => x.name.clone(),
                })
                .collect::<Vec<_>>()
                .join(".");
            vec![(
                text,
                " $hooknum:long $in:struct net_device* $okfn:long $out:struct net_device* \
                 $skb:struct sk_buff* $verdict:long"
                    .to_string(),
            )]
        }
        ["input", last] if c[0].arg.is_none() && c[1].arg.is_none() => {
            [("char", " char:string"), ("line", " line:string")]
                .iter()
                .filter(|(s, _)| glob(last, s))
                .map(|(s, v)| (format!("input.{s}"), v.to_string()))
                .collect()
        }
        _ => return None,
    };
    Some(out)
}

fn query(point: &str) -> Query {
    let Some(c) = components(point) else {
        return Query::Other;
    };
    let suffix_ok = |rest: &[Comp]| {
        rest.iter().all(|r| {
            matches!(
                (r.name.as_str(), &r.arg),
                ("call" | "return" | "exported", None) | ("maxactive", Some(_))
            )
        })
    };
    let suffix = |rest: &[Comp]| -> String {
        rest.iter()
            .map(|r| match &r.arg {
                Some(a) => format!(".{}({a})", r.name),
                None => format!(".{}", r.name),
            })
            .collect()
    };
    if let Some(points) = fixed_points(&c) {
        return Query::Fixed(points);
    }
    let names: Vec<&str> = c.iter().map(|x| x.name.as_str()).collect();
    if names.first() == Some(&"perf") && point.contains('*') {
        return Query::Perf;
    }
    let nearest = |rest: &[Comp]| match rest {
        [] => Some(false),
        [n] if n.name == "nearest" && n.arg.is_none() => Some(true),
        _ => None,
    };
    // `.library("LIB")` right after the process: the rest as without it.
    let (library, k) = match names.get(1) {
        Some(&"library") if c[1].arg.is_some() => (c[1].arg.clone(), 1),
        _ => (None, 0),
    };
    let path = c[0].arg.clone().unwrap_or_default();
    let arg = |i: usize| c.get(i + k).and_then(|x| x.arg.clone());
    let user: Vec<&str> = names.iter().skip(1 + k).copied().collect();
    if names.first() == Some(&"process") && c[0].arg.is_some() {
        match user.as_slice() {
            ["function", rest @ ..]
                if arg(1).is_some()
                    && (rest.is_empty() || rest == ["call"] || rest == ["return"]) =>
            {
                return Query::UserFunction {
                    path,
                    library,
                    glob: arg(1).unwrap_or_default(),
                    suffix: suffix(&c[2 + k..]),
                };
            }
            ["mark"] if arg(1).is_some() => {
                return Query::UserMark {
                    path,
                    library,
                    provider: None,
                    glob: arg(1).unwrap_or_default(),
                };
            }
            ["provider", "mark"] if arg(1).is_some() && arg(2).is_some() => {
                return Query::UserMark {
                    path,
                    library,
                    provider: arg(1),
                    glob: arg(2).unwrap_or_default(),
                };
            }
            _ => {}
        }
    }
    match names.as_slice() {
        ["kernel", "statement", ..] if c[0].arg.is_none() => {
            if let (Some(pat), Some(near)) = (&c[1].arg, nearest(&c[2..])) {
                return Query::Statement(pat.clone(), near);
            }
        }
        ["module", "statement", ..] => {
            if let (Some(m), Some(pat), Some(near)) = (&c[0].arg, &c[1].arg, nearest(&c[2..])) {
                return Query::Statement(format!("{}:{pat}", m.replace('-', "_")), near);
            }
        }
        _ => {}
    }
    let (fi, module) = match names.as_slice() {
        ["kernel" | "kprobe", "function", ..] if c[0].arg.is_none() => (1, None),
        ["module", "function", ..] => (1, c[0].arg.clone()),
        ["kprobe", "module", "function", ..] if c[0].arg.is_none() => (2, c[1].arg.clone()),
        ["syscall" | "nd_syscall", _, rest @ ..]
            if c[0].arg.is_none()
                && c[1].arg.is_none()
                && (rest.is_empty() || rest == ["return"]) =>
        {
            return Query::Syscall {
                family: c[0].name.clone(),
                glob: c[1].name.clone(),
                suffix: suffix(&c[2..]),
            };
        }
        _ => return Query::Other,
    };
    let Some(glob) = c[fi].arg.clone() else {
        return Query::Other;
    };
    // `f@FILEPAT` lists the functions the debuginfo puts in FILEPAT.
    if !suffix_ok(&c[fi + 1..]) || (fi == 2 && module.is_none()) || glob.contains([':', '+']) {
        return Query::Other;
    }
    let prefix = match (fi, &module) {
        (1, None) => c[0].name.clone(),
        (1, Some(m)) => format!("module(\"{m}\")"),
        (_, m) => format!("kprobe.module(\"{}\")", m.as_deref().unwrap_or("")),
    };
    Query::Function {
        prefix,
        module,
        glob,
        suffix: suffix(&c[fi + 1..]),
    }
}

/// Reads kallsyms collecting the symbols each of the given patterns matches.
pub type ReadKallsyms<'a> = Box<dyn FnMut(&[String]) -> std::io::Result<Kallsyms> + 'a>;

/// The kernel's symbols and type information a listing reads.
pub struct Sources<'a> {
    /// /proc/kallsyms text (or a reader of it).
    pub kallsyms: ReadKallsyms<'a>,
    /// ftrace's probeable functions, when known.
    pub allowed: Option<HashSet<String>>,
    /// The kprobe blacklist.
    pub blacklist: HashSet<String>,
    /// BTF, for `-L`.
    pub btf: Option<&'a Btf>,
}

/// A C type as stap prints it (`struct file*`, `char const*`, `size_t`).
pub fn stap_type(btf: &Btf, id: u32) -> String {
    stap_type_in(btf, id, 0)
}

fn stap_type_in(btf: &Btf, id: u32, depth: usize) -> String {
    if depth > 32 {
        return "?".into();
    }
    let inner = |t: Result<u32, _>| match t {
        Ok(t) => stap_type_in(btf, t, depth + 1),
        Err(_) => "?".into(),
    };
    let name = btf.name(id).unwrap_or("");
    let named = |pre: &str| {
        if name.is_empty() {
            format!("{pre}{{...}}")
        } else {
            format!("{pre}{name}")
        }
    };
    match btf.kind(id) {
        Ok(0) => "void".into(),
        Ok(kind::INT | kind::TYPEDEF | kind::FLOAT) => name.to_string(),
        Ok(kind::STRUCT) => named("struct "),
        Ok(kind::UNION) => named("union "),
        Ok(kind::ENUM | kind::ENUM64) => named("enum "),
        Ok(kind::FWD) => btf.type_name(id),
        Ok(kind::PTR) => match btf.referenced(id) {
            Ok(t) if btf.kind(t).ok() == Some(kind::FUNC_PROTO) => {
                format!("{}(*)()", inner(btf.referenced(t)))
            }
            t => format!("{}*", inner(t)),
        },
        Ok(kind::CONST) => format!("{} const", inner(btf.referenced(id))),
        Ok(kind::VOLATILE) => format!("{} volatile", inner(btf.referenced(id))),
        Ok(kind::RESTRICT | kind::TYPE_TAG) => inner(btf.referenced(id)),
        Ok(kind::ARRAY) => btf.type_name(id),
        _ => "?".into(),
    }
}

/// ` $a:T $b:U` for the parameters of BTF function `name` (plus `$return`
/// for a `.return` point), or None when BTF has no such function.
fn function_vars(btf: &Btf, name: &str, ret: bool) -> Option<String> {
    let f = btf.find_func(name)?;
    let ps = btf.params(f).ok()?;
    let mut s = String::new();
    for p in ps.iter().filter(|p| !p.name.is_empty() && p.ty != 0) {
        s.push_str(&format!(" ${}:{}", p.name, stap_type(btf, p.ty)));
    }
    if ret {
        let rt = btf.referenced(btf.referenced(f).ok()?).ok()?;
        if rt != 0 {
            s.push_str(&format!(" $return:{}", stap_type(btf, rt)));
        }
    }
    Some(s)
}

/// ` $a:T ...` for the arguments of syscall `name`: from `__do_sys_NAME` /
/// `__se_sys_NAME` in BTF, else from the loader's table (types from the
/// argument's name and width).
fn syscall_vars(btf: &Btf, name: &str) -> Option<String> {
    for f in [format!("__do_sys_{name}"), format!("__se_sys_{name}")] {
        if let Some(s) = function_vars(btf, &f, false) {
            return Some(s);
        }
    }
    let (_, args) = SYSCALL_TABLE.iter().find(|(n, _)| *n == name)?;
    Some(
        args.iter()
            .map(|&(a, bytes, signed)| {
                let t = match (a, bytes, signed) {
                    ("filename" | "pathname", _, _) => "char const*",
                    ("buf", _, _) => "char*",
                    ("argv" | "envp", _, _) => "char const* const*",
                    ("rqtp" | "rmtp", _, _) => "struct __kernel_timespec*",
                    ("mode", _, _) => "umode_t",
                    (_, 8, true) => "long int",
                    (_, 8, false) => "long unsigned int",
                    (_, 4, true) => "int",
                    (_, 4, false) => "unsigned int",
                    (_, 2, _) => "short unsigned int",
                    _ => "long int",
                };
                format!(" ${a}:{t}")
            })
            .collect(),
    )
}

/// The lines `stapvm list` prints for `patterns`: sorted, deduplicated.
pub fn list_with(
    patterns: &[String],
    long: bool,
    src: &mut Sources<'_>,
) -> Result<Vec<String>, Error> {
    let mut out = BTreeSet::new();
    let queries: Vec<Query> = patterns.iter().map(|p| query(p)).collect();
    // Every kallsyms pattern, read in one pass.
    let mut globs = Vec::new();
    for q in &queries {
        match q {
            Query::Function { module, glob, .. } => globs.push(match module {
                Some(m) => format!("{m}:{glob}"),
                None => glob.clone(),
            }),
            Query::Syscall { glob, .. } => {
                globs.push(format!("__x64_sys_{glob}"));
                globs.push(format!("sys_{glob}"));
            }
            Query::Perf
            | Query::Fixed(_)
            | Query::Statement(..)
            | Query::UserFunction { .. }
            | Query::UserMark { .. }
            | Query::Other => {}
        }
    }
    let mut syms = if globs.is_empty() {
        Kallsyms::default()
    } else {
        (src.kallsyms)(&globs).map_err(Error::Kallsyms)?
    };
    syms.restrict(src.allowed.as_ref(), &src.blacklist);
    crate::debuginfo::restrict_to_source_files(
        &mut syms,
        &globs,
        &crate::debuginfo::debug_root(),
        &crate::debuginfo::kernel_release(),
    );
    for (q, pat) in queries.iter().zip(patterns) {
        match q {
            Query::Function {
                prefix,
                module,
                glob,
                suffix,
            } => {
                let key = match module {
                    Some(m) => format!("{m}:{glob}"),
                    None => glob.clone(),
                };
                if let Some(why) = syms.failure(&key) {
                    return Err(Error::Unresolved(pat.trim().to_string(), why.clone()));
                }
                for sym in syms.pattern_matches(&key) {
                    let f = sym.rsplit(':').next().unwrap_or(&sym).to_string();
                    let mut line = format!("{prefix}.function(\"{f}\"){suffix}");
                    if long {
                        if let Some(btf) = src.btf {
                            let ret = suffix.split('.').any(|s| s == "return");
                            line.push_str(&function_vars(btf, &f, ret).unwrap_or_default());
                        }
                    }
                    out.insert(line);
                }
            }
            Query::Syscall {
                family,
                glob,
                suffix,
            } => {
                // The wrappers when the kernel has them (4.17+), else sys_*.
                let wrapped = format!("__x64_sys_{glob}");
                let (key, strip) = if syms.pattern_matches(&wrapped).is_empty() {
                    (format!("sys_{glob}"), "sys_")
                } else {
                    (wrapped, "__x64_sys_")
                };
                for sym in syms.pattern_matches(&key) {
                    let name = &sym[strip.len()..];
                    if name == "ni_syscall" {
                        continue;
                    }
                    let mut line = format!("{family}.{name}{suffix}");
                    if long {
                        if let Some(btf) = src.btf {
                            line.push_str(&syscall_vars(btf, name).unwrap_or_default());
                        }
                    }
                    out.insert(line);
                }
            }
            Query::Perf => {
                let found = perf_matches(pat.trim());
                if found.is_empty() {
                    return Err(Error::Failed(format!("cannot list '{pat}': no match")));
                }
                out.extend(found);
            }
            Query::UserFunction {
                path,
                library,
                glob,
                suffix,
            } => {
                let files = binaries(path, library.as_deref())
                    .map_err(|e| Error::NoLines(pat.trim().to_string(), e))?;
                for (head, file) in files {
                    let funcs = crate::ubinary::Binary::open(&file)
                        .and_then(|b| b.functions(glob))
                        .map_err(|e| Error::NoLines(pat.trim().to_string(), e.to_string()))?;
                    // -L: the parameters (and `$return`) from the
                    // binary's DWARF; a binary without any lists names.
                    let btf = if long {
                        let wanted: Vec<(String, u64)> =
                            funcs.iter().map(|f| (f.name.clone(), f.address)).collect();
                        crate::dwarf2btf::binary_btf(
                            &file,
                            &crate::debuginfo::debug_root(),
                            Some(&wanted),
                        )
                        .ok()
                    } else {
                        None
                    };
                    for f in funcs {
                        let mut line = format!("{head}.function(\"{}\"){suffix}", f.name);
                        if let Some(b) = &btf {
                            let ret = suffix.starts_with(".return");
                            line.push_str(&function_vars(b, &f.name, ret).unwrap_or_default());
                        }
                        out.insert(line);
                    }
                }
            }
            Query::UserMark {
                path,
                library,
                provider,
                glob,
            } => {
                let mut all = Vec::new();
                let files = binaries(path, library.as_deref())
                    .map_err(|e| Error::NoLines(pat.trim().to_string(), e))?;
                for (head, file) in files {
                    let marks = crate::ubinary::Binary::open(&file)
                        .and_then(|b| b.markers(provider.as_deref(), glob))
                        .map_err(|e| Error::NoLines(pat.trim().to_string(), e.to_string()))?;
                    all.extend(marks.into_iter().map(|m| (head.clone(), m)));
                }
                for (head, m) in all {
                    let mut line =
                        format!("{head}.provider(\"{}\").mark(\"{}\")", m.provider, m.name);
                    // stap -L: a marker's arguments are longs.
                    if long {
                        for k in 1..=m.args.split_whitespace().count() {
                            line.push_str(&format!(" $arg{k}:long"));
                        }
                    }
                    out.insert(line);
                }
            }
            Query::Statement(spec, nearest) => {
                let lines = crate::statements::list(
                    spec,
                    *nearest,
                    &crate::debuginfo::debug_root(),
                    &crate::debuginfo::kernel_release(),
                )
                .map_err(|why| Error::NoLines(pat.trim().to_string(), why))?;
                out.extend(lines);
            }
            Query::Fixed(points) => {
                for (point, vars) in points {
                    out.insert(if long {
                        format!("{point}{vars}")
                    } else {
                        point.clone()
                    });
                }
            }
            Query::Other => {
                let text = format!("probe {pat} {{}}");
                let opts = compiler::Options::default();
                if let Err(f) = compiler::check("<input>", &text, &opts) {
                    eprint!("{}", f.rendered);
                    return Err(Error::Failed(format!("cannot list '{pat}'")));
                }
                out.insert(pat.trim().to_string());
            }
        }
    }
    Ok(out.into_iter().collect())
}

/// Lists on the running kernel.
pub fn list(patterns: &[String], long: bool) -> Result<Vec<String>, Error> {
    let btf = if long {
        match Btf::vmlinux() {
            Ok(Ok(b)) => Some(b),
            Ok(Err(e)) => {
                eprintln!("WARNING: cannot use the kernel's BTF ({e}): no target variables listed");
                None
            }
            Err(e) => {
                eprintln!(
                    "WARNING: cannot read {} ({e}): no target variables listed",
                    crate::btf::VMLINUX_BTF
                );
                None
            }
        }
    } else {
        None
    };
    let allowed = FILTER_FUNCTIONS
        .iter()
        .find_map(|p| read_names(p, false).filter(|s| !s.is_empty()));
    let blacklist = read_names(KPROBE_BLACKLIST, true).unwrap_or_default();
    let mut src = Sources {
        kallsyms: Box::new(|globs: &[String]| {
            let file = std::fs::File::open(KALLSYMS_PATH)?;
            Kallsyms::scan(
                BufReader::with_capacity(1 << 16, file),
                &HashSet::new(),
                &HashSet::new(),
                globs,
            )
        }),
        allowed,
        blacklist,
        btf: btf.as_ref(),
    };
    list_with(patterns, long, &mut src)
}

/// The binaries a listing reads, each with the head of its probe points:
/// `process("EXE")` for each program `path` names, or with `library`
/// `process("EXE").library("LIBPATH")` for each library it means.
fn binaries(
    path: &str,
    library: Option<&str>,
) -> Result<Vec<(String, std::path::PathBuf)>, String> {
    let mut out = Vec::new();
    for exe in programs(path)? {
        let head = format!("process(\"{}\")", exe.display());
        match library {
            None => out.push((head, exe)),
            Some(lib) => {
                let libs = crate::ulibs::find_library(&exe, lib);
                if libs.is_empty() {
                    return Err(crate::ubinary::BinaryError::NoLibrary {
                        program: exe,
                        library: lib.to_string(),
                    }
                    .to_string());
                }
                for l in libs {
                    out.push((format!("{head}.library(\"{}\")", l.display()), l));
                }
            }
        }
    }
    Ok(out)
}

/// The programs a `process("PATH")` names: the files a path with
/// wildcards matches, else the one program (`ubinary::find_program`).
fn programs(path: &str) -> Result<Vec<std::path::PathBuf>, String> {
    match crate::ubinary::expand_program_glob(path) {
        Some(v) if v.is_empty() => Err(format!("no program matches '{path}'")),
        Some(v) => Ok(v),
        None => crate::ubinary::find_program(path)
            .map(|p| vec![p])
            .map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::btf::tests::sample;

    const KALLSYMS: &str = "\
ffffffff81000000 T vfs_read
ffffffff81000010 T vfs_write
ffffffff81000020 t vfs_readv.cold
ffffffff81000030 T vfs_bad
ffffffff81000040 T __x64_sys_open
ffffffff81000050 T __x64_sys_openat
ffffffff81000060 T __x64_sys_ni_syscall
ffffffff81000070 T sys_copyarea
ffffffff81000080 t ext4_file_open\t[ext4]
";

    fn run(patterns: &[&str], long: bool) -> Vec<String> {
        let btf = Btf::parse(sample()).unwrap();
        let mut src = Sources {
            kallsyms: Box::new(|globs: &[String]| {
                Kallsyms::scan(KALLSYMS.as_bytes(), &HashSet::new(), &HashSet::new(), globs)
            }),
            allowed: None,
            blacklist: ["vfs_bad".to_string()].into_iter().collect(),
            btf: Some(&btf),
        };
        let p: Vec<String> = patterns.iter().map(|s| s.to_string()).collect();
        list_with(&p, long, &mut src).unwrap()
    }

    #[test]
    fn parses_points() {
        assert_eq!(
            query("kernel.function(\"vfs_*\").return"),
            Query::Function {
                prefix: "kernel".into(),
                module: None,
                glob: "vfs_*".into(),
                suffix: ".return".into()
            }
        );
        assert_eq!(
            query("module(\"ext4\").function(\"*open\")"),
            Query::Function {
                prefix: "module(\"ext4\")".into(),
                module: Some("ext4".into()),
                glob: "*open".into(),
                suffix: String::new()
            }
        );
        assert_eq!(
            query("syscall.open*"),
            Query::Syscall {
                family: "syscall".into(),
                glob: "open*".into(),
                suffix: String::new()
            }
        );
        assert_eq!(query("begin"), Query::Other);
        assert_eq!(query("kernel.function(\"f@x.c:3\")"), Query::Other);
        assert_eq!(query("kernel.function(\"f\""), Query::Other);
    }

    #[test]
    fn lists_functions_sorted_without_unsafe_ones() {
        assert_eq!(
            run(&["kernel.function(\"vfs_*\")"], false),
            [
                "kernel.function(\"vfs_read\")",
                "kernel.function(\"vfs_write\")"
            ]
        );
        assert_eq!(
            run(&["kprobe.function(\"vfs_read\").return"], false),
            ["kprobe.function(\"vfs_read\").return"]
        );
        assert_eq!(
            run(&["module(\"ext4\").function(\"*\")"], false),
            ["module(\"ext4\").function(\"ext4_file_open\")"]
        );
        assert!(run(&["kernel.function(\"nope*\")"], false).is_empty());
    }

    #[test]
    fn long_form_has_btf_types() {
        assert_eq!(
            run(&["kernel.function(\"vfs_read\")"], true),
            [
                "kernel.function(\"vfs_read\") $file:struct file const* $buf:char* \
              $count:size_t $pos:int"
            ]
        );
        assert_eq!(
            run(&["kernel.function(\"vfs_read\").return"], true),
            [
                "kernel.function(\"vfs_read\").return $file:struct file const* $buf:char* \
              $count:size_t $pos:int $return:long int"
            ]
        );
        // Not in BTF: the point alone.
        assert_eq!(
            run(&["kernel.function(\"vfs_write\")"], true),
            ["kernel.function(\"vfs_write\")"]
        );
    }

    #[test]
    fn lists_syscalls_with_arguments() {
        assert_eq!(
            run(&["syscall.open*"], false),
            ["syscall.open", "syscall.openat"]
        );
        assert_eq!(
            run(&["syscall.*"], false),
            ["syscall.open", "syscall.openat"]
        );
        assert_eq!(
            run(&["syscall.open.return"], true),
            ["syscall.open.return $filename:char const* $flags:int $mode:umode_t"]
        );
    }

    #[test]
    fn procfs_and_input_points_with_their_variables() {
        assert_eq!(
            run(&["procfs(\"*\").*", "input.*"], true),
            [
                "input.char char:string",
                "input.line line:string",
                "procfs(\"*\").read $value:string",
                "procfs(\"*\").write $value:string",
            ]
        );
        assert_eq!(run(&["procfs.w*"], false), ["procfs.write"]);
    }

    #[test]
    fn other_points_are_checked_and_echoed() {
        assert_eq!(
            run(&["begin", "timer.s(1)", "timer.jiffies(5)"], false),
            ["begin", "timer.jiffies(5)", "timer.s(1)"]
        );
    }

    #[test]
    fn perf_globs_list_the_events() {
        let sw = run(&["perf.sw.*"], false);
        assert_eq!(sw.len(), 9);
        assert!(sw.contains(&"perf.sw.page_faults".to_string()), "{sw:?}");
        assert_eq!(
            run(&["perf.hw.*cycles*"], true),
            [
                "perf.hw.bus_cycles",
                "perf.hw.cpu_cycles",
                "perf.hw.ref_cpu_cycles",
                "perf.hw.stalled_cycles_backend",
                "perf.hw.stalled_cycles_frontend"
            ]
        );
        assert_eq!(run(&["perf.hw_cache.*.*.*"], false).len(), 7 * 3 * 2);
        assert_eq!(
            run(&["perf.*.ll.write.*"], false),
            [
                "perf.hw_cache.ll.write.access",
                "perf.hw_cache.ll.write.miss"
            ]
        );
        // Without a glob: checked by the compiler, echoed.
        assert_eq!(
            run(&["perf.sw.page_faults.sample(1)"], false),
            ["perf.sw.page_faults.sample(1)"]
        );
    }
}
