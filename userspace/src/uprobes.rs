//! Load-time placement of user-space probes (`process("PATH").function("F")`,
//! `.return`, `process("PATH").statement(ADDR).absolute`): the binary is
//! found on the target (`ubinary::find_program`: `$PATH` for a bare name,
//! then canonical), a function glob becomes one probe per matching
//! function of its symbol table, and every probe gets the file offset the
//! kernel's uprobes take (`Probe::uprobe`), its target the canonical path.
//! Target variables of function probes (`$param`, `$p->field`, `$$parms`,
//! `$return$`) are then filled from each binary's DWARF, converted to BTF
//! (`crate::dwarf2btf`) and resolved by `targetvars::apply_user`; a binary
//! without DWARF is an error naming it and the `*_arg()` functions. Those
//! of statement and marker probes are refused.
use crate::ubinary::{find_program, Binary, BinaryError};
use std::collections::HashMap;
use std::path::PathBuf;
use thiserror::Error;
use vm_spec::program::{ProbeTarget, Program, Uprobe, UserSite};

/// Why a user-space probe cannot be placed.
#[derive(Debug, Error)]
pub enum Error {
    /// The binary or the function is missing, or the address is not code.
    #[error("probe point '{display}' cannot be resolved: {why}")]
    Unresolved {
        /// The probe point as written.
        display: String,
        /// Why.
        why: Box<BinaryError>,
    },
    /// The handler of a statement or marker probe reads target variables.
    #[error("probe point '{display}': target variables of user-space probes are read at function probes only (from the binary's DWARF); use uint_arg(N), pointer_arg(N), register(\"NAME\") or returnval()")]
    TargetVars {
        /// The probe point as written.
        display: String,
    },
    /// A target variable of a user-space function does not resolve.
    #[error(transparent)]
    TargetVar(#[from] crate::targetvars::Error),
    /// `process` without a path and no target to stand for.
    #[error("probe point '{display}' is in the target process: give one with -c CMD or -x PID")]
    NoTarget {
        /// The probe point as written.
        display: String,
    },
    /// More probes than a session may have.
    #[error("probe point '{display}' expands to {count} probes: more than the {max} a session may have (narrow the wildcard)")]
    TooMany {
        /// The probe point as written.
        display: String,
        /// Probes it would make.
        count: usize,
        /// The limit.
        max: u32,
    },
}

/// The program with every user-space probe placed, one warning per
/// optional probe dropped, and per wildcard the number of functions it
/// matched (for `-v`); `None` when the program has no user-space probe.
pub type Placement = (Program, Vec<String>, Vec<(String, usize)>);

/// Places the user-space probes of `prog` (see the module comment).
pub fn place(prog: &Program) -> Result<Option<Placement>, Error> {
    let has_program = |p: &vm_spec::program::Probe| matches!(&p.target, ProbeTarget::Process { path, .. } if !path.is_empty());
    if !prog.probes.iter().any(|p| p.is_uprobe() || has_program(p)) {
        return Ok(None);
    }
    let max = vm_spec::abi::STP_MAX_PROBES as usize;
    let mut out = prog.clone();
    out.probes.clear();
    let mut warnings = Vec::new();
    let mut expanded = Vec::new();
    // (probe index, binary, function, address) of each function probe.
    let mut funcs: Vec<(usize, String, String, u64)> = Vec::new();
    let (globbed, glob_warnings) = expand_globs(prog)?;
    warnings.extend(glob_warnings);
    let prog = &globbed;
    // Each binary once: found, canonical, mapped.
    let mut binaries: HashMap<String, Result<(PathBuf, Binary), String>> = HashMap::new();
    for p in &prog.probes {
        if let ProbeTarget::Process { path, pid, event } = &p.target {
            // process("PATH").begin and the like: the program, canonical.
            match find_program(path) {
                _ if path.is_empty() => out.probes.push(p.clone()),
                Ok(c) => out.probes.push(vm_spec::program::Probe {
                    target: ProbeTarget::Process {
                        path: c.to_string_lossy().into_owned(),
                        pid: *pid,
                        event: *event,
                    },
                    ..p.clone()
                }),
                Err(why) => skip_or_fail(p, why, &mut warnings)?,
            }
            continue;
        }
        let ProbeTarget::User {
            path,
            library,
            site,
        } = &p.target
        else {
            out.probes.push(p.clone());
            continue;
        };
        if !matches!(site, UserSite::Function(_))
            && crate::absolute::reads_probe_vars(prog, p.handler)
        {
            return Err(Error::TargetVars {
                display: p.display.clone(),
            });
        }
        if path.is_empty() {
            return Err(Error::NoTarget {
                display: p.display.clone(),
            });
        }
        let placed = match library {
            None => place_one(path, site, &p.display, &mut binaries).map(|l| (l, String::new())),
            Some(lib) => in_library(path, lib, site, &p.display, &mut binaries),
        };
        let (list, exe) = match placed {
            Ok(placed) => placed,
            Err(why) => {
                skip_or_fail(p, why, &mut warnings)?;
                continue;
            }
        };
        if out.probes.len() + list.len() > max {
            return Err(Error::TooMany {
                display: p.display.clone(),
                count: out.probes.len() + list.len(),
                max: vm_spec::abi::STP_MAX_PROBES,
            });
        }
        if matches!(site, UserSite::Function(f) if f.contains(['*', '?'])) {
            expanded.push((p.display.clone(), list.len()));
        }
        for (canonical, display, address, offset, semaphore, args, func) in list {
            let Ok(semaphore) = u32::try_from(semaphore) else {
                return Err(Error::Unresolved {
                    display: p.display.clone(),
                    why: Box::new(BinaryError::NotCode {
                        path: PathBuf::from(&canonical),
                        address: semaphore,
                    }),
                });
            };
            if let Some(f) = func {
                funcs.push((out.probes.len(), canonical.clone(), f, address));
            }
            out.probes.push(vm_spec::program::Probe {
                target: ProbeTarget::User {
                    path: canonical,
                    library: None,
                    site: UserSite::Address(address),
                },
                uprobe: Some(Uprobe {
                    offset,
                    semaphore,
                    args,
                    exe: exe.clone(),
                    ..p.uprobe.clone().unwrap_or_default()
                }),
                display,
                ..p.clone()
            });
        }
    }
    fill_target_vars(&mut out, &funcs, &crate::debuginfo::debug_root())?;
    Ok(Some((out, warnings, expanded)))
}

/// A probe that cannot be placed: under `?` a warning in `warnings`, else
/// the error naming its point.
fn skip_or_fail(
    p: &vm_spec::program::Probe,
    why: BinaryError,
    warnings: &mut Vec<String>,
) -> Result<(), Error> {
    if u32::from(p.flags) & vm_spec::abi::STP_PROBE_F_OPTIONAL == 0 {
        return Err(Error::Unresolved {
            display: p.display.clone(),
            why: Box::new(why),
        });
    }
    warnings.push(format!(
        "optional probe point '{}' skipped: {why}",
        p.display
    ));
    Ok(())
}

/// Fills the target variables of the user-space function probes `funcs`
/// (probe index, binary, function, address) of `prog` from their binaries'
/// DWARF (debug files under `root`), each binary converted once, for the
/// functions probed in it only.
pub fn fill_target_vars(
    prog: &mut Program,
    funcs: &[(usize, String, String, u64)],
    root: &std::path::Path,
) -> Result<(), Error> {
    let reads = |h: u32| crate::absolute::reads_probe_vars(prog, h);
    let wanted: Vec<&(usize, String, String, u64)> = funcs
        .iter()
        .filter(|(i, ..)| prog.probes.get(*i).is_some_and(|p| reads(p.handler)))
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let mut bins: Vec<(String, Vec<(String, u64)>)> = Vec::new();
    for (_, bin, f, a) in &wanted {
        match bins.iter_mut().find(|(b, _)| b == bin) {
            Some((_, list)) => list.push((f.clone(), *a)),
            None => bins.push((bin.clone(), vec![(f.clone(), *a)])),
        }
    }
    let users: Vec<(String, Result<crate::btf::Btf, String>)> = bins
        .into_iter()
        .map(|(bin, list)| {
            let btf = crate::dwarf2btf::binary_btf(std::path::Path::new(&bin), root, Some(&list))
                .map_err(|e| e.to_string());
            (bin, btf)
        })
        .collect();
    let mut names: Vec<Option<String>> = vec![None; prog.probes.len()];
    for (i, _, f, _) in funcs {
        if let Some(slot) = names.get_mut(*i) {
            *slot = Some(f.clone());
        }
    }
    crate::targetvars::apply_user(prog, &names, &users)?;
    Ok(())
}

/// `prog` with every probe whose program path has wildcards
/// (`process("/lib*/libc.so.*")`) made one probe per file it matches, its
/// probe point naming the file; a path matching nothing is an error naming
/// the point (a warning and no probe under `?`).
fn expand_globs(prog: &Program) -> Result<(Program, Vec<String>), Error> {
    let mut out = prog.clone();
    let mut warnings = Vec::new();
    out.probes.clear();
    for p in &prog.probes {
        let path = match &p.target {
            ProbeTarget::User { path, .. } | ProbeTarget::Process { path, .. } => path,
            _ => {
                out.probes.push(p.clone());
                continue;
            }
        };
        let Some(files) = crate::ubinary::expand_program_glob(path) else {
            out.probes.push(p.clone());
            continue;
        };
        if files.is_empty() {
            skip_or_fail(p, BinaryError::NoMatch(path.clone()), &mut warnings)?;
            continue;
        }
        for f in files {
            let file = f.to_string_lossy().into_owned();
            let mut q = p.clone();
            q.display = q
                .display
                .replacen(&format!("(\"{path}\")"), &format!("(\"{file}\")"), 1);
            match &mut q.target {
                ProbeTarget::User { path, .. } | ProbeTarget::Process { path, .. } => *path = file,
                _ => {}
            }
            out.probes.push(q);
        }
    }
    Ok((out, warnings))
}

/// The program with the `process`-without-a-path probes put in the
/// target's executable `exe` (`-x PID`: /proc/PID/exe; `-c CMD`: the
/// command's program through `$PATH`), counting in the target only (its
/// pid goes in with `target::patch`); `None` when there are none.
pub fn in_target(prog: &Program, exe: &str) -> Option<Program> {
    if !wants_target(prog) {
        return None;
    }
    let mut out = prog.clone();
    for p in &mut out.probes {
        let ProbeTarget::User { path, .. } = &mut p.target else {
            continue;
        };
        if !path.is_empty() {
            continue;
        }
        *path = exe.to_string();
        p.uprobe = Some(Uprobe {
            target: true,
            ..Uprobe::default()
        });
    }
    Some(out)
}

/// Whether the program has a `process`-without-a-path probe.
pub fn wants_target(prog: &Program) -> bool {
    prog.probes
        .iter()
        .any(|p| matches!(&p.target, ProbeTarget::User { path, .. } if path.is_empty()))
}

/// The executable of the `-c` command (its first word through `$PATH`)
/// or of the `-x` process (/proc/PID/exe).
pub fn target_executable(cmd: Option<&str>, pid: Option<i64>) -> Option<String> {
    if let Some(c) = cmd {
        let first = c.split_whitespace().next()?;
        return find_program(first)
            .ok()
            .map(|p| p.to_string_lossy().into_owned());
    }
    std::fs::read_link(format!("/proc/{}/exe", pid?))
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

/// One placed probe: canonical path, its probe point (each function or
/// marker a glob matched named as stap's pp() names it), virtual address,
/// file offset, semaphore file offset (0: none), USDT argument specs, the
/// function's name (a function probe's).
type Placed = (String, String, u64, u64, u64, Vec<u64>, Option<String>);

/// The places of a probe in library `lib` of program `path`
/// (`.library`), and the program's canonical path, to which they count.
fn in_library(
    path: &str,
    lib: &str,
    site: &UserSite,
    display: &str,
    binaries: &mut HashMap<String, Result<(PathBuf, Binary), String>>,
) -> Result<(Vec<Placed>, String), BinaryError> {
    let exe = find_program(path)?;
    let libs = crate::ulibs::find_library(&exe, lib);
    if libs.is_empty() {
        return Err(BinaryError::NoLibrary {
            program: exe,
            library: lib.to_string(),
        });
    }
    let mut all = Vec::new();
    for l in &libs {
        let placed = place_one(&l.to_string_lossy(), site, display, binaries);
        match placed {
            Ok(list) => all.extend(list),
            // A glob matching several libraries: those without the
            // function or marker are left out, as a function glob leaves
            // out the symbols it does not match.
            Err(_) if libs.len() > 1 => {}
            Err(e) => return Err(e),
        }
    }
    if all.is_empty() {
        return place_one(&libs[0].to_string_lossy(), site, display, binaries)
            .map(|l| (l, String::new()));
    }
    Ok((all, exe.to_string_lossy().into_owned()))
}

/// The places of one user-space probe.
fn place_one(
    path: &str,
    site: &UserSite,
    display: &str,
    binaries: &mut HashMap<String, Result<(PathBuf, Binary), String>>,
) -> Result<Vec<Placed>, BinaryError> {
    let entry = binaries.entry(path.to_string()).or_insert_with(|| {
        find_program(path)
            .and_then(|p| Binary::open(&p).map(|b| (p, b)))
            .map_err(|e| e.to_string())
    });
    let (canonical, bin) = match entry {
        Ok((c, b)) => (c.to_string_lossy().into_owned(), b),
        // The error once per binary, again for each of its probes.
        Err(_) => {
            return Err(find_program(path)
                .and_then(|p| Binary::open(&p).map(|_| ()))
                .err()
                .unwrap_or_else(|| BinaryError::NotFound(path.to_string())))
        }
    };
    match site {
        UserSite::Function(f) => Ok(bin
            .functions(f)?
            .into_iter()
            .map(|u| {
                let d = crate::resolve::expanded_display(display, &u.name);
                (
                    canonical.clone(),
                    d,
                    u.address,
                    u.offset,
                    0,
                    Vec::new(),
                    Some(u.name),
                )
            })
            .collect()),
        UserSite::Address(a) => Ok(vec![(
            canonical,
            display.to_string(),
            *a,
            bin.offset_of(*a)?,
            0,
            Vec::new(),
            None,
        )]),
        UserSite::Mark { provider, name } => bin
            .markers(provider.as_deref(), name)?
            .into_iter()
            .map(|m| {
                let args = bin.usdt_args(&m)?;
                // `process("PATH").provider("P").mark("N")`, as written up
                // to the marker, each marker named in full.
                let head = display.split(".provider(").next().unwrap_or(display);
                let head = head.split(".mark(").next().unwrap_or(head);
                let d = format!(
                    "{head}.provider(\"{}\").mark(\"{}\"){}",
                    m.provider,
                    m.name,
                    if display.ends_with('?') { "?" } else { "" }
                );
                Ok((
                    canonical.clone(),
                    d,
                    m.address,
                    m.offset,
                    m.semaphore,
                    args,
                    None,
                ))
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vm_spec::abi;
    use vm_spec::program::Probe;

    fn probe(display: &str, path: &str, site: UserSite, kind: u32) -> Probe {
        Probe {
            kind: kind as u8,
            flags: 0,
            handler: 0,
            target: ProbeTarget::User {
                path: path.into(),
                library: None,
                site,
            },
            maxactive: 0,
            period_ns: 0,
            randomize: 0,
            perf: None,
            watch: None,
            netfilter: None,
            uprobe: None,
            display: display.into(),
        }
    }

    #[test]
    fn functions_of_a_binary_found_in_path_become_offsets() {
        let sh = find_program("sh").unwrap();
        let bin = Binary::open(&sh).unwrap();
        // Some function of sh's dynamic symbols (a stripped binary has
        // only those): the first one, whatever the shell.
        let Some(f) = bin.functions("*").ok().and_then(|v| v.into_iter().next()) else {
            eprintln!("skipped: sh exports no function");
            return;
        };
        let prog = Program {
            probes: vec![
                probe(
                    &format!("process(\"sh\").function(\"{}\")", f.name),
                    "sh",
                    UserSite::Function(f.name.clone()),
                    abi::STP_PROBE_UPROBE,
                ),
                probe(
                    "process(\"/nonexistent/x\").function(\"f\")?",
                    "/nonexistent/x",
                    UserSite::Function("f".into()),
                    abi::STP_PROBE_UPROBE,
                ),
            ],
            ..Default::default()
        };
        let mut optional = prog.clone();
        optional.probes[1].flags = abi::STP_PROBE_F_OPTIONAL as u8;
        let (placed, warnings, _) = place(&optional).unwrap().unwrap();
        assert_eq!(placed.probes.len(), 1);
        let p = &placed.probes[0];
        assert_eq!(
            p.target,
            ProbeTarget::User {
                path: sh.to_string_lossy().into_owned(),
                library: None,
                site: UserSite::Address(f.address)
            }
        );
        assert_eq!(p.uprobe.as_ref().unwrap().offset, f.offset);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].contains("skipped: no program '/nonexistent/x'"),
            "{warnings:?}"
        );
        // Not optional: the error names the point and the program.
        let e = place(&prog).unwrap_err().to_string();
        assert_eq!(
            e,
            "probe point 'process(\"/nonexistent/x\").function(\"f\")?' cannot be resolved: \
             no program '/nonexistent/x' (not a file, and not found in $PATH)"
        );
    }

    /// `src` (with `BIN` for the program's path) compiled and placed.
    fn placed(src: &str, bin: &std::path::Path) -> Result<Program, Error> {
        let src = src.replace("BIN", &bin.to_string_lossy());
        let c = compiler::compile("t.stp", &src, &compiler::Options::default())
            .unwrap_or_else(|f| panic!("{}", f.rendered));
        place(&c.program).map(|p| p.unwrap().0)
    }

    #[test]
    fn parameters_of_a_user_function_are_read_through_its_dwarf() {
        use crate::dwarf2btf::tests::{build, run};
        for (tag, opt) in [("tv0", "-O0"), ("tv2", "-O2")] {
            let bin = build(tag, &["-g", opt]);
            let prog = placed(
                r#"probe process("BIN").function("probe_me") {
                     printf("%d %d %d %d %d %d %s %d|%s\n", $n, $r->id, $r->total, $r->flag,
                            $r->mode, $r->in->b, user_string($s), $c, $$parms)
                   }"#,
                &bin,
            )
            .unwrap();
            // Every use is filled: nothing is left for the kernel's pass.
            assert!(prog.target_vars.is_empty());
            // The chains read user memory.
            let calls = |h: u32| {
                prog.handlers[prog.probes[0].handler as usize]
                    .code
                    .iter()
                    .filter(|i| u32::from(i.op) == vm_spec::abi::STP_OP_CALLI && i.imm == h as i32)
                    .count()
            };
            assert!(calls(vm_spec::abi::STP_HLP_USER_LONG) >= 6);
            assert_eq!(calls(vm_spec::abi::STP_HLP_KERNEL_LONG), 0);
            let sym = Some((
                bin.canonicalize().unwrap().to_string_lossy().into_owned(),
                0,
            ));
            let img = vm_spec::image::build(&prog, &[sym]).unwrap();
            vm_spec::core::verify_image(&img).expect("verifies");
            // The struct's bytes as the program has them, at a user
            // address; the string at another.
            let hex = run(&bin, "bytes");
            let rec: Vec<u8> = (0..hex.trim().len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
                .collect();
            let (base, sbase) = (0x7ffd_1000_0000u64, 0x7ffd_2000_0000u64);
            let env = vm_testkit::HostEnv {
                args: [3, base as i64, sbase as i64, 5, 0, 0],
                memory: vec![(base, rec), (sbase, b"hello\0".to_vec())],
                user_mode: true,
                ..Default::default()
            };
            let mut s = vm_testkit::host::HostSession::from_program(&prog).unwrap();
            s.run_handler(prog.probes[0].handler, &env).unwrap();
            assert_eq!(
                String::from_utf8(s.output()).unwrap(),
                format!("3 7 -9 5 19 200 hello 5|n=0x3 r={base:#x} s={sbase:#x} c=0x5\n"),
                "{opt}"
            );
            std::fs::remove_dir_all(bin.parent().unwrap()).unwrap();
        }
    }

    #[test]
    fn user_target_variables_that_cannot_be_read_are_errors_naming_why() {
        use crate::dwarf2btf::tests::build;
        let bin = build("tverr", &["-g", "-O0"]);
        let err = |src: &str| placed(src, &bin).unwrap_err().to_string();
        let e = err(r#"probe process("BIN").function("probe_me") { println($nosuch) }"#);
        assert!(
            e.contains("has no parameter 'nosuch'") && e.contains("n, r, s, c"),
            "{e}"
        );
        let e = err(r#"probe process("BIN").function("seven") { println($g) }"#);
        assert!(e.contains("parameter 7, passed on the stack"), "{e}");
        let e = err(r#"probe process("BIN").function("takes_double") { println($x) }"#);
        assert!(e.contains("parameter 'd' has type double"), "{e}");
        // @defined answers 0 where a parameter is missing.
        placed(
            r#"probe process("BIN").function("probe_me") { println(@defined($nosuch) ? $nosuch : 0) }"#,
            &bin,
        )
        .unwrap();
        // Without DWARF: the error says what to install, and what to use.
        let stripped = bin.with_file_name("stripped");
        let out = std::process::Command::new("objcopy")
            .arg("--strip-debug")
            .arg(&bin)
            .arg(&stripped)
            .output()
            .unwrap();
        assert!(out.status.success());
        let e = placed(
            r#"probe process("BIN").function("probe_me") { println($n) }"#,
            &stripped,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("has no DWARF debuginfo")
                && e.contains("-dbgsym")
                && e.contains("uint_arg(N)"),
            "{e}"
        );
        // ... unless nothing needs it.
        placed(
            r#"probe process("BIN").function("probe_me") { println(@defined($n)) }"#,
            &stripped,
        )
        .unwrap();
        std::fs::remove_dir_all(bin.parent().unwrap()).unwrap();
    }
}
