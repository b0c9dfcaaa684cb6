//! Load-time placement of user-space probes (`process("PATH").function("F")`,
//! `.return`, `process("PATH").statement(ADDR).absolute`): the binary is
//! found on the target (`ubinary::find_program`: `$PATH` for a bare name,
//! then canonical), a function glob becomes one probe per matching
//! function of its symbol table, and every probe gets the file offset the
//! kernel's uprobes take (`Probe::uprobe`), its target the canonical path.
//! Target variables are refused: they need the binary's DWARF, which is
//! not read yet.
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
    /// The handler reads target variables.
    #[error("probe point '{display}': target variables of user-space functions need the binary's DWARF, which stapvm does not read yet; use uint_arg(N), pointer_arg(N), register(\"NAME\") or returnval()")]
    TargetVars {
        /// The probe point as written.
        display: String,
    },
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
        if crate::absolute::reads_probe_vars(prog, p.handler) {
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
        for (canonical, display, address, offset, semaphore, args) in list {
            let Ok(semaphore) = u32::try_from(semaphore) else {
                return Err(Error::Unresolved {
                    display: p.display.clone(),
                    why: Box::new(BinaryError::NotCode {
                        path: PathBuf::from(&canonical),
                        address: semaphore,
                    }),
                });
            };
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
/// file offset, semaphore file offset (0: none), USDT argument specs.
type Placed = (String, String, u64, u64, u64, Vec<u64>);

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
                (canonical.clone(), d, u.address, u.offset, 0, Vec::new())
            })
            .collect()),
        UserSite::Address(a) => Ok(vec![(
            canonical,
            display.to_string(),
            *a,
            bin.offset_of(*a)?,
            0,
            Vec::new(),
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
                Ok((canonical.clone(), d, m.address, m.offset, m.semaphore, args))
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
}
