//! User-space symbol tables for `ubacktrace()`, `usymname()`,
//! `print_ubacktrace()` & co (helpers.h: UBACKTRACE, USYMNAME ..
//! UMODNAME; abi.h: user-space symbol tables): stap's `-d` data, built by
//! the loader. When the program's code calls one of those helpers, the
//! loader reads the ELF symbols (`ubinary::Binary::symbol_table`) of the
//! binaries of its `process("PATH")` probes, of the `-c` command's program
//! (or the `-x` process's executable), of each `-d PATH`, and with
//! `--ldd` of the shared libraries all of those need, and puts them in
//! `Program::usyms`, which `image::build` lays out.
use crate::ubinary::{find_program, Binary, BinaryError};
use std::path::PathBuf;
use thiserror::Error;
use vm_spec::abi;
use vm_spec::program::{ProbeTarget, Program, UserSymbols};

/// Why the symbol tables cannot be built.
#[derive(Debug, Error)]
pub enum Error {
    /// A `-d PATH` binary is missing or not ELF.
    #[error("-d {path}: {why}")]
    Binary {
        /// The path as given.
        path: String,
        /// Why.
        why: Box<BinaryError>,
    },
}

/// Bytes of symbol tables an image may carry: the image's cap less room
/// for the program itself.
const USYM_BUDGET: usize = (abi::STP_MAX_IMAGE_SIZE as usize) * 3 / 4;

/// Whether any handler calls a helper that reads the user symbol tables.
pub fn uses_user_symbols(prog: &Program) -> bool {
    const IDS: [u32; 7] = [
        abi::STP_HLP_UBACKTRACE,
        abi::STP_HLP_USYMNAME,
        abi::STP_HLP_USYMDATA,
        abi::STP_HLP_USYMFULL,
        abi::STP_HLP_USYMBRIEF,
        abi::STP_HLP_USYMSIMPLE,
        abi::STP_HLP_UMODNAME,
    ];
    prog.handlers.iter().flat_map(|h| &h.code).any(|i| {
        u32::from(i.op) == abi::STP_OP_CALLS && u32::try_from(i.imm).is_ok_and(|h| IDS.contains(&h))
    })
}

/// The binaries whose symbols `prog` gets, canonical, without repeats:
/// its uprobes' (already placed: `ProbeTarget::User` holds the canonical
/// path), `target_exe`'s, each of `Program::usym_paths` (found as a
/// `process("PATH")` is), then with `Program::usym_ldd` the libraries of
/// all of those.
pub fn binaries(prog: &Program, target_exe: Option<&str>) -> Result<Vec<PathBuf>, Error> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut add = |p: PathBuf| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    for p in &prog.probes {
        if let ProbeTarget::User { path, .. } = &p.target {
            if p.is_uprobe() && path.starts_with('/') {
                add(PathBuf::from(path));
            }
        }
    }
    if let Some(e) = target_exe {
        if let Ok(p) = std::fs::canonicalize(e) {
            add(p);
        }
    }
    for d in &prog.usym_paths {
        let p = find_program(d).map_err(|why| Error::Binary {
            path: d.clone(),
            why: Box::new(why),
        })?;
        Binary::open(&p).map_err(|why| Error::Binary {
            path: d.clone(),
            why: Box::new(why),
        })?;
        add(p);
    }
    if prog.usym_ldd {
        let mut i = 0;
        // Libraries of libraries too; each binary once.
        while i < out.len() && out.len() < abi::STP_MAX_USYM_BINS as usize {
            if let Ok(b) = Binary::open(&out[i]) {
                for lib in b.needed() {
                    if !out.contains(&lib) {
                        out.push(lib);
                    }
                }
            }
            i += 1;
        }
    }
    out.truncate(abi::STP_MAX_USYM_BINS as usize);
    Ok(out)
}

/// The symbol tables of `paths` (unreadable or symbol-less binaries
/// left out), within the image's budget; one warning per binary left out
/// for size.
pub fn tables(paths: &[PathBuf]) -> (Vec<UserSymbols>, Vec<String>) {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let (mut bytes, mut count) = (0usize, 0usize);
    for p in paths {
        let Ok(symbols) = Binary::open(p).and_then(|b| b.symbol_table()) else {
            continue;
        };
        if symbols.is_empty() {
            continue;
        }
        let size: usize = symbols
            .iter()
            .map(|(_, n)| 24 + n.len().min(abi::STP_MAX_USYM_NAME as usize))
            .sum();
        if bytes + size > USYM_BUDGET || count + symbols.len() > abi::STP_MAX_USYMS as usize {
            warnings.push(format!(
                "the symbols of {} are left out: {} symbols would make the program image too large",
                p.display(),
                symbols.len()
            ));
            continue;
        }
        bytes += size;
        count += symbols.len();
        out.push(UserSymbols {
            path: p.to_string_lossy().into_owned(),
            symbols,
        });
    }
    (out, warnings)
}

/// Fills `prog.usyms` when its code needs them (see the module comment);
/// returns the warnings to print.
pub fn attach(prog: &mut Program, target_exe: Option<&str>) -> Result<Vec<String>, Error> {
    if !uses_user_symbols(prog) {
        return Ok(Vec::new());
    }
    let paths = binaries(prog, target_exe)?;
    let (usyms, warnings) = tables(&paths);
    prog.usyms = usyms;
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// A C program built with gcc -O2 (frames kept) in a fresh directory.
    fn build_c(tag: &str, source: &str, extra: &[&str]) -> PathBuf {
        let mut flags = vec!["-O2", "-fno-omit-frame-pointer"];
        flags.extend(extra);
        crate::testc::build_c(&format!("ustack-{tag}"), "p", source, &flags)
    }

    const CHAIN: &str = "__attribute__((noinline)) int us_c(int x) { return x * 3; }\n\
        __attribute__((noinline)) int us_b(int x) { return us_c(x) + 1; }\n\
        __attribute__((noinline)) int us_a(int x) { return us_b(x) + 2; }\n\
        int us_data = 7;\n\
        int main(int c, char **v) { (void)v; return us_a(c) + us_data; }\n";

    #[test]
    fn symbol_tables_hold_functions_and_data_at_their_file_offsets() {
        let bin = build_c("tab", CHAIN, &[]);
        let b = Binary::open(&bin).unwrap();
        let t = b.symbol_table().unwrap();
        // Sorted by strictly increasing offset.
        assert!(t.windows(2).all(|w| w[0].0 < w[1].0), "{t:?}");
        let find = |n: &str| t.iter().find(|(_, s)| s == n).map(|x| x.0);
        // Each function at the file offset of its entry (what uprobes take).
        for f in b.functions("us_*").unwrap() {
            assert_eq!(find(&f.name), Some(f.offset), "{}", f.name);
        }
        assert!(find("main").is_some());
        // Data objects in the file (an initialized global) are there too,
        // at the offset of the address's segment bytes.
        let nm = Command::new("nm").arg(&bin).output().unwrap();
        let addr = String::from_utf8_lossy(&nm.stdout)
            .lines()
            .find(|l| l.ends_with(" us_data"))
            .and_then(|l| u64::from_str_radix(l.split_whitespace().next()?, 16).ok())
            .unwrap();
        assert_eq!(find("us_data"), Some(b.data_offset_of(addr).unwrap()));
        std::fs::remove_dir_all(bin.parent().unwrap()).unwrap();
    }

    #[test]
    fn binaries_are_the_probed_ones_the_target_and_d_paths_with_ldd_libraries() {
        let bin = build_c("bins", CHAIN, &[]);
        let mut prog = Program::default();
        let sh = find_program("sh").unwrap();
        prog.usym_paths = vec![bin.to_string_lossy().into_owned()];
        let got = binaries(&prog, Some(sh.to_str().unwrap())).unwrap();
        assert_eq!(got, vec![sh.clone(), bin.clone()]);
        // --ldd: the dynamic program's libc comes with it.
        prog.usym_ldd = true;
        let got = binaries(&prog, None).unwrap();
        assert_eq!(got[0], bin);
        assert!(
            got.iter().any(|p| p
                .file_name()
                .is_some_and(|f| f.to_string_lossy().starts_with("libc.so"))),
            "{got:?}"
        );
        // A -d PATH that does not exist is an error naming it.
        prog.usym_paths = vec!["/nonexistent/bin".into()];
        let e = binaries(&prog, None).unwrap_err().to_string();
        assert!(e.starts_with("-d /nonexistent/bin: no program"), "{e}");
        std::fs::remove_dir_all(bin.parent().unwrap()).unwrap();
    }

    #[test]
    fn only_programs_calling_the_helpers_get_tables_and_the_image_carries_them() {
        let bin = build_c("img", CHAIN, &[]);
        let src = format!(
            "probe process(\"{}\").function(\"us_c\") {{ print_ubacktrace() }}",
            bin.display()
        );
        let c = compiler::compile("t.stp", &src, &compiler::Options::default()).unwrap();
        let mut prog = c.program;
        assert!(uses_user_symbols(&prog));
        let placed = crate::uprobes::place(&prog).unwrap().unwrap().0;
        prog = placed;
        assert!(attach(&mut prog, None).unwrap().is_empty());
        assert_eq!(prog.usyms.len(), 1);
        assert_eq!(prog.usyms[0].path, bin.to_string_lossy());
        assert!(prog.usyms[0].symbols.iter().any(|(_, n)| n == "us_b"));
        // The module's verifier (built for user space) takes the tables.
        let img = vm_spec::image::build_stand_in(&prog, vm_spec::image::StandIns::Named).unwrap();
        vm_spec::core::verify_image(&img).unwrap();
        // A program without those helpers gets none.
        let c = compiler::compile(
            "t.stp",
            &format!(
                "probe process(\"{}\").function(\"us_c\") {{ println(uaddr()) }}",
                bin.display()
            ),
            &compiler::Options::default(),
        )
        .unwrap();
        let mut plain = crate::uprobes::place(&c.program).unwrap().unwrap().0;
        assert!(!uses_user_symbols(&plain));
        attach(&mut plain, None).unwrap();
        assert!(plain.usyms.is_empty());
        // The verifier refuses tables out of order and relative paths.
        let mut bad = prog.clone();
        bad.usyms[0].symbols.swap(0, 1);
        let img = vm_spec::image::build_stand_in(&bad, vm_spec::image::StandIns::Named).unwrap();
        let e = vm_spec::core::verify_image(&img).unwrap_err();
        assert_eq!(e.code, abi::STP_VERR_BAD_USYM, "{}", e.message);
        assert!(
            e.message.contains("symbol 1 is not after symbol 0"),
            "{}",
            e.message
        );
        let mut bad = prog.clone();
        bad.usyms[0].path = "relative/p".into();
        let img = vm_spec::image::build_stand_in(&bad, vm_spec::image::StandIns::Named).unwrap();
        let e = vm_spec::core::verify_image(&img).unwrap_err();
        assert!(e.message.contains("path is not absolute"), "{}", e.message);
        std::fs::remove_dir_all(bin.parent().unwrap()).unwrap();
    }
}
