//! Load-time addresses of `kernel.data("SYMBOL")` watchpoints: the symbol's
//! address on the running kernel, from `/proc/kallsyms` (any symbol type:
//! data, bss, read-only data; the first listing, vmlinux's, wins). The
//! `.stpb` keeps the name, so one file watches the same variable on every
//! kernel, KASLR included.
use crate::kallsyms::KALLSYMS_PATH;
use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use thiserror::Error;
use vm_spec::abi;
use vm_spec::program::{ProbeTarget, Program};

/// Why a watchpoint's symbol has no address.
#[derive(Debug, Error)]
pub enum Error {
    /// /proc/kallsyms could not be read.
    #[error("cannot read {KALLSYMS_PATH}: {0}")]
    Kallsyms(std::io::Error),
    /// The kernel has no symbol of that name.
    #[error("probe point '{display}' cannot be resolved: the kernel has no symbol '{name}' (not in {KALLSYMS_PATH})")]
    Missing {
        /// The probe point as written.
        display: String,
        /// The symbol.
        name: String,
    },
    /// kallsyms hides the addresses (kernel.kptr_restrict, not root).
    #[error("probe point '{display}' cannot be resolved: {KALLSYMS_PATH} shows '{name}' at address 0 (kernel.kptr_restrict hides addresses: run as root)")]
    Hidden {
        /// The probe point as written.
        display: String,
        /// The symbol.
        name: String,
    },
    /// A symbol's address is not aligned to the watched length.
    #[error("probe point '{display}': '{name}' is at {address:#x}, not aligned to the watched length {len} (the debug registers need it)")]
    Unaligned {
        /// The probe point as written.
        display: String,
        /// The symbol.
        name: String,
        /// Its address.
        address: u64,
        /// The length watched.
        len: u32,
    },
}

/// The addresses of the `wanted` names in kallsyms text (vmlinux's
/// symbols; `crate::kallsyms::scan_data_symbols`, which `@var` uses too).
pub fn addresses(
    text: impl BufRead,
    wanted: &HashSet<&str>,
) -> std::io::Result<HashMap<String, u64>> {
    let names: Vec<&str> = wanted.iter().copied().collect();
    crate::kallsyms::scan_data_symbols(text, &names)
}

/// The program with every `kernel.data("SYMBOL")` probe's address set and
/// its target cleared (the image has no symbol for a watchpoint), reading
/// the addresses with `read` (of the wanted names); an optional probe
/// whose symbol is missing is dropped with a warning. `None` when the
/// program has no symbolic watchpoint.
pub fn resolve_symbols(
    prog: &Program,
    read: impl FnOnce(&HashSet<&str>) -> std::io::Result<HashMap<String, u64>>,
    warnings: &mut Vec<String>,
) -> Result<Option<Program>, Error> {
    let symbolic = |p: &vm_spec::program::Probe| -> Option<String> {
        match (&p.watch, &p.target) {
            (Some(_), ProbeTarget::Symbol { name, .. }) => Some(name.clone()),
            _ => None,
        }
    };
    let names: Vec<String> = prog.probes.iter().filter_map(symbolic).collect();
    if names.is_empty() {
        return Ok(None);
    }
    let wanted: HashSet<&str> = names.iter().map(String::as_str).collect();
    let found = read(&wanted).map_err(Error::Kallsyms)?;
    let mut out = prog.clone();
    out.probes.clear();
    for p in &prog.probes {
        let (Some(name), Some(w)) = (symbolic(p), p.watch) else {
            out.probes.push(p.clone());
            continue;
        };
        let display = p.display.clone();
        let address = match found.get(&name) {
            Some(0) => return Err(Error::Hidden { display, name }),
            Some(&a) => a,
            None if u32::from(p.flags) & abi::STP_PROBE_F_OPTIONAL != 0 => {
                warnings.push(format!(
                    "optional probe point '{display}' skipped: the kernel has no symbol '{name}'"
                ));
                continue;
            }
            None => return Err(Error::Missing { display, name }),
        };
        if address & u64::from(w.len.max(1) - 1) != 0 {
            return Err(Error::Unaligned {
                display,
                name,
                address,
                len: w.len,
            });
        }
        let mut q = p.clone();
        q.target = ProbeTarget::None;
        q.watch = Some(vm_spec::program::Watch { address, ..w });
        out.probes.push(q);
    }
    Ok(Some(out))
}

/// [`resolve_symbols`] on the running kernel's `/proc/kallsyms`.
pub fn resolve_running(
    prog: &Program,
    warnings: &mut Vec<String>,
) -> Result<Option<Program>, Error> {
    resolve_symbols(
        prog,
        |wanted| {
            let f = std::fs::File::open(KALLSYMS_PATH)?;
            addresses(std::io::BufReader::new(f), wanted)
        },
        warnings,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use vm_spec::program::{Probe, Watch};

    const KALLSYMS: &str = "\
ffffffff81000000 T _stext
ffffffff82a01234 D vm_dirty_ratio
ffffffff82a01238 d pid_max
ffffffff82a0123c B odd_one
ffffffffc0001000 d pid_max\t[somemod]
";

    fn watch(display: &str, name: &str, len: u32, optional: bool) -> Probe {
        Probe {
            kind: abi::STP_PROBE_WATCH as u8,
            flags: if optional {
                abi::STP_PROBE_F_OPTIONAL as u8
            } else {
                0
            },
            handler: 0,
            target: ProbeTarget::Symbol {
                name: name.into(),
                offset: 0,
            },
            maxactive: 0,
            period_ns: 0,
            randomize: 0,
            perf: None,
            watch: Some(Watch {
                address: 0,
                len,
                rw: false,
            }),
            netfilter: None,
            uprobe: None,
            display: display.into(),
        }
    }

    fn run(probes: Vec<Probe>, text: &str) -> (Result<Option<Program>, Error>, Vec<String>) {
        let prog = Program {
            probes,
            ..Default::default()
        };
        let mut warnings = Vec::new();
        let r = resolve_symbols(&prog, |w| addresses(text.as_bytes(), w), &mut warnings);
        (r, warnings)
    }

    #[test]
    fn symbols_get_their_first_address_and_lose_their_target() {
        let (r, w) = run(
            vec![
                watch("a", "vm_dirty_ratio", 4, false),
                watch("b", "pid_max", 1, false),
            ],
            KALLSYMS,
        );
        let p = r.unwrap().unwrap();
        assert!(w.is_empty());
        let got: Vec<(u64, bool)> = p
            .probes
            .iter()
            .map(|p| (p.watch.unwrap().address, p.target == ProbeTarget::None))
            .collect();
        assert_eq!(
            got,
            [(0xffffffff82a01234, true), (0xffffffff82a01238, true)]
        );
    }

    #[test]
    fn missing_hidden_unaligned_and_optional() {
        let (r, _) = run(vec![watch("a", "nope", 1, false)], KALLSYMS);
        assert!(matches!(r, Err(Error::Missing { .. })));
        let (r, w) = run(
            vec![watch("a", "nope", 1, true), watch("b", "pid_max", 1, false)],
            KALLSYMS,
        );
        assert_eq!(r.unwrap().unwrap().probes.len(), 1);
        assert_eq!(w.len(), 1, "{w:?}");
        let (r, _) = run(vec![watch("a", "odd_one", 8, false)], KALLSYMS);
        let e = r.unwrap_err().to_string();
        assert!(e.contains("not aligned to the watched length 8"), "{e}");
        let hidden = KALLSYMS.replace("ffffffff82a01238", "0000000000000000");
        let (r, _) = run(vec![watch("a", "pid_max", 1, false)], &hidden);
        assert!(r.unwrap_err().to_string().contains("kptr_restrict"));
        // No symbolic watchpoint: nothing read, nothing changed.
        let (r, _) = run(Vec::new(), "");
        assert!(r.unwrap().is_none());
    }
}
