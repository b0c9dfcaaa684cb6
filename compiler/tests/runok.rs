//! The `runok-output` corpus (`/work/shared/corpus/stp-testsuite/runok-output`,
//! see its MANIFEST.md): SystemTap scripts with the output stap prints.
//! Each script is compiled, then run in user space on the C core
//! (`vm_spec::core::HostSession`, the code stapvm.ko runs): begin probes,
//! then, unless a handler called `exit()`, timer probes in period order for
//! a bounded simulated time, then end probes. The output is compared with
//! the `.exp` file's `::result_string`, line by line as `stap_run2` does.
//!
//! Prints `runok-output: N passed, M failed` and the reason of each
//! failure. Failures do not fail the test yet (most are features not
//! supported yet); a panic does.
//! `RUNOK_VERBOSE=1 cargo test -p compiler --test runok -- --nocapture`
//! also prints the diff of each output mismatch.
use compiler::{compile, Options};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use vm_spec::abi;
use vm_spec::core::{HostEnv, HostSession};

const ROOT: &str = "/work/shared/corpus/stp-testsuite/runok-output";
/// Simulated time for timer probes.
const TIMER_BUDGET_NS: u64 = 10_000_000_000;
/// Timer handler runs, at most.
const TIMER_RUNS: usize = 10_000;

/// The expected output and the `-D` options of one `.exp` file.
struct Expect {
    text: String,
    /// `stap_run_binary`: the expected text is a hex dump of the output.
    binary: bool,
    defines: Vec<(String, String)>,
}

/// `set ::result_string {...}` (braces balanced) or `"..."` (Tcl quoting:
/// `\"` and `\\` unescaped) and `-DNAME=V` words of the `stap_run*` line.
fn parse_exp(exp: &str) -> Option<Expect> {
    let start = exp.find("::result_string")? + "::result_string".len();
    let binary = exp.contains("stap_run_binary");
    let defines = defines_of(exp);
    let rest = exp[start..].trim_start();
    if let Some(quoted) = rest.strip_prefix('"') {
        let mut text = String::new();
        let mut chars = quoted.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => {
                    return Some(Expect {
                        text,
                        binary,
                        defines,
                    })
                }
                '\\' => text.push(chars.next()?),
                c => text.push(c),
            }
        }
        return None;
    }
    let open = start + exp[start..].find('{')?;
    let mut depth = 0usize;
    let mut end = None;
    for (k, c) in exp[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(open + k);
                    break;
                }
            }
            _ => {}
        }
    }
    let text = exp[open + 1..end?].to_string();
    Some(Expect {
        text,
        binary,
        defines,
    })
}

/// The `-DNAME=V` words of the `stap_run*` lines.
fn defines_of(exp: &str) -> Vec<(String, String)> {
    exp.lines()
        .filter(|l| l.trim_start().starts_with("stap_run"))
        .flat_map(|l| l.split_whitespace())
        .filter_map(|w| w.strip_prefix("-D"))
        .filter_map(|d| {
            d.split_once('=')
                .map(|(n, v)| (n.to_string(), v.to_string()))
        })
        .collect()
}

/// The output as `stap_run_binary` compares it: hex bytes, eight to a
/// line, each line padded to 23 columns.
fn hex_lines(out: &[u8]) -> String {
    out.chunks(8)
        .map(|c| {
            let l = c.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>();
            format!("{:<23}", l.join(" "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `.exp` of a script: same stem, or the shared ones the manifest names.
fn exp_of(stp: &Path) -> Option<PathBuf> {
    let dir = stp.parent()?;
    let stem = stp.file_stem()?.to_str()?;
    let candidates = [
        stem.to_string(),
        stem.trim_end_matches(|c: char| c.is_ascii_digit())
            .to_string(),
        stem.split("_").take(2).collect::<Vec<_>>().join("_"),
        stem.replace("printdln", "printd"),
    ];
    candidates
        .iter()
        .map(|c| dir.join(format!("{c}.exp")))
        .find(|p| p.exists())
}

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

/// Compares as `stap_run2` does: line by line, trailing newlines ignored.
fn same(out: &str, want: &str) -> bool {
    let a: Vec<&str> = out.trim_end_matches('\n').lines().collect();
    let b: Vec<&str> = want.trim_end_matches('\n').lines().collect();
    a == b
}

#[test]
fn runok_output_corpus() {
    let Ok(dirs) = std::fs::read_dir(ROOT) else {
        eprintln!("runok-output: {ROOT} not found, skipped");
        return;
    };
    let verbose = std::env::var_os("RUNOK_VERBOSE").is_some();
    let mut scripts: Vec<PathBuf> = dirs
        .filter_map(|d| d.ok())
        .filter_map(|d| std::fs::read_dir(d.path()).ok())
        .flatten()
        .filter_map(|f| f.ok().map(|f| f.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "stp"))
        .collect();
    scripts.sort();
    let (mut pass, mut fail) = (0, 0);
    let mut reasons = Vec::new();
    for stp in &scripts {
        let name = stp.strip_prefix(ROOT).unwrap_or(stp).display().to_string();
        let Some(exp) = exp_of(stp)
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|e| parse_exp(&e))
        else {
            fail += 1;
            reasons.push(format!("{name}: no expected output"));
            continue;
        };
        let src = std::fs::read_to_string(stp).unwrap_or_default();
        let got = catch_unwind(AssertUnwindSafe(|| run_script(&src, &exp.defines)));
        let got = match got {
            Ok(g) => g,
            Err(_) => panic!("{name}: panicked"),
        };
        let got = got.map(|raw| match exp.binary {
            true => hex_lines(&raw),
            false => String::from_utf8_lossy(&raw).into_owned(),
        });
        match got {
            Ok(out) if same(&out, &exp.text) => pass += 1,
            Ok(out) => {
                fail += 1;
                reasons.push(format!("{name}: output differs"));
                if verbose {
                    eprintln!("--- {name} expected\n{}\n--- got\n{out}", exp.text);
                }
            }
            Err(why) => {
                fail += 1;
                reasons.push(format!("{name}: {why}"));
            }
        }
    }
    eprintln!("runok-output: {pass} passed, {fail} failed");
    for r in &reasons {
        eprintln!("  {r}");
    }
}
