//! The `runok-output` corpus (`../shared/corpus/stp-testsuite/runok-output`,
//! see its MANIFEST.md): SystemTap scripts with the output stap prints.
//! Each script is compiled, then run in user space on the C core
//! (`vm_testkit::host::HostSession`, the code stapvm.ko runs): begin probes,
//! then, unless a handler called `exit()`, timer probes in period order for
//! a bounded simulated time, then end probes. Which output is expected and
//! how it is compared (line by line, hex dump, multiset for an unsorted
//! `foreach`) is `tests/src/runok.rs`, shared with the guest driver
//! (`runok-cases`, which runs the same scripts through stapvm.ko).
//!
//! Prints `runok-output: N passed, M failed` and the reason of each
//! failure; any failure (or panic) fails the test.
//! `RUNOK_VERBOSE=1 cargo test -p compiler --test runok -- --nocapture`
//! also prints the diff of each output mismatch; `RUNOK_ONLY=maps/exists`
//! runs the cases whose name contains that text.
#[path = "../../tests/src/runok.rs"]
#[allow(dead_code)]
mod corpus;

mod common;

use common::RunOptions;
use compiler::{compile, Options};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Simulated time for timer probes.
const TIMER_BUDGET_NS: u64 = 10_000_000_000;
/// Timer handler runs, at most.
const TIMER_RUNS: usize = 10_000;

/// Compiles and runs one script; Ok(output) or Err(reason).
fn run_script(src: &str, defines: &[(String, String)]) -> Result<Vec<u8>, String> {
    let opts = RunOptions {
        compile: Options {
            defines: defines.to_vec(),
            args: Vec::new(),
        },
        timers: TIMER_RUNS,
        timer_ns: TIMER_BUDGET_NS,
        ..Default::default()
    };
    let compiled = compile("-", src, &opts.compile).map_err(|f| {
        let first = common::first_error_line(&f.rendered).unwrap_or("compile error");
        format!("compile: {first}")
    })?;
    let r = common::run_program(&compiled.program, &opts).map_err(|e| format!("load: {e}"))?;
    if let Some(e) = r.errors.first() {
        return Err(format!("run-time error: {e}"));
    }
    // Arrays written and never read, as the CLI prints them at exit.
    let mut out = r.session.output();
    out.extend_from_slice(common::arrays_at_exit(&r.program, &r.session).as_bytes());
    Ok(out)
}

#[test]
fn runok_output_corpus() {
    let root = corpus::root();
    let cases = corpus::cases(&root);
    if cases.is_empty() {
        eprintln!("runok-output: {} not found, skipped", root.display());
        return;
    }
    let verbose = std::env::var_os("RUNOK_VERBOSE").is_some();
    let only = std::env::var("RUNOK_ONLY").unwrap_or_default();
    let (mut pass, mut fail) = (0, 0);
    let mut reasons = Vec::new();
    for case in cases.iter().filter(|c| c.name.contains(&only)) {
        let name = &case.name;
        if case.runs.is_empty() {
            fail += 1;
            reasons.push(format!("{name}: no expected output"));
            continue;
        }
        let src = std::fs::read_to_string(&case.script).unwrap_or_default();
        let mut why = None;
        for run in &case.runs {
            let got = catch_unwind(AssertUnwindSafe(|| run_script(&src, &run.defines)));
            let Ok(got) = got else {
                panic!("{name}: panicked")
            };
            let verdict = got.and_then(|out| {
                corpus::compare(run, case.multiset, &out).map_err(|d| {
                    if verbose {
                        let shown = match run.mode {
                            corpus::Mode::Binary => corpus::hex_lines(&out),
                            corpus::Mode::Lines => String::from_utf8_lossy(&out).into_owned(),
                        };
                        eprintln!("--- {name} expected\n{}\n--- got\n{shown}", run.text);
                    }
                    format!("output differs: {d}")
                })
            });
            if let Err(e) = verdict {
                why = Some(e);
                break;
            }
        }
        match why {
            None => pass += 1,
            Some(w) => {
                fail += 1;
                reasons.push(format!("{name}: {w}"));
            }
        }
    }
    eprintln!("runok-output: {pass} passed, {fail} failed");
    for r in &reasons {
        eprintln!("  {r}");
    }
    assert_eq!(fail, 0, "runok-output cases failed: {reasons:?}");
}
