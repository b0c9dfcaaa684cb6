//! `matched(n)`, `matched_str()`, `ngroups()` (tapset/regex.stp): scripts
//! run through the whole chain (compiler/src/regex.rs builds the DFA and
//! the group program, the image carries them, the C core's REMATCHS runs
//! the Pike VM, MATCHED / NGROUPS read the CPU's group state) and compared
//! with the groups docs/regex-groups.md gives (each script also runs on
//! the reference VM, which must agree record for record) and stap's own
//! testsuite/runok/regex_grouping.stp checks (all 88 of its checks pass
//! on the C core; its cases are in `CASES`).
mod common;
use common::*;
use vm_spec::abi;
use vm_testkit::gen::Case;
use vm_testkit::HostEnv;

/// `s` as a stap string literal.
fn lit(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

/// Runs the begin probes of `src` on the C core (verified first), and on
/// the reference VM too: `vm_testkit::diff::check_case` compares records,
/// registers and fuel after every run (refvm's Pike VM is its own).
fn run(src: &str) -> Ran {
    let opts = RunOptions {
        check: true,
        ..Default::default()
    };
    let ran = run_begin_end(src, &opts);
    let prog = &ran.program;
    let runs: Vec<u32> = prog
        .probes
        .iter()
        .filter(|p| u32::from(p.kind) == abi::STP_PROBE_BEGIN)
        .map(|p| p.handler)
        .collect();
    let case = Case {
        seed: 0,
        program: prog.clone(),
        env: HostEnv::default(),
        runs,
        cpus: 1,
        run_cpus: Vec::new(),
    };
    if let Err(m) = vm_testkit::diff::check_case(&case) {
        panic!("C core and refvm differ on\n{src}\n{m}");
    }
    ran
}

/// Pattern, subject, and the groups 0, 1, ... of the match (`None`: no
/// match). The design note's table, then stap's regex_grouping.stp checks
/// (the groups it checks; the URI pattern's nine groups as the prototype
/// gives them, over a subject with a scheme and one with an authority,
/// so that every group takes part in one of them).
const CASES: &[(&str, &str, Option<&[&str]>)] = &[
    // docs/regex-groups.md
    ("(a*)a*a", "aaa", Some(&["aaa", "aa"])),
    ("(ab)?", "abab", Some(&["ab", "ab"])),
    ("(long|longer)", "longer", Some(&["longer", "longer"])),
    ("a*|b", "baaab", Some(&["b"])),
    ("(a+|b)*", "ab", Some(&["ab", "b"])),
    ("(ab|cd)e", "abcde", Some(&["cde", "cd"])),
    (
        "(bc+d$|ef*g.|h?i(j|k))",
        "bcccd",
        Some(&["bcccd", "bcccd", ""]),
    ),
    (
        "^#! */.*/(k|ba||pdk|z)sh",
        "#! /bin/sh",
        Some(&["#! /bin/sh", ""]),
    ),
    ("(foo|^)bar", "bazfoobar", Some(&["foobar", "foo"])),
    ("a|(b)", "a", Some(&["a", ""])),
    (
        "(.*)(\\.[a-z]+)$",
        "x.tar.gz",
        Some(&["x.tar.gz", "x.tar", ".gz"]),
    ),
    ("(^a|b)+", "aab", Some(&["a", "a"])),
    // The open points: priority, and a stale group of an earlier pass.
    ("(a|ab)(c|bcd)(d*)", "abcd", Some(&["abcd", "a", "bcd", ""])),
    ("x(a|(b))*y", "xabay", Some(&["xabay", "a", "b"])),
    // Leftmost start wins over a longer match that starts later.
    ("abcd|c", "abcd", Some(&["abcd"])),
    ("b|abc", "abc", Some(&["abc"])),
    ("(?:ab)(c)", "abc", Some(&["abc", "c"])),
    ("(a)(?:b)(c)", "abc", Some(&["abc", "a", "c"])),
    ("(a*)*", "b", Some(&["", ""])),
    ("(a*)+b", "aab", Some(&["aab", "aa"])),
    ("(a){3}", "aaaa", Some(&["aaa", "a"])),
    ("(x)", "y", None),
    // stap's regex_grouping.stp
    ("a*", "aaa", Some(&["aaa"])),
    ("a?", "aaa", Some(&["a"])),
    ("(ab)*", "abab", Some(&["abab", "ab"])),
    ("(ab)?", "ab", Some(&["ab", "ab"])),
    ("c(ab)*", "cabab", Some(&["cabab", "ab"])),
    ("c(ab)?", "cab", Some(&["cab", "ab"])),
    ("c(ab)?", "cabab", Some(&["cab", "ab"])),
    ("re(gex)", "regex", Some(&["regex", "gex"])),
    ("regex", "unrelated", None),
    ("a|b", "ab", Some(&["a"])),
    ("a+|b", "baaab", Some(&["b"])),
    ("a*|b", "aaab", Some(&["aaa"])),
    ("b|a*", "baaab", Some(&["b"])),
    ("(.*).*", "abcdef", Some(&["abcdef", "abcdef"])),
    ("\\\\", "\\", Some(&["\\"])),
    ("abc", "xabcy", Some(&["abc"])),
    ("ab*bc", "abbbbc", Some(&["abbbbc"])),
    ("ab?bc", "abbc", Some(&["abbc"])),
    ("^abc$", "abcc", None),
    ("a[b-d]e", "abd", None),
    ("a[b-d]e", "ace", Some(&["ace"])),
    ("a\\(*b", "ab", Some(&["ab"])),
    ("a\\(*b", "a((b", Some(&["a((b"])),
    ("(a+|b)+", "ab", Some(&["ab", "b"])),
    ("([abc])*d", "abbbcd", Some(&["abbbcd", "c"])),
    ("^(ab|cd)e", "abcde", None),
    ("(ab|cd)e$", "abcde", Some(&["cde", "cd"])),
    ("[A-Za-z_][A-Za-z0-9_]*", "alpha", Some(&["alpha"])),
    ("(bc+d$|ef*g.|h?i(j|k))", "ij", Some(&["ij", "ij", "j"])),
    ("(bc+d$|ef*g.|h?i(j|k))", "effg", None),
    (
        "(bc+d$|ef*g.|h?i(j|k))",
        "00effg12",
        Some(&["effg1", "effg1", ""]),
    ),
    (
        "(((((((((a)))))))))",
        "a",
        Some(&["a", "a", "a", "a", "a", "a", "a", "a", "a", "a"]),
    ),
    ("\\((.*),", "(.*)\\)", None),
    ("[k]", "ab", None),
    ("abcd", "abcd", Some(&["abcd"])),
    ("a(bc)d", "abcd", Some(&["abcd", "bc"])),
    ("ab[cde]", "xyabez", Some(&["abe"])),
    (
        "^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\\?([^#]*))?(#(.*))?",
        "pkg:/pattern/matching.html#intro",
        Some(&[
            "pkg:/pattern/matching.html#intro",
            "pkg:",
            "pkg",
            "",
            "",
            "/pattern/matching.html",
            "",
            "",
            "#intro",
            "intro",
        ]),
    ),
    (
        "^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\\?([^#]*))?(#(.*))?",
        "//host.example/pattern/matching.html?query#intro",
        Some(&[
            "//host.example/pattern/matching.html?query#intro",
            "",
            "",
            "//host.example",
            "host.example",
            "/pattern/matching.html",
            "?query",
            "query",
            "#intro",
            "intro",
        ]),
    ),
    ("xy$", "xyz", None),
    ("[abc]*d", "foacabdxy", Some(&["acabd"])),
    ("a(.*)b", "a b", Some(&["a b", " "])),
    ("(^|foo)bar", "bar", Some(&["bar", ""])),
    ("(foo|^)bar", "bar", Some(&["bar", ""])),
    ("(foo|^)bar", "bazbar", None),
    ("a^b", "a^b", None),
    ("a t.st", "This is a test.", Some(&["a test"])),
    ("ab{0}c", "ac", Some(&["ac"])),
    ("ab{0}c", "abc", None),
    ("ab{0}c", "abbc", None),
    ("ab{1}{1}c", "ac", None),
    ("ab{1}{1}c", "abc", Some(&["abc"])),
    ("ab{1}{1}c", "abbc", None),
    ("ab{2}{2}c", "ac", None),
    ("ab{2}{2}c", "abbc", None),
    ("ab{2}{2}c", "abbbbc", Some(&["abbbbc"])),
    ("ab{2}{2}c", "abbbbbc", None),
    ("ab{0}{1}c", "ac", Some(&["ac"])),
    ("ab{0}{1}c", "abc", None),
    ("ab{0}{1}c", "abbc", None),
    ("ab{1}{0}c", "ac", Some(&["ac"])),
    ("ab{1}{0}c", "abc", None),
    ("ab{1}{0}c", "abbc", None),
    ("ab{0}*c", "ac", Some(&["ac"])),
    ("ab{0}*c", "abc", None),
    ("ab{0}*c", "abbc", None),
    ("ab{0}?c", "ac", Some(&["ac"])),
    ("ab{0}?c", "abc", None),
    ("ab{0}?c", "abbc", None),
    ("ab{0}+c", "ac", Some(&["ac"])),
    ("ab{0}+c", "abc", None),
    ("ab{0}+c", "abbc", None),
    ("foo", "b\u{e4}rfoob\u{e4}z", Some(&["foo"])),
    ("b.*foo", "b\u{e4}rfoob\u{e4}z", Some(&["b\u{e4}rfoo"])),
    ("foo", "barfoom", Some(&["foo"])),
    ("foo", "barsoom", None),
    ("a(b)(c)", "abc", Some(&["abc", "b", "c"])),
    ("a", "a", Some(&["a"])),
];

/// The script line of one case: on a match, the group count and every
/// group in brackets; else `nomatch`.
fn case_line(p: &str, s: &str) -> String {
    format!(
        "if ({} =~ {}) {{ printf(\"%d\", ngroups()); for (i = 0; i < ngroups(); i++) \
         printf(\" [%s]\", matched(i)); printf(\"\\n\") }} else println(\"nomatch\")\n",
        lit(s),
        lit(p)
    )
}

/// What `case_line` prints for the expected groups.
fn want_line(groups: Option<&[&str]>) -> String {
    match groups {
        None => "nomatch\n".to_string(),
        Some(g) => {
            let mut out = g.len().to_string();
            for x in g {
                out.push_str(&format!(" [{x}]"));
            }
            out.push('\n');
            out
        }
    }
}

#[test]
fn groups_of_the_design_table_and_stap_checks_on_the_c_core() {
    let body: String = CASES.iter().map(|(p, s, _)| case_line(p, s)).collect();
    let ran = run(&format!("probe begin {{\n{body}}}\n"));
    let got = ran.ok();
    let lines: Vec<&str> = got.lines().collect();
    assert_eq!(lines.len(), CASES.len(), "{got}");
    for ((p, s, g), line) in CASES.iter().zip(&lines) {
        assert_eq!(
            format!("{line}\n"),
            want_line(*g),
            "{p:?} =~ {s:?} (all output:\n{got})"
        );
    }
    // Every group program went through the verifier and REMATCHS ran.
    let asm = vm_spec::disasm::disassemble(&ran.program);
    assert!(
        asm.contains("REMATCHS") && !asm.contains("REMATCH "),
        "{asm}"
    );
}

#[test]
fn errors_are_stap_s() {
    let src = r#"probe begin {
  try { x = "abc" =~ "z"; println(matched(0)) } catch (e) { println(e) }
  try { x = "abc" =~ "b"; println(matched(3)) } catch (e) { println(e) }
  try { x = "abc" =~ "(b)"; println(matched(-1)) } catch (e) { println(e) }
  try { x = "abc" =~ "z"; println(ngroups()) } catch (e) { println(e) }
  x = "abc" =~ "(b)"; println(matched(1))
}
probe begin { println(matched_str()) }
"#;
    let ran = run(src);
    assert_eq!(
        ran.report(""),
        "Attempted to get subexpression 0 from failed match\n\
         Attempted to get nonexistent subexpression 3\n\
         Attempted to get nonexistent subexpression -1\n\
         Attempted to get subexpression count from failed match\n\
         b\n\
         ERROR: Attempted to get subexpression 0 from failed match\n"
    );
}

#[test]
fn a_function_sees_its_caller_s_match_and_a_match_ends_with_the_run() {
    let src = r#"function g() { return matched(1) . sprint(ngroups()) }
function m(s) { return s =~ "^(.)(.)" }
probe begin { if ("xyz" =~ "y(z)") println(g()); if (m("ab")) println(matched_str()) }
"#;
    assert_eq!(run(src).ok(), "z2\nab\n");
}

#[test]
fn only_scripts_that_ask_pay() {
    let plain = build("probe begin { println(\"ab\" =~ \"(a)b\") }");
    assert!(plain.program.regexes[0].groups.is_none());
    let asm = vm_spec::disasm::disassemble(&plain.program);
    assert!(!asm.contains("REMATCHS"), "{asm}");
    let with = build("probe begin { if (\"ab\" =~ \"(a)b\") println(matched(1)) }");
    let g = with.program.regexes[0]
        .groups
        .as_ref()
        .expect("group program");
    assert_eq!(g.nslots, 4);
    check(&with.program);
}

#[test]
fn subject_is_copied_and_long_strings_cost_fuel() {
    // The group survives the subject's variable changing.
    let src =
        r#"probe begin { s = "key=value"; if (s =~ "=(.*)") { s = "zzz"; println(matched(1)) } }"#;
    assert_eq!(run(src).ok(), "value\n");
    // One unit of fuel per position: 30 matches of a 400-byte string do
    // not fit MAXACTION 10000.
    let src = r#"probe begin { s = sprintf("%400s", "x"); println(strlen(s)); for (i = 0; i < 30; i++) if (s =~ "(x)$") n++; println(n, matched(1)) }"#;
    let ran = run(src);
    assert_eq!(ran.report(""), "400\nERROR: MAXACTION exceeded\n");
    // Without matched() in the script, `=~` is REMATCH and costs nothing.
    let src = r#"probe begin { s = sprintf("%400s", "x"); for (i = 0; i < 30; i++) if (s =~ "(x)$") n++; println(n) }"#;
    assert_eq!(run(src).ok(), "30\n");
}

#[test]
fn corpus_fortyseven_compiles_and_fails_to_match() {
    let file = vm_testkit::paths::corpus("stp-testsuite/buildok/fortyseven.stp");
    let src = std::fs::read_to_string(&file).expect("fortyseven.stp");
    assert_eq!(run(&src).report(""), "match fail\n");
}

#[test]
fn too_many_groups_or_instructions_are_refused() {
    let many = "(a)".repeat(16);
    let e = fail(&format!(
        "probe begin {{ if (\"a\" =~ \"{many}\") println(matched(1)) }}"
    ));
    assert!(
        e.contains("not supported yet: regex subexpressions of") && e.contains("16 groups"),
        "{e}"
    );
    let e = fail("probe begin { if (\"a\" =~ \"(a{300})\") println(matched(1)) }");
    assert!(e.contains("program instructions, the VM takes 256"), "{e}");
    // Fifteen groups fit.
    let ok = "(a)".repeat(15);
    let src = format!(
        "probe begin {{ if (\"{}\" =~ \"{ok}\") println(ngroups()) }}",
        "a".repeat(15)
    );
    assert_eq!(run(&src).ok(), "16\n");
}

#[test]
fn the_guest_case_runs_on_the_c_core_too() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/cases/regex-groups");
    let src = std::fs::read_to_string(dir.join("script.stp")).expect("script.stp");
    let want = std::fs::read_to_string(dir.join("expect")).expect("expect");
    let opts = RunOptions {
        check: true,
        timers: 2,
        ..Default::default()
    };
    let ran = run_begin_end(&src, &opts);
    assert_eq!(ran.report(""), want);
}
