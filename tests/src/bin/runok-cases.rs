//! runok-cases: the `runok-output` corpus as QEMU guest cases, so the
//! kernel VM runs the same scripts `compiler/tests/runok.rs` runs in user
//! space, in the same boot as the other guest cases, and is judged by the
//! same rules (`stapvm_tests::runok`).
//!
//! usage:
//!   runok-cases gen OUTDIR        writes one case directory per corpus
//!                                 script and distinct `-D` set
//!                                 (OUTDIR/runok-DIR-STEM[-N]/): script.stp,
//!                                 compile-args, self-exit, out-hex and
//!                                 compare; prints their names
//!   runok-cases compare CASE RUN OUT
//!                                 compares OUT (the guest's hex dump of
//!                                 stapvm's standard output) with run RUN
//!                                 of corpus case CASE; exit 0 when it
//!                                 matches, else 1 with the difference
//!
//! The corpus is `stapvm_tests::runok::root()` (STAPVM_SHARED);
//! without it `gen` writes nothing. tests/guest/run calls both.
use std::fs;
use std::path::Path;
use std::process::ExitCode;

use stapvm_tests::runok::{cases, compare, root, Case};

/// The guest case name of run `k` of `case`: `runok-maps-exists`.
fn case_name(case: &Case, k: usize) -> String {
    let base = format!("runok-{}", case.name.replace(['/', '_'], "-"));
    match k {
        0 => base,
        k => format!("{base}-{k}"),
    }
}

fn gen(out: &Path) -> std::io::Result<()> {
    let me = std::env::current_exe()?;
    fs::create_dir_all(out)?;
    for case in cases(&root()) {
        // Runs that differ only in the expected text of another runtime
        // compile the same; one guest case per distinct -D set.
        let mut seen: Vec<&Vec<(String, String)>> = Vec::new();
        for (k, run) in case.runs.iter().enumerate() {
            if seen.contains(&&run.defines) {
                continue;
            }
            seen.push(&run.defines);
            let name = case_name(&case, seen.len() - 1);
            let dir = out.join(&name);
            fs::create_dir_all(&dir)?;
            fs::copy(&case.script, dir.join("script.stp"))?;
            let args: Vec<String> = run
                .defines
                .iter()
                .map(|(n, v)| format!("-D {n}={v}"))
                .collect();
            fs::write(dir.join("compile-args"), args.join(" ") + "\n")?;
            fs::write(dir.join("self-exit"), "")?;
            fs::write(dir.join("out-hex"), "")?;
            fs::write(
                dir.join("compare"),
                format!("{} compare {} {k}\n", me.display(), case.name),
            )?;
            println!("{name}");
        }
    }
    Ok(())
}

/// The bytes of an `od -An -tx1` dump.
fn unhex(text: &str) -> Option<Vec<u8>> {
    text.split_whitespace()
        .map(|w| u8::from_str_radix(w, 16).ok())
        .collect()
}

fn compare_cmd(name: &str, run: &str, out: &Path) -> Result<(), String> {
    let all = cases(&root());
    let case = all
        .iter()
        .find(|c| c.name == name)
        .ok_or_else(|| format!("no corpus case {name}"))?;
    let run = run
        .parse::<usize>()
        .ok()
        .and_then(|k| case.runs.get(k))
        .ok_or_else(|| format!("{name}: no run {run}"))?;
    let dump = fs::read_to_string(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let bytes = unhex(&dump).ok_or("the guest's output is not a hex dump")?;
    compare(run, case.multiset, &bytes).map_err(|d| {
        format!(
            "{name}: {d}\n--- got\n{}",
            String::from_utf8_lossy(&bytes)
                .lines()
                .take(30)
                .collect::<Vec<_>>()
                .join("\n")
        )
    })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    match argv.as_slice() {
        ["gen", out] => match gen(Path::new(out)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("runok-cases: {out}: {e}");
                ExitCode::FAILURE
            }
        },
        ["compare", name, run, out] => match compare_cmd(name, run, Path::new(out)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                println!("{e}");
                ExitCode::FAILURE
            }
        },
        _ => {
            eprintln!("usage: runok-cases gen OUTDIR | compare CASE RUN OUTFILE");
            ExitCode::from(2)
        }
    }
}
