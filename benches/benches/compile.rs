//! Compile-time bench: `compiler::compile` (parse, resolve, types, lower,
//! verify: everything `stapvm compile` does except reading and writing
//! files) on every corpus script that compiles: ../shared/corpus/seeds,
//! stp-examples, every .stp of stp-testsuite (parseok, runok-output ...;
//! the parseko and semko files are refused by design) and
//! tests/cases/*/script.stp (with the case's compile-args -D values).
//! Scripts that do not compile are counted (and, outside stp-testsuite,
//! listed), not timed. Prints each script's median CPU time per compile
//! (process CPU clock: what to compare on a loaded, shared machine), its
//! median and slowest wall time, then the slowest scripts and the max over
//! all scripts. Also times the load-time work on the compiled program:
//! image build + the C verifier.
//!
//! Target (design brief §6): compile <= 20 ms per script.
//!
//! `cargo bench -p stapvm-benches --bench compile`; the corpus is
//! `vm_testkit::paths::corpus_dir()`: ../shared/corpus from the workspace
//! root, or $STAPVM_SHARED/corpus.
use stapvm_benches::{cpu_ms, image_of, median, quick, selected};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The allocator `stapvm` uses (userspace/src/main.rs), so the times are the
/// CLI's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Script {
    name: String,
    path: PathBuf,
    defines: Vec<(String, String)>,
}

fn stp_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "stp"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn defines_of(args_file: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(args_file).unwrap_or_default();
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let d = if words[i] == "-D" {
            i += 1;
            words.get(i).copied()
        } else {
            words[i].strip_prefix("-D")
        };
        if let Some((k, v)) = d.and_then(|d| d.split_once('=')) {
            out.push((k.to_owned(), v.to_owned()));
        }
        i += 1;
    }
    out
}

/// The .stp files under `dir` and its subdirectories, sorted.
fn stp_files_deep(dir: &Path) -> Vec<PathBuf> {
    let mut v = stp_files(dir);
    let mut subs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    subs.sort();
    for d in subs {
        v.extend(stp_files_deep(&d));
    }
    v
}

fn scripts() -> Vec<Script> {
    let corpus = vm_testkit::paths::corpus_dir();
    let mut out = Vec::new();
    for sub in ["seeds", "stp-examples", "stp-testsuite"] {
        let root = corpus.join(sub);
        for p in stp_files_deep(&root) {
            out.push(Script {
                name: format!(
                    "{sub}/{}",
                    p.strip_prefix(&root).unwrap_or(&p).to_string_lossy()
                ),
                path: p,
                defines: Vec::new(),
            });
        }
    }
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/cases");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&cases)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    dirs.sort();
    for d in dirs {
        let p = d.join("script.stp");
        if p.is_file() {
            out.push(Script {
                name: format!(
                    "cases/{}",
                    d.file_name().unwrap_or_default().to_string_lossy()
                ),
                defines: defines_of(&d.join("compile-args")),
                path: p,
            });
        }
    }
    out
}

fn main() {
    let budget = if quick() {
        Duration::ZERO
    } else {
        Duration::from_millis(150)
    };
    println!("compile: compiler::compile per script (median of repeated runs, 1 thread)");
    println!(
        "{:<44} {:>7} {:>7} {:>10} {:>10} {:>10} {:>12}",
        "script", "bytes", "insns", "cpu ms", "wall ms", "wall max", "img+verify"
    );
    let (mut timed, mut over, mut refused) = (Vec::new(), Vec::new(), Vec::new());
    let mut per_cpu: Vec<(f64, String)> = Vec::new();
    let mut worst_med = (0.0f64, String::new());
    let mut slowest = (0.0f64, String::new());
    for s in scripts() {
        if !selected(&s.name) {
            continue;
        }
        let Ok(src) = std::fs::read_to_string(&s.path) else {
            continue;
        };
        let opts = compiler::Options {
            defines: s.defines.clone(),
            ..Default::default()
        };
        let prog = match compiler::compile(&s.name, &src, &opts) {
            Ok(c) => c.program,
            Err(e) => {
                let first = e
                    .rendered
                    .lines()
                    .find(|l| l.contains("error"))
                    .or_else(|| e.rendered.lines().next())
                    .unwrap_or("")
                    .to_owned();
                refused.push((s.name, first));
                continue;
            }
        };
        let (mut samples, mut cpu) = (Vec::new(), Vec::new());
        let start = Instant::now();
        while samples.len() < 3 || (start.elapsed() < budget && samples.len() < 200) {
            let (t, c) = (Instant::now(), cpu_ms());
            let r = compiler::compile(&s.name, &src, &opts);
            samples.push(t.elapsed().as_secs_f64() * 1e3);
            cpu.push(cpu_ms() - c);
            assert!(r.is_ok());
        }
        let max = samples.iter().copied().fold(0.0, f64::max);
        let med = median(&mut samples);
        let cpu_med = median(&mut cpu);
        if max > slowest.0 {
            slowest = (max, s.name.clone());
        }
        let mut vsamples = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            let img = image_of(&prog);
            let ok = vm_spec::core::verify_image(&img).is_ok();
            vsamples.push(t.elapsed().as_secs_f64() * 1e6);
            assert!(ok, "{}: the verifier refused the compiled image", s.name);
        }
        let insns: usize = prog.handlers.iter().map(|h| h.code.len()).sum();
        println!(
            "{:<44} {:>7} {:>7} {:>10.3} {:>10.3} {:>10.3} {:>9.0} us",
            s.name,
            src.len(),
            insns,
            cpu_med,
            med,
            max,
            median(&mut vsamples)
        );
        if cpu_med > 20.0 {
            over.push(s.name.clone());
        }
        if med > worst_med.0 {
            worst_med = (med, s.name.clone());
        }
        timed.push(cpu_med);
        per_cpu.push((cpu_med, s.name.clone()));
    }
    per_cpu.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!("\nslowest by CPU time (ms per compile):");
    for (ms, name) in per_cpu.iter().take(10) {
        println!("  {ms:>8.3}  {name}");
    }
    let worst = timed.iter().copied().fold(0.0, f64::max);
    let mut all = timed.clone();
    println!(
        "\n{} scripts compiled: CPU time median {:.3} ms, max {:.3} ms; {} over the 20 ms target{}",
        timed.len(),
        median(&mut all),
        worst,
        over.len(),
        if over.is_empty() {
            String::new()
        } else {
            format!(" ({})", over.join(", "))
        }
    );
    println!(
        "wall time: max median {:.3} ms ({}), slowest single run {:.3} ms ({})",
        worst_med.0, worst_med.1, slowest.0, slowest.1
    );
    let suite = refused
        .iter()
        .filter(|(n, _)| n.starts_with("stp-testsuite/"))
        .count();
    println!(
        "{} scripts not compiled (not timed), {suite} of them in stp-testsuite (parseko/semko \
         are meant to fail):",
        refused.len()
    );
    for (n, why) in refused
        .iter()
        .filter(|(n, _)| !n.starts_with("stp-testsuite/"))
    {
        println!("  {n}: {}", why.chars().take(110).collect::<String>());
    }
}
