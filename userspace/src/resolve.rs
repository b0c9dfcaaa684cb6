//! Load-time resolution of a program's probe targets on the running kernel:
//! each probe's symbol is looked up in `/proc/kallsyms`; an unresolvable
//! optional probe (`?`) is dropped from the program with a warning, any
//! other one is an error naming the probe point. The result is the program
//! to turn into an image plus the symbol chosen for each of its probes.
use crate::kallsyms::{Kallsyms, ResolveError, KALLSYMS_PATH};
use thiserror::Error;
use vm_spec::abi;
use vm_spec::program::{ProbeTarget, Program};

/// Why a program cannot be armed on this kernel.
#[derive(Debug, Error)]
pub enum Error {
    /// A mandatory probe point has no symbol here.
    #[error("probe point '{display}' cannot be resolved: {why}")]
    Unresolved {
        /// The probe point as written.
        display: String,
        /// What is missing.
        why: ResolveError,
    },
    /// Every probe was optional and none resolved.
    #[error("no probes left to arm: every probe point was optional and unresolvable")]
    NoProbes,
    /// /proc/kallsyms could not be read.
    #[error("cannot read {KALLSYMS_PATH}: {0}")]
    Kallsyms(std::io::Error),
}

/// A program ready for `image::build`.
#[derive(Debug)]
pub struct Resolved {
    /// The program, without the optional probes that did not resolve.
    /// Handlers are kept in place so run-time error records still index
    /// the same handlers.
    pub program: Program,
    /// The symbol chosen for each probe of `program` (`image::build`'s input).
    pub symbols: Vec<Option<(String, u32)>>,
    /// One warning per optional probe dropped.
    pub warnings: Vec<String>,
}

/// Resolves against an already read symbol set.
pub fn resolve_with(prog: &Program, syms: &Kallsyms) -> Result<Resolved, Error> {
    let mut program = prog.clone();
    program.probes.clear();
    let mut symbols = Vec::with_capacity(prog.probes.len());
    let mut warnings = Vec::new();
    for p in &prog.probes {
        match syms.resolve(&p.target) {
            Ok(sym) => {
                program.probes.push(p.clone());
                symbols.push(sym);
            }
            Err(why) if u32::from(p.flags) & abi::STP_PROBE_F_OPTIONAL != 0 => {
                warnings.push(format!(
                    "optional probe point '{}' skipped: {why}",
                    p.display
                ));
            }
            Err(why) => {
                return Err(Error::Unresolved {
                    display: p.display.clone(),
                    why,
                })
            }
        }
    }
    if program.probes.is_empty() && !prog.probes.is_empty() {
        return Err(Error::NoProbes);
    }
    Ok(Resolved {
        program,
        symbols,
        warnings,
    })
}

/// Resolves on the running kernel; `/proc/kallsyms` is read only when some
/// probe has a symbol.
pub fn resolve(prog: &Program) -> Result<Resolved, Error> {
    let needs_symbols = prog
        .probes
        .iter()
        .any(|p| !matches!(p.target, ProbeTarget::None));
    let syms = if needs_symbols {
        let targets: Vec<&ProbeTarget> = prog.probes.iter().map(|p| &p.target).collect();
        Kallsyms::read(KALLSYMS_PATH, &targets).map_err(Error::Kallsyms)?
    } else {
        Kallsyms::default()
    };
    resolve_with(prog, &syms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use vm_spec::program::Probe;

    fn probe(display: &str, target: ProbeTarget, optional: bool) -> Probe {
        Probe {
            kind: abi::STP_PROBE_KPROBE as u8,
            flags: if optional {
                abi::STP_PROBE_F_OPTIONAL as u8
            } else {
                0
            },
            handler: 0,
            target,
            maxactive: 0,
            period_ns: 0,
            display: display.into(),
        }
    }

    fn sym(n: &str) -> ProbeTarget {
        ProbeTarget::Symbol {
            name: n.into(),
            offset: 0,
        }
    }

    fn kallsyms() -> Kallsyms {
        let text = "ffffffff81000000 T vfs_read\nffffffff81000010 T vfs_write\n";
        let wanted = ["vfs_read", "vfs_write", "nope"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        Kallsyms::parse(text, &wanted)
    }

    #[test]
    fn optional_unresolved_probes_are_dropped() {
        let prog = Program {
            probes: vec![
                probe("kernel.function(\"vfs_read\")", sym("vfs_read"), false),
                probe("kernel.function(\"nope\")?", sym("nope"), true),
                Probe {
                    kind: abi::STP_PROBE_BEGIN as u8,
                    ..probe("begin", ProbeTarget::None, false)
                },
            ],
            ..Default::default()
        };
        let r = resolve_with(&prog, &kallsyms()).unwrap();
        assert_eq!(r.program.probes.len(), 2);
        assert_eq!(r.program.probes[1].display, "begin");
        assert_eq!(r.symbols, vec![Some(("vfs_read".into(), 0)), None]);
        assert_eq!(r.warnings.len(), 1);
        assert!(r.warnings[0].contains("kernel.function(\"nope\")?"));
        // The image builds from the reduced program.
        vm_spec::image::build(&r.program, &r.symbols).unwrap();
    }

    #[test]
    fn mandatory_unresolved_probe_is_an_error_naming_it() {
        let prog = Program {
            probes: vec![probe("kprobe.function(\"nope\")", sym("nope"), false)],
            ..Default::default()
        };
        let e = resolve_with(&prog, &kallsyms()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "probe point 'kprobe.function(\"nope\")' cannot be resolved: \
             the kernel has no function 'nope' (not in /proc/kallsyms)"
        );
    }

    #[test]
    fn all_optional_and_unresolved_is_an_error() {
        let prog = Program {
            probes: vec![probe("x?", sym("nope"), true)],
            ..Default::default()
        };
        assert!(matches!(
            resolve_with(&prog, &kallsyms()),
            Err(Error::NoProbes)
        ));
    }
}
