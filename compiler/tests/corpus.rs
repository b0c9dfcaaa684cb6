//! The SystemTap parse test corpus (`../shared/corpus/stp-testsuite`,
//! see its MANIFEST.md), run the way stap's testsuite runs it: every
//! `parseok` file must parse (`stap -p1` exits 0), every `parseko` file must
//! be rejected with a diagnostic and without a panic, every `semko` file
//! must be rejected by the semantic pass (`stap -p2` fails; `-W` makes
//! warnings errors), with kernel function probe points resolved against a
//! fixed symbol list (`SEMKO_KALLSYMS`, never the host kernel's), as
//! `stapvm check` resolves them against /proc/kallsyms. Exceptions, if
//! any, are listed with their reasons in `SEMKO_EXCEPTIONS`. Also:
//! deleting any one token of any corpus file never panics.
//!
//! Each file's first line is its invocation: `#! stap -p1` (flags), or
//! `#! /bin/sh` for a shell wrapper calling `stap $@ ARGS...`, translated
//! here to the equivalent call (`-e SCRIPT` or `-` with a here-document,
//! `-D`, `-g`, script arguments).
//!
//! `CORPUS_VERBOSE=1 cargo test -p compiler --test corpus -- --nocapture`
//! also prints the first line of each rejection.
use compiler::symbols::KernelSymbols;
use compiler::{check_for, compile_for, parse_only_for, Options, Target};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// `stp-testsuite` of the corpus (`vm_testkit::paths`: `../shared/corpus`
/// from the workspace root, or `$STAPVM_SHARED/corpus`).
fn root() -> PathBuf {
    vm_testkit::paths::corpus("stp-testsuite")
}

/// One corpus case, translated from its invocation.
#[derive(Debug, Default)]
struct Case {
    name: String,
    script: String,
    opts: Options,
    target: Target,
}

/// Splits a shell command line into words (quotes, backslashes); stops at
/// an unquoted `#` word or a here-document operator.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    cur.push(d);
                }
            }
            '"' => {
                in_word = true;
                while let Some(d) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = chars.next() {
                                cur.push(e);
                            }
                        }
                        d => cur.push(d),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(e) = chars.next() {
                    cur.push(e);
                }
            }
            '#' if !in_word => break,
            '<' if !in_word && chars.peek() == Some(&'<') => break,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// Applies stap command-line `words` (after `stap`) to `case`; `stdin` is
/// the here-document, if any. Returns false for an unknown option.
fn apply_args(case: &mut Case, words: &[String], stdin: Option<String>) -> bool {
    let mut script: Option<String> = None;
    let mut k = 0;
    while k < words.len() {
        let w = words[k].as_str();
        k += 1;
        if script.is_some() {
            case.opts.args.push(w.to_string());
            continue;
        }
        match w {
            "$@" => {}
            "-e" => {
                script = words.get(k).cloned();
                k += 1;
            }
            "-" => script = Some(stdin.clone().unwrap_or_default()),
            "-D" => {
                if let Some(d) = words.get(k) {
                    let (n, v) = d.split_once('=').unwrap_or((d, ""));
                    case.opts.defines.push((n.to_string(), v.to_string()));
                }
                k += 1;
            }
            "-p" => k += 1,
            _ if w.starts_with("-D") => {
                let d = &w[2..];
                let (n, v) = d.split_once('=').unwrap_or((d, ""));
                case.opts.defines.push((n.to_string(), v.to_string()));
            }
            _ if w.starts_with('-') && w.len() > 1 => {
                // Bundled flags such as -up2, -Wp2, -g.
                for c in w[1..].chars() {
                    match c {
                        'g' => case.target.guru = true,
                        'W' => case.target.werror = true,
                        'u' | 'v' | 'w' | 'k' | '0'..='9' | 'p' => {}
                        _ => return false,
                    }
                }
            }
            _ => return false,
        }
    }
    if let Some(s) = script {
        case.script = s;
    }
    true
}

/// Reads a corpus file and translates its invocation.
fn load(path: &Path) -> Case {
    let text = String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut case = Case {
        name,
        script: text.clone(),
        ..Case::default()
    };
    let first = text.lines().next().unwrap_or("");
    if first.contains("/bin/sh") {
        // The wrapper: the line running `stap`, and a here-document.
        let lines: Vec<&str> = text.lines().collect();
        let Some(at) = lines
            .iter()
            .position(|l| l.trim_start().starts_with("stap "))
        else {
            panic!("{}: no stap invocation in the shell wrapper", case.name);
        };
        let line = lines[at];
        let stdin = line.find("<<").map(|p| {
            let tag = line[p + 2..].trim().trim_matches(['\'', '"']).to_string();
            lines[at + 1..]
                .iter()
                .take_while(|l| l.trim() != tag)
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        });
        let words = shell_words(line.trim_start().trim_start_matches("stap"));
        assert!(
            apply_args(&mut case, &words, stdin),
            "{}: unknown stap option in {line}",
            case.name
        );
    } else if let Some(flags) = first.strip_prefix("#!") {
        let words = shell_words(flags);
        let rest: Vec<String> = words.into_iter().skip(1).collect();
        assert!(
            apply_args(&mut case, &rest, None),
            "{}: unknown stap option in {first}",
            case.name
        );
    }
    case
}

fn files(dir: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "stp"))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// What happened to one case.
enum Outcome {
    Ok,
    Failed(String),
    Panicked(String),
}

fn run(case: &Case, f: impl FnOnce(&Case) -> Result<(), String>) -> Outcome {
    match catch_unwind(AssertUnwindSafe(|| f(case))) {
        Ok(Ok(())) => Outcome::Ok,
        Ok(Err(msg)) => Outcome::Failed(msg),
        Err(p) => Outcome::Panicked(
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default(),
        ),
    }
}

fn parse(c: &Case) -> Result<(), String> {
    parse_only_for(&c.name, &c.script, &c.opts, &c.target).map_err(|f| f.rendered)
}

fn analyse(c: &Case) -> Result<(), String> {
    check_for(&c.name, &c.script, &c.opts, &c.target)
        .map(|_| ())
        .map_err(|f| f.rendered)
}

/// Runs `dir`; `want_ok`: the call must succeed (else fail). Prints the
/// counts and the failures; returns the failures.
fn run_dir(dir: &str, want_ok: bool, f: fn(&Case) -> Result<(), String>) -> Vec<String> {
    let paths = files(dir);
    assert!(
        !paths.is_empty(),
        "no corpus files in {}/{dir}",
        root().display()
    );
    let mut failures = Vec::new();
    for p in &paths {
        let case = load(p);
        match (run(&case, f), want_ok) {
            (Outcome::Ok, true) => {}
            (Outcome::Failed(msg), false) => {
                if std::env::var_os("CORPUS_VERBOSE").is_some() {
                    println!("  {}: {}", case.name, msg.lines().next().unwrap_or(""));
                }
                if msg.trim().is_empty() {
                    failures.push(format!("{}: rejected without a diagnostic", case.name));
                }
            }
            (Outcome::Failed(msg), true) => {
                failures.push(format!("{}: rejected:\n{msg}", case.name))
            }
            (Outcome::Ok, false) => failures.push(format!("{}: accepted", case.name)),
            (Outcome::Panicked(msg), _) => failures.push(format!("{}: PANIC: {msg}", case.name)),
        }
    }
    println!(
        "{dir}: {} passed, {} failed",
        paths.len() - failures.len(),
        failures.len()
    );
    for f in &failures {
        println!("  FAIL {f}");
    }
    failures
}

#[test]
fn parseok_files_parse() {
    let failures = run_dir("parseok", true, parse);
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn parseko_files_are_rejected() {
    let failures = run_dir("parseko", false, parse);
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The kernel the semko files are checked against: the functions they
/// probe that exist in every kernel stap supports, and the ones that must
/// not resolve left out (`sixteen`: a made-up name; `seventeen`: a module
/// that is not loaded) or placed in the init text (`thirtytwo`:
/// `init_setup`, freed after boot).
const SEMKO_KALLSYMS: &str = "\
ffffffff81000000 T _stext
ffffffff81100000 T vfs_read
ffffffff81100100 T vfs_write
ffffffff81100200 t do_filp_open
ffffffff81100300 T do_sys_open
ffffffff81100400 T do_sys_openat2
ffffffff81100500 T __x64_sys_open
ffffffff81100600 T __x64_sys_openat
ffffffff83000000 T _sinittext
ffffffff830000a0 t init_setup
ffffffff83100000 T _einittext
ffffffffc0001000 t ext4_file_open\t[ext4]
";

/// semko files that `stapvm check` accepts, with the reason. Empty: every
/// semko file is rejected.
const SEMKO_EXCEPTIONS: &[(&str, &str)] = &[];

fn analyse_semko(c: &Case) -> Result<(), String> {
    let target = Target {
        kernel_symbols: Some(std::sync::Arc::new(KernelSymbols::from_kallsyms(
            SEMKO_KALLSYMS,
        ))),
        ..c.target.clone()
    };
    check_for(&c.name, &c.script, &c.opts, &target)
        .map(|_| ())
        .map_err(|f| f.rendered)
}

#[test]
fn semko_files_are_rejected() {
    let failures = run_dir("semko", false, analyse_semko);
    let unexpected: Vec<_> = failures
        .iter()
        .filter(|f| {
            !SEMKO_EXCEPTIONS
                .iter()
                .any(|(name, _)| f.starts_with(&format!("{name}: accepted")))
        })
        .collect();
    assert!(unexpected.is_empty(), "{unexpected:#?}");
}

/// The cases that need more than the script: `-W`, and the kernel's
/// symbols (without them the probe points are the loader's business).
#[test]
fn semko_werror_and_symbols_are_what_rejects() {
    let semko = root().join("semko");
    let c = load(&semko.join("fortyeight.stp"));
    assert!(c.target.werror);
    let e = analyse_semko(&c).unwrap_err();
    assert!(
        e.starts_with("WARNING: Eliding unused variable 'foo'")
            && e.ends_with("Pass 2: analysis failed.  [man error::pass2]\n"),
        "{e}"
    );
    let plain = Case {
        target: Target::default(),
        ..load(&semko.join("fortyeight.stp"))
    };
    analyse(&plain).unwrap();
    for f in ["sixteen.stp", "seventeen.stp", "thirtytwo.stp"] {
        let c = load(&semko.join(f));
        let e = analyse_semko(&c).unwrap_err();
        assert!(
            e.contains("semantic error: while resolving probe point: identifier")
                && e.contains("semantic error: no match"),
            "{f}: {e}"
        );
        analyse(&c).unwrap_or_else(|e| panic!("{f} without symbols: {e}"));
    }
    // With the symbol and outside the init text, the same points resolve.
    let t = Target {
        kernel_symbols: Some(std::sync::Arc::new(KernelSymbols::from_kallsyms(
            "ffffffff81000000 T init_setup\nffffffff81000100 T no_such_function_anywhere_guaranteed\n",
        ))),
        ..Target::default()
    };
    for f in ["sixteen.stp", "thirtytwo.stp"] {
        let c = load(&semko.join(f));
        check_for(&c.name, &c.script, &c.opts, &t)
            .unwrap_or_else(|e| panic!("{f}: {}", e.rendered));
    }
}

/// stap's duplicate elimination: an error printed once, then counted.
#[test]
fn similar_errors_are_suppressed_with_stap_summary() {
    let e = check_for(
        "x.stp",
        "probe begin { foo(); foo() }",
        &Options::default(),
        &Target::default(),
    )
    .unwrap_err();
    assert_eq!(
        e.rendered.matches("unresolved function foo").count(),
        1,
        "{}",
        e.rendered
    );
    assert!(e.rendered.ends_with(
        "Pass 2: analysis failed.  [man error::pass2]\n\
         Number of similar error messages suppressed: 1.\n\
         Rerun with -v to see them.\n"
    ));
}

/// Deleting any one token of any corpus file (the first `MAX_TOKENS` of
/// each) never panics, whatever the pass that sees the result.
#[test]
fn deleting_any_token_of_the_corpus_never_panics() {
    const MAX_TOKENS: usize = 400;
    let mut panics = Vec::new();
    let mut runs = 0usize;
    for dir in ["parseok", "parseko", "semko"] {
        for p in files(dir) {
            let case = load(&p);
            let toks = compiler::parse::lexer::lex(&case.script, &case.opts.args);
            let mut last = None;
            for t in toks.iter().take(MAX_TOKENS) {
                let (lo, hi) = (t.span.lo as usize, t.span.hi as usize);
                // Pasted arguments share their `$N` span: cut it once.
                if last == Some((lo, hi)) || hi > case.script.len() {
                    continue;
                }
                last = Some((lo, hi));
                let cut = Case {
                    name: case.name.clone(),
                    script: format!("{}{}", &case.script[..lo], &case.script[hi..]),
                    opts: case.opts.clone(),
                    target: case.target.clone(),
                };
                runs += 1;
                let out = run(&cut, |c| {
                    compile_for(&c.name, &c.script, &c.opts, &c.target)
                        .map(|_| ())
                        .map_err(|f| f.rendered)
                });
                if let Outcome::Panicked(msg) = out {
                    panics.push(format!(
                        "{dir}/{} without bytes {lo}..{hi}: {msg}",
                        case.name
                    ));
                }
            }
        }
    }
    println!("token deletions: {runs} runs, {} panics", panics.len());
    assert!(panics.is_empty(), "{panics:#?}");
}

#[test]
fn shell_wrappers_are_translated() {
    let c = load(&root().join("parseok/nineteen.stp"));
    assert_eq!(c.script, "$1 {log (@1.@2)}");
    // The second argument is two control characters (`# <- control codes`).
    assert_eq!(
        c.opts.args,
        vec!["probe foo".to_string(), "\u{b}\u{c}".to_string()]
    );
    let c = load(&root().join("parseok/macros05.stp"));
    assert_eq!(c.opts.args.len(), 5);
    assert!(c.script.contains("@define foo"));
}

#[test]
fn embedded_c_needs_guru_and_never_compiles() {
    let src = "%{ #include <x.h> %}\nfunction f:long() %{ STAP_RETURN(1); %}\nprobe begin { }";
    let o = Options::default();
    let plain = Target::default();
    let guru = Target {
        guru: true,
        ..Target::default()
    };
    let e = parse_only_for("x.stp", src, &o, &plain).unwrap_err();
    assert!(e.rendered.contains(compiler::NO_GURU_EMBEDDED));
    parse_only_for("x.stp", src, &o, &guru).unwrap();
    let e = compile_for("x.stp", src, &o, &guru).unwrap_err();
    assert!(
        e.rendered.contains("not supported yet: embedded C"),
        "{}",
        e.rendered
    );
}

#[test]
fn conditions_follow_the_target() {
    let src = "%( kernel_v >= \"6.2\" && CONFIG_X == \"y\" %? probe begin { } %)";
    let o = Options::default();
    assert!(parse_only_for("x.stp", src, &o, &Target::default()).is_err());
    let t = Target {
        kernel_release: "6.8.0-31-generic".into(),
        kernel_config: vec![("CONFIG_X".into(), "y".into())],
        ..Target::default()
    };
    parse_only_for("x.stp", src, &o, &t).unwrap();
}
