//! The parse tree dump (`compiler::parse_tree`, stap's `-p1` output) is a
//! fixed point: for every corpus script that parses (`stp-examples`, and
//! `stp-testsuite/{parseok,buildok}`, see `corpus.rs`), the dump parses
//! again and dumps identically: print(parse(print(parse(x)))) ==
//! print(parse(x)). Scripts are parsed as written (default options; guru
//! mode when that is what makes them parse); shell wrappers and scripts
//! that need arguments simply do not parse and are skipped. Skips cleanly
//! when the corpus is absent.
use compiler::{parse_tree, Options, Target};
use std::path::PathBuf;

fn scripts() -> Vec<PathBuf> {
    let mut dirs = vec![vm_testkit::paths::corpus("stp-examples")];
    for d in ["parseok", "buildok"] {
        dirs.push(vm_testkit::paths::corpus("stp-testsuite").join(d));
    }
    let mut out = Vec::new();
    for d in dirs {
        if let Ok(rd) = std::fs::read_dir(&d) {
            out.extend(
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "stp")),
            );
        }
    }
    out.sort();
    out
}

/// The dump with the `# file` header line dropped (the name differs).
fn body(dump: &str) -> String {
    dump.lines()
        .filter(|l| !l.starts_with("# file "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_parsing_corpus_script_dumps_to_a_fixed_point() {
    let files = scripts();
    if files.is_empty() {
        eprintln!("corpus absent: nothing to round-trip");
        return;
    }
    let opts = Options::default();
    let plain = Target::default();
    let guru = Target {
        guru: true,
        ..Target::default()
    };
    let (mut tripped, mut failures) = (0, Vec::new());
    for f in &files {
        let Ok(bytes) = std::fs::read(f) else {
            continue;
        };
        let src = String::from_utf8_lossy(&bytes).into_owned();
        let name = f.display().to_string();
        let (first, target) = match parse_tree(&name, &src, &opts, &plain) {
            Ok(d) => (d, &plain),
            Err(_) => match parse_tree(&name, &src, &opts, &guru) {
                Ok(d) => (d, &guru),
                Err(_) => continue,
            },
        };
        match parse_tree("dump", &first, &opts, target) {
            Ok(second) if body(&second) == body(&first) => tripped += 1,
            Ok(second) => failures.push(format!("{name}: differs\n{first}\n---\n{second}")),
            Err(e) => failures.push(format!("{name}: dump does not parse\n{first}\n{e}")),
        }
    }
    eprintln!("round-tripped {tripped} of {} corpus scripts", files.len());
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        tripped + failures.len(),
        failures.join("\n\n")
    );
}
