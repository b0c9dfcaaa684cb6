//! The `runok-output` corpus (`stp-testsuite/runok-output`, see its
//! MANIFEST.md): which scripts there are, what output each must print (read
//! from the `.exp` files as stap's testsuite reads them) and how an output
//! is compared with it.
//!
//! Shared, as one source file, by the user-space runner
//! (`compiler/tests/runok.rs`, which includes this file with `#[path]`) and
//! the guest driver (`runok-cases`, which generates the QEMU guest's cases
//! and compares their outputs), so both judge an output the same way.
//! Only `std` and `vm_testkit::paths` (a dependency of both crates) are
//! used here, for that reason.
//!
//! The rules:
//! - An `.exp` file is a Tcl script. Walked top to bottom, `set test NAME`
//!   and `set ::result_string {...}` / `"..."` set the current test and
//!   expected text; every `stap_run2` / `stap_run_binary` /
//!   `stap_run_exact` line is one run of the current test with the current
//!   text and the line's `-DNAME=V` options. A script is run by the runs
//!   whose test is its stem (`exists`, `map_wrap2.stp`), looked up in every
//!   `.exp` of its directory (`map_hash.exp` covers `map_hash_*.stp`).
//! - `stap_run2` compares line by line, one trailing newline of the output
//!   ignored; `stap_run_binary` compares a hex dump of the output (eight
//!   bytes a line, padded to 23 columns).
//! - A script with a `foreach` without a sort order prints its elements
//!   in stap's hash-table order, which no other implementation shares: its
//!   output is compared as a multiset of lines (MANIFEST.md).
//! - `ERRATA`: known mistakes of the upstream `.exp` files, fixed here with
//!   the upstream commit that shows them.
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The corpus directory: `stp-testsuite/runok-output` of the corpus
/// `vm_testkit::paths` finds (`../shared/corpus` from the workspace root,
/// or `$STAPVM_SHARED/corpus`).
pub fn root() -> PathBuf {
    vm_testkit::paths::corpus("stp-testsuite/runok-output")
}

/// Known mistakes of upstream `.exp` files: (case, wrong text, right text,
/// why). Applied to the expected text of that case only.
pub const ERRATA: &[(&str, &str, &str, &str)] = &[
    (
        "maps/exists",
        "comlete list",
        "complete list",
        "upstream d3c91bee4 fixed the typos in exists.stp but not in exists.exp",
    ),
    (
        "maps/exists",
        "emtpy string",
        "empty string",
        "upstream d3c91bee4 fixed the typos in exists.stp but not in exists.exp",
    ),
];

/// How a run compares output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `stap_run2`: line by line.
    Lines,
    /// `stap_run_binary`: a hex dump of the bytes.
    Binary,
}

/// One run of a script: its expected output and options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The expected text (a hex dump for `Mode::Binary`).
    pub text: String,
    /// How to compare.
    pub mode: Mode,
    /// `-DNAME=V` options of the `stap_run*` line.
    pub defines: Vec<(String, String)>,
}

/// One script of the corpus.
#[derive(Debug, Clone)]
pub struct Case {
    /// `DIR/STEM`, e.g. `maps/exists`.
    pub name: String,
    /// The script file.
    pub script: PathBuf,
    /// Its distinct runs (empty: no `.exp` names it).
    pub runs: Vec<Run>,
    /// Compare as a multiset of lines (an unsorted `foreach`).
    pub multiset: bool,
}

/// The Tcl word at the start of `s` (after blanks): `{...}` with balanced
/// braces, or `"..."` with `\x` unescaped. Returns its text and the number
/// of bytes of `s` it took.
fn tcl_word(s: &str) -> Option<(String, usize)> {
    let blank = s.len() - s.trim_start().len();
    let s = &s[blank..];
    if let Some(q) = s.strip_prefix('"') {
        let mut text = String::new();
        let mut chars = q.char_indices();
        while let Some((k, c)) = chars.next() {
            match c {
                '"' => return Some((text, blank + k + 2)),
                '\\' => text.push(chars.next()?.1),
                c => text.push(c),
            }
        }
        return None;
    }
    if let Some(body) = s.strip_prefix('{') {
        let mut depth = 1usize;
        for (k, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some((body[..k].to_string(), blank + k + 2));
                    }
                }
                _ => {}
            }
        }
        return None;
    }
    let w = s.split_whitespace().next()?;
    Some((w.to_string(), blank + w.len()))
}

/// The runs of one `.exp` file, by test name (without `.stp`).
pub fn parse_exp(exp: &str) -> Vec<(String, Run)> {
    let mut out = Vec::new();
    let mut test = String::new();
    let mut text: Option<String> = None;
    let mut pos = 0;
    while pos < exp.len() {
        let rest = &exp[pos..];
        let indent = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        let line = &rest[indent..];
        let line_len = line.find('\n').map_or(line.len(), |e| e + 1);
        if let Some(r) = line.strip_prefix("set ::result_string") {
            if let Some((t, used)) = tcl_word(r) {
                text = Some(t);
                let after = indent + "set ::result_string".len() + used;
                pos += after
                    + rest[after..]
                        .find('\n')
                        .map_or(rest.len() - after, |e| e + 1);
                continue;
            }
        } else if let Some(r) = line.strip_prefix("set test") {
            if let Some((w, _)) = tcl_word(r) {
                test = w.trim_end_matches(".stp").to_string();
            }
        } else if line.starts_with("stap_run") {
            let first = &line[..line_len];
            let mode = match first.starts_with("stap_run_binary") {
                true => Mode::Binary,
                false => Mode::Lines,
            };
            let defines = first
                .split_whitespace()
                .filter_map(|w| w.strip_prefix("-D"))
                .filter_map(|d| {
                    d.split_once('=')
                        .map(|(n, v)| (n.to_string(), v.to_string()))
                })
                .collect();
            if let Some(t) = &text {
                out.push((
                    test.clone(),
                    Run {
                        text: t.clone(),
                        mode,
                        defines,
                    },
                ));
            }
        }
        pos += indent + line_len;
    }
    out
}

/// A `foreach` without a sort order (`+`/`-` before `)`) in `src`.
pub fn has_unsorted_foreach(src: &str) -> bool {
    let mut rest = src;
    while let Some(k) = rest.find("foreach") {
        let after = &rest[k + "foreach".len()..];
        let Some(open) = after.find('(') else { break };
        let mut depth = 0usize;
        let mut head = "";
        for (i, c) in after[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        head = &after[open..open + i];
                        break;
                    }
                }
                _ => {}
            }
        }
        // `limit EXPR` may hold any operator; the order is before it.
        let order = head.split(" limit ").next().unwrap_or(head);
        if !order.contains('+') && !order.contains('-') {
            return true;
        }
        rest = after;
    }
    false
}

/// Every script of the corpus under `root`, sorted by name, with its runs.
pub fn cases(root: &Path) -> Vec<Case> {
    let mut out = Vec::new();
    let Ok(dirs) = std::fs::read_dir(root) else {
        return out;
    };
    let mut dirs: Vec<PathBuf> = dirs.filter_map(|d| d.ok().map(|d| d.path())).collect();
    dirs.sort();
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        let Ok(files) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = files.filter_map(|f| f.ok().map(|f| f.path())).collect();
        files.sort();
        let mut runs: HashMap<String, Vec<Run>> = HashMap::new();
        for exp in files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "exp"))
        {
            let text = std::fs::read_to_string(exp).unwrap_or_default();
            for (test, run) in parse_exp(&text) {
                let list = runs.entry(test).or_default();
                if !list.contains(&run) {
                    list.push(run);
                }
            }
        }
        let dname = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        for stp in files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "stp"))
        {
            let stem = stp
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let name = format!("{}/{stem}", dname.clone().unwrap_or_default());
            let mut list = runs.get(&stem).cloned().unwrap_or_default();
            for run in &mut list {
                for (case, wrong, right, _) in ERRATA {
                    if *case == name {
                        run.text = run.text.replace(wrong, right);
                    }
                }
            }
            let src = std::fs::read_to_string(stp).unwrap_or_default();
            out.push(Case {
                name,
                script: stp.clone(),
                runs: list,
                multiset: has_unsorted_foreach(&src),
            });
        }
    }
    out
}

/// The output as `stap_run_binary` shows it: hex bytes, eight to a line,
/// each line padded to 23 columns.
pub fn hex_lines(out: &[u8]) -> String {
    out.chunks(8)
        .map(|c| {
            let l = c.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>();
            format!("{:<23}", l.join(" "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lines `stap_run2` compares: the output, one trailing newline
/// dropped, split at `\n` (the expected text is split as it is).
fn lines_of(s: &str, output: bool) -> Vec<&str> {
    let s = match output {
        true => s.strip_suffix('\n').unwrap_or(s),
        false => s,
    };
    s.split('\n').collect()
}

/// Compares `out` with `run`; `Err` holds a short report of the first
/// difference (or the lines in excess / missing, for a multiset).
pub fn compare(run: &Run, multiset: bool, out: &[u8]) -> Result<(), String> {
    let got = match run.mode {
        Mode::Binary => hex_lines(out),
        Mode::Lines => String::from_utf8_lossy(out).into_owned(),
    };
    let (mut a, mut b) = (lines_of(&got, true), lines_of(&run.text, false));
    if multiset {
        a.sort_unstable();
        b.sort_unstable();
        if a == b {
            return Ok(());
        }
        let mut extra = Vec::new();
        let mut missing = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) if x == y => (i, j) = (i + 1, j + 1),
                (Some(x), Some(y)) if x < y => (extra.push(*x), i += 1).1,
                (Some(_), Some(y)) => (missing.push(*y), j += 1).1,
                (Some(x), None) => (extra.push(*x), i += 1).1,
                (None, Some(y)) => (missing.push(*y), j += 1).1,
                (None, None) => break,
            }
        }
        let show = |v: &[&str]| {
            v.iter()
                .take(5)
                .map(|l| format!("{l:?}"))
                .collect::<Vec<_>>()
        };
        return Err(format!(
            "as a multiset: {} line(s) not expected {:?}, {} expected line(s) missing {:?}",
            extra.len(),
            show(&extra),
            missing.len(),
            show(&missing)
        ));
    }
    if a == b {
        return Ok(());
    }
    let n = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    Err(format!(
        "line {}: expected {:?}, got {:?} ({} lines expected, {} got)",
        n + 1,
        b.get(n).copied().unwrap_or("<end>"),
        a.get(n).copied().unwrap_or("<end>"),
        b.len(),
        a.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_and_result_before_test() {
        let exp = "set test \"a.stp\"\nset ::result_string {x\ny}\nstap_run2 $t -DMAXACTION=5\n\
                   set ::result_string \"q\\\"r\"\nset test \"b\"\nstap_run_binary $t\n";
        let runs = parse_exp(exp);
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].0, "a");
        assert_eq!(runs[0].1.text, "x\ny");
        assert_eq!(runs[0].1.defines, vec![("MAXACTION".into(), "5".into())]);
        assert_eq!(runs[1].0, "b");
        assert_eq!(runs[1].1.text, "q\"r");
        assert_eq!(runs[1].1.mode, Mode::Binary);
    }

    #[test]
    fn unsorted_foreach() {
        assert!(has_unsorted_foreach("foreach (k in a) x"));
        assert!(has_unsorted_foreach("foreach (k in a limit n-1) x"));
        assert!(!has_unsorted_foreach("foreach (k+ in a) x"));
        assert!(!has_unsorted_foreach("foreach ([k, v] in a- limit 3) x"));
    }

    #[test]
    fn compare_modes() {
        let run = Run {
            text: "a\nb".into(),
            mode: Mode::Lines,
            defines: vec![],
        };
        assert!(compare(&run, false, b"a\nb\n").is_ok());
        assert!(compare(&run, false, b"a\nb\n\n").is_err());
        assert!(compare(&run, false, b"b\na\n").is_err());
        assert!(compare(&run, true, b"b\na\n").is_ok());
        assert!(compare(&run, true, b"b\nb\n").is_err());
        let bin = Run {
            text: "41 42                  ".into(),
            mode: Mode::Binary,
            defines: vec![],
        };
        assert!(compare(&bin, false, b"AB").is_ok());
    }
}
