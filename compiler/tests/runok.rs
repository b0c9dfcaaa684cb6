//! The `runok-output` corpus (`/work/shared/corpus/stp-testsuite/runok-output`,
//! see its MANIFEST.md): SystemTap scripts with the output stap prints.
//! Each script is compiled, then run in user space on the C core
//! (`vm_spec::core::HostSession`, the code stapvm.ko runs): begin probes,
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

use compiler::{compile, Options};
use std::panic::{catch_unwind, AssertUnwindSafe};
use vm_spec::abi;
use vm_spec::core::{HostEnv, HostSession};

/// Simulated time for timer probes.
const TIMER_BUDGET_NS: u64 = 10_000_000_000;
/// Timer handler runs, at most.
const TIMER_RUNS: usize = 10_000;

/// Compiles and runs one script; Ok(output) or Err(reason).
fn run_script(src: &str, defines: &[(String, String)]) -> Result<Vec<u8>, String> {
    let opts = Options {
        defines: defines.to_vec(),
        args: Vec::new(),
    };
    let compiled = compile("-", src, &opts).map_err(|f| {
        let first = f
            .rendered
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or("compile error")
            .to_string();
        format!("compile: {first}")
    })?;
    let prog = compiled.program;
    let mut s = HostSession::from_program(&prog).map_err(|e| format!("load: {e}"))?;
    let env = HostEnv::default();
    let mut errors = Vec::new();
    errors.extend(s.run_probes_of_kind(abi::STP_PROBE_BEGIN, &env));
    // Timers: fire each in period order until exit() or the budget.
    let mut timers: Vec<(u64, u64, u32)> = prog
        .probes
        .iter()
        .filter(|p| u32::from(p.kind) == abi::STP_PROBE_TIMER)
        .map(|p| (p.period_ns, p.period_ns, p.handler))
        .collect();
    let mut runs = 0;
    while !s.exit_requested() && !timers.is_empty() && runs < TIMER_RUNS {
        timers.sort_by_key(|t| t.0);
        let (due, period, h) = timers[0];
        if due > TIMER_BUDGET_NS {
            break;
        }
        if let Err(e) = s.run_handler(h, &env) {
            errors.push(e);
        }
        timers[0].0 = due + period;
        runs += 1;
    }
    errors.extend(s.run_probes_of_kind(abi::STP_PROBE_END, &env));
    let mut out = s.output();
    // Arrays written and never read, as the CLI prints them at exit.
    if errors.is_empty() {
        for (i, m) in prog.maps.iter().enumerate() {
            if let (true, Some(e)) = (m.print_at_exit, s.map_entries(i, m)) {
                out.extend_from_slice(vm_spec::maps::exit_text(m, &e).as_bytes());
            }
        }
    }
    if let Some(e) = errors.first() {
        return Err(format!("run-time error: {}", e.message));
    }
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
