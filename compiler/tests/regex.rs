//! `=~` / `!~`: a table of patterns x strings run through the whole chain
//! (compiler/src/regex.rs builds the DFA, the image carries it, the C core's
//! REMATCH walks it) and compared with the `regex` crate's answer for the
//! same pattern (POSIX leftmost-longest does not matter for match / no
//! match); the corpus example `general__regex.stp`; stap's compile-time
//! errors.
mod common;
use common::*;
use compiler::{compile, Options};

/// Patterns written in the common subset of stap's dialect and the regex
/// crate's syntax (the crate reads them with `(?s-u)`: bytes, `.` matches
/// newline, as stap's `.`).
const PATTERNS: &[&str] = &[
    "",
    "a",
    "abc",
    "^abc",
    "abc$",
    "^abc$",
    "a.c",
    "a*",
    "^a*$",
    "a+b",
    "ab?c",
    "^a{2}$",
    "a{2,}",
    "^a{1,3}b",
    "(ab)+",
    "^(a|bc)*d$",
    "a|b|c",
    "^(a|b)+$",
    "[abc]",
    "[^abc]",
    "^[^abc]*$",
    "[a-z]+",
    "^[A-Za-z_][A-Za-z0-9_]*$",
    "[[:digit:]]+",
    "[[:space:]]",
    "^[[:upper:]][[:lower:]]+",
    "[[:punct:]]",
    "[]a]",
    "^[a-]+$",
    "\\.tar\\.gz$",
    "(\\.tar\\.(gz|bz2|xz)|\\.zip|\\.tgz|\\.tbz)$",
    "^$",
    "x.*y",
    "x.+y",
    "(a*)*b",
    "^((a|b)c)?d",
    "[0-9]{3}-[0-9]{4}",
    "^.{3}$",
    "^.{0,2}$",
    "AF_INET*",
    "\\\\",
    "a\\+b",
    "\t",
    "é",
    "(?:ab)+c",
    "(a|b)*a(a|b){3}$",
];

/// Strings tested against every pattern.
fn strings() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = [
        "",
        "a",
        "abc",
        "xabcx",
        "ab",
        "aac",
        "abbc",
        "aa",
        "aaa",
        "b",
        "d",
        "bcd",
        "bcbcd",
        "abab",
        "ababc",
        "hello.tar.gz",
        "x.tgz",
        "file.tar.gzz",
        "Hello",
        "hello world",
        "123-4567",
        "a+b",
        "a\\b",
        "x\ty",
        "AF_INET6",
        "AF_UNIX",
        "é",
        "]",
        "-",
        "a-a",
        "xyz",
        "xy",
        "x\ny",
        "foo_bar9",
        "9foo",
        "acd",
        "cd",
        "abaab",
        "bbbabbb",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    v.push([b"a".repeat(300), b"b".to_vec()].concat());
    v.push(vec![0xff, b'a', 0x80]);
    v
}

/// `s` as a stap string literal.
fn lit(s: &[u8]) -> String {
    let mut out = String::from("\"");
    for &b in s {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

/// Checks `src` with the verifier and runs its begin (then end) probes
/// on the C core; returns the output, which must come without an error.
fn run(src: &str) -> String {
    let opts = RunOptions {
        check: true,
        ..Default::default()
    };
    run_begin_end(src, &opts).ok()
}

#[test]
fn patterns_times_strings_agree_with_the_regex_crate() {
    let strs = strings();
    let mut checked = 0;
    for p in PATTERNS {
        let re = regex::bytes::Regex::new(&format!("(?s-u){p}"))
            .unwrap_or_else(|e| panic!("regex crate refuses {p:?}: {e}"));
        let want: String = strs
            .iter()
            .map(|s| if re.is_match(s) { '1' } else { '0' })
            .collect();
        // `=~` on the C core, one printf per string.
        let body: String = strs
            .iter()
            .map(|s| format!("printf(\"%d\", {} =~ {})\n", lit(s), lit(p.as_bytes())))
            .collect();
        let got = run(&format!("probe begin {{\n{body}}}\n"));
        assert_eq!(got, want, "pattern {p:?} (strings {strs:?})");
        // `!~` is the negation.
        let body: String = strs
            .iter()
            .map(|s| format!("printf(\"%d\", {} !~ {})\n", lit(s), lit(p.as_bytes())))
            .collect();
        let neg: String = want
            .chars()
            .map(|c| if c == '1' { '0' } else { '1' })
            .collect();
        assert_eq!(run(&format!("probe begin {{\n{body}}}\n")), neg, "!~ {p:?}");
        // The table's own walk (what the reference VM does) agrees too.
        let t = compiler::regex::compile(p.as_bytes()).unwrap();
        let walk: String = strs
            .iter()
            .map(|s| if t.is_match(s) { '1' } else { '0' })
            .collect();
        assert_eq!(walk, want, "table walk {p:?}");
        checked += strs.len();
    }
    assert!(checked >= 1500, "{checked}");
}

#[test]
fn stap_only_syntax() {
    // Named classes stap adds, escapes inside brackets, `.` and newline.
    let cases: &[(&str, &str, bool)] = &[
        ("[[:d:]]", "x7", true),
        ("[[:d:]]", "xy", false),
        ("^[[:s:]]$", "\n", true),
        ("[[:l:]][[:u:]]", "aB", true),
        ("[[:l:]][[:u:]]", "Ab", false),
        ("[\\]]", "]", true),
        ("[a\\-z]", "-", true),
        ("[a\\-z]", "b", false),
        ("^a.b$", "a\nb", true),
        ("(?:x|y)z", "yz", true),
        ("a||b", "c", true),
        ("()", "", true),
    ];
    for (p, s, m) in cases {
        let got = run(&format!(
            "probe begin {{ printf(\"%d\", {} =~ {}) }}",
            lit(s.as_bytes()),
            lit(p.as_bytes())
        ));
        assert_eq!(got, if *m { "1" } else { "0" }, "{p:?} on {s:?}");
    }
}

#[test]
fn regex_operands_are_expressions_and_one_table_per_pattern() {
    let src = "probe begin { s = \"ab\" . \"c\"; if (s =~ \"^abc$\" && !(s !~ \"b\")) \
               printf(\"%d%d\", s =~ \"^abc$\", execname() =~ \"^abc$\") }";
    assert_eq!(run(src), "10");
    let c = build(src);
    assert_eq!(c.program.regexes.len(), 2);
    let asm = vm_spec::disasm::disassemble(&c.program);
    assert!(
        asm.contains("REMATCH") && asm.contains("rx#0 \"^abc$\""),
        "{asm}"
    );
}

#[test]
fn corpus_example_compiles_and_matches() {
    let file = vm_testkit::paths::corpus("stp-examples/general__regex.stp");
    let path = &file.to_string_lossy().into_owned();
    let src = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let c = compile(path, &src, &Options::default()).unwrap_or_else(|f| panic!("{}", f.rendered));
    image(&c.program);
    let t = &c.program.regexes[0];
    assert!(t.is_match(b"/tmp/x.tar.xz") && t.is_match(b"a.zip") && !t.is_match(b"a.tar"));
    // With an argument, `@1` is the pattern.
    let opts = Options {
        args: vec!["^/etc/".into()],
        ..Options::default()
    };
    let c = compile(path, &src, &opts).unwrap_or_else(|f| panic!("{}", f.rendered));
    image(&c.program);
    assert_eq!(c.program.regexes[0].pattern, b"^/etc/");
}

#[test]
fn bad_patterns_are_semantic_errors() {
    let e = fail("probe begin { print(\"abc\" =~ \"a[b-d}+\") }");
    assert!(
        e.contains(
            "semantic error: regex compilation error (at position 7): unclosed character class"
        ),
        "{e}"
    );
    assert!(e.contains("Pass 2: analysis failed"), "{e}");
    // The operand must be a string.
    let e = fail("probe begin { x = 1; print(x =~ \"a\") }");
    assert!(e.contains("type mismatch"), "{e}");
    // The right side must be a literal (a parse error, as in stap).
    let e = fail("probe begin { a = \"x\"; print(\"y\" =~ a) }");
    assert!(e.contains("parse error"), "{e}");
    // A DFA past the state cap is refused at compile time.
    let e = fail("probe begin { print(\"a\" =~ \"(a|b)*a(a|b){13}\") }");
    assert!(e.contains("regex compilation error"), "{e}");
}
