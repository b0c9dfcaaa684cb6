//! Load-time symbols of absolute statement probes
//! (`kernel.statement(ADDR).absolute`, `kprobe.statement(ADDR).absolute`):
//! the text symbol of the running kernel that holds the address (the
//! nearest one at or below it in `/proc/kallsyms`, `m:f` for a module's)
//! plus the offset, which is what a kprobe takes. The kernel's kprobe
//! checks then refuse an address inside the kprobe blacklist or not on an
//! instruction boundary (EINVAL / EILSEQ at load).
use crate::kallsyms::{Line, KALLSYMS_PATH};
use std::io::BufRead;
use thiserror::Error;
use vm_spec::program::{ProbeTarget, Program, TargetSite};

/// Why an absolute address cannot be probed.
#[derive(Debug, Error)]
pub enum Error {
    /// /proc/kallsyms could not be read.
    #[error("cannot read {KALLSYMS_PATH}: {0}")]
    Kallsyms(std::io::Error),
    /// No text symbol holds the address.
    #[error("probe point '{display}' cannot be resolved: no kernel function holds address {address:#x} (not in the text of {KALLSYMS_PATH}, or kernel.kptr_restrict hides the addresses: run as root)")]
    NoSymbol {
        /// The probe point as written.
        display: String,
        /// The address.
        address: u64,
    },
    /// The handler reads target variables, which need DWARF here.
    #[error("probe point '{display}': target variables are not available in an absolute statement probe (nothing says where they are at an address without the kernel's DWARF); use register() or the *_arg() functions")]
    TargetVars {
        /// The probe point as written.
        display: String,
    },
}

/// The text symbols of kallsyms text (`ADDR TYPE NAME [MODULE]`), sorted
/// by address: (address, `name` or `module:name`). Zero addresses
/// (hidden by kptr_restrict) are left out.
pub fn text_symbols(mut text: impl BufRead) -> std::io::Result<Vec<(u64, String)>> {
    let mut out = Vec::new();
    let mut line = Vec::with_capacity(256);
    loop {
        line.clear();
        if text.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let Some(l) = Line::parse(&line) else {
            continue;
        };
        if !matches!(l.ty, b"t" | b"T") {
            continue;
        }
        let text_of = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let Some(a) = std::str::from_utf8(l.addr)
            .ok()
            .and_then(|a| u64::from_str_radix(a, 16).ok())
            .filter(|a| *a != 0)
        else {
            continue;
        };
        let name = text_of(l.name);
        let module = l
            .module
            .and_then(|m| m.strip_prefix(b"["))
            .and_then(|m| m.strip_suffix(b"]"));
        out.push((
            a,
            match module {
                Some(m) => format!("{}:{name}", text_of(m)),
                None => name,
            },
        ));
    }
    out.sort();
    Ok(out)
}

/// The farthest an address may be from the symbol below it: kallsyms has
/// no sizes, and no kernel function is a MiB long, so an address farther
/// away is in no function (a gap, data, another region).
pub const MAX_OFFSET: u64 = 1 << 20;

/// The symbol and offset holding `address` among `syms` (sorted): the
/// last symbol at or below it, at most [`MAX_OFFSET`] bytes below.
pub fn holder(syms: &[(u64, String)], address: u64) -> Option<(String, u32)> {
    let i = syms
        .partition_point(|(a, _)| *a <= address)
        .checked_sub(1)?;
    let (a, name) = &syms[i];
    let off = address - a;
    (off < MAX_OFFSET).then(|| (name.clone(), off as u32))
}

/// Whether handler `h` reads target variables of its probe point
/// (parameters, `$return`): those need DWARF locations where a probe is
/// placed at an address or a line; `@cast` and `@var` do not.
pub fn reads_probe_vars(prog: &Program, h: u32) -> bool {
    prog.target_vars
        .iter()
        .any(|tv| tv.handler == h && !matches!(tv.site, TargetSite::Cast(_) | TargetSite::Var(_)))
}

/// The program with every absolute statement probe's target made the
/// symbol + offset holding its address, reading the symbols with `read`;
/// `None` when the program has none.
pub fn resolve_addresses(
    prog: &Program,
    read: impl FnOnce() -> std::io::Result<Vec<(u64, String)>>,
) -> Result<Option<Program>, Error> {
    if !prog
        .probes
        .iter()
        .any(|p| matches!(p.target, ProbeTarget::Address(_)))
    {
        return Ok(None);
    }
    let syms = read().map_err(Error::Kallsyms)?;
    let mut out = prog.clone();
    for p in &mut out.probes {
        let ProbeTarget::Address(address) = p.target else {
            continue;
        };
        if reads_probe_vars(prog, p.handler) {
            return Err(Error::TargetVars {
                display: p.display.clone(),
            });
        }
        let (name, offset) = holder(&syms, address).ok_or_else(|| Error::NoSymbol {
            display: p.display.clone(),
            address,
        })?;
        p.target = ProbeTarget::Symbol { name, offset };
    }
    Ok(Some(out))
}

/// [`resolve_addresses`] on the running kernel's `/proc/kallsyms`.
pub fn resolve_running(prog: &Program) -> Result<Option<Program>, Error> {
    resolve_addresses(prog, || {
        let f = std::fs::File::open(KALLSYMS_PATH)?;
        text_symbols(std::io::BufReader::new(f))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KALLSYMS: &str = "\
ffffffff81000000 T _stext
ffffffff81000100 t do_one
ffffffff81000200 D some_data
ffffffff81000300 T do_two
ffffffffc0001000 t ext4_file_open\t[ext4]
";

    #[test]
    fn addresses_become_the_holding_symbol_and_offset() {
        let syms = text_symbols(KALLSYMS.as_bytes()).unwrap();
        assert_eq!(
            holder(&syms, 0xffffffff81000104),
            Some(("do_one".into(), 4))
        );
        // Data symbols do not count: still do_one's text.
        assert_eq!(
            holder(&syms, 0xffffffff81000204),
            Some(("do_one".into(), 0x104))
        );
        assert_eq!(
            holder(&syms, 0xffffffff81000300),
            Some(("do_two".into(), 0))
        );
        assert_eq!(
            holder(&syms, 0xffffffffc0001010),
            Some(("ext4:ext4_file_open".into(), 0x10))
        );
        assert_eq!(holder(&syms, 0x1000), None);
        // A MiB or more past the last symbol: no holder.
        assert_eq!(holder(&syms, 0xffffffffffff0000), None);
    }

    #[test]
    fn programs_get_symbols_or_a_reason() {
        let c = compiler::compile(
            "x.stp",
            "probe kernel.statement(0xffffffff81000104).absolute { }",
            &compiler::Options::default(),
        )
        .unwrap();
        let read = || text_symbols(KALLSYMS.as_bytes());
        let p = resolve_addresses(&c.program, read).unwrap().unwrap();
        assert_eq!(
            p.probes[0].target,
            ProbeTarget::Symbol {
                name: "do_one".into(),
                offset: 4
            }
        );
        let c = compiler::compile(
            "x.stp",
            "probe kernel.statement(0x1000).absolute { }",
            &compiler::Options::default(),
        )
        .unwrap();
        let e = resolve_addresses(&c.program, read).unwrap_err().to_string();
        assert!(e.contains("no kernel function holds address 0x1000"), "{e}");
    }
}
