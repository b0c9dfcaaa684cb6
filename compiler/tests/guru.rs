//! Guru-only scripts: embedded C is refused once per script, at its first
//! block, with the reason (stapvm runs only verified bytecode; no -g);
//! writes to target values and guru tapset functions are refused with the
//! same reason (`compiler::guru`), at the construct, not with an unrelated
//! error. Absolute statement probes, guru in stap, compile here (kprobes at
//! an address the loader resolves).
use compiler::{check, compile, Options, NO_GURU};

fn refusal(src: &str) -> String {
    let o = Options::default();
    let e = compile("x.stp", src, &o).unwrap_err();
    let c = check("x.stp", src, &o).unwrap_err();
    assert_eq!(e.rendered, c.rendered, "compile and check agree");
    e.rendered
}

#[test]
fn embedded_c_is_refused_once_at_the_first_block() {
    let src = "global n\n  %{ #include <linux/sched.h> %}\n\
               function f:long() %{ STAP_RETURN(1); %}\n\
               function g:long() { return %{ 1 %} }\n\
               probe begin { n = f() + g() }\n";
    let r = refusal(src);
    assert_eq!(r.matches("embedded C cannot run").count(), 1, "{r}");
    assert!(
        r.starts_with(
            "parse error: embedded C cannot run: stapvm runs only verified bytecode \
             and has no guru mode (there is no -g)\n"
        ),
        "{r}"
    );
    assert!(r.contains("at x.stp:2:3\n"), "{r}");
    assert!(
        r.contains("     source:   %{ #include <linux/sched.h> %}\n"),
        "{r}"
    );
    assert!(r.contains("\n               ^\n"), "{r}");
    assert!(!r.contains("need stap -g"), "{r}");
}

#[test]
fn an_embedded_function_body_alone_is_refused() {
    let r = refusal("function f:long() %{ STAP_RETURN(1); %}\nprobe begin { print(f()) }\n");
    assert_eq!(r.matches("embedded C cannot run").count(), 1, "{r}");
    assert!(r.contains("at x.stp:1:19\n"), "{r}");
}

#[test]
fn other_parse_errors_are_still_reported() {
    let r = refusal("%{ x %}\nprobe begin { x = }\n");
    assert_eq!(r.matches("embedded C cannot run").count(), 1, "{r}");
    assert!(r.contains("parse error: expected"), "{r}");
}

#[test]
fn guru_only_operators_say_why() {
    let r = refusal("probe kernel.function(\"vfs_read\") { print(@kregister(0)) }\n");
    assert!(
        r.contains("@kregister is guru-only: stapvm runs only verified bytecode"),
        "{r}"
    );
}

/// The one semantic error of `src`, which must be a guru refusal.
fn guru_error(src: &str) -> String {
    let r = refusal(src);
    let errors: Vec<&str> = r
        .lines()
        .filter(|l| l.starts_with("semantic error:") || l.starts_with("parse error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{r}");
    assert!(errors[0].contains(NO_GURU), "{r}");
    assert!(!r.contains("need stap -g"), "{r}");
    assert!(!r.contains("lvalue"), "{r}");
    errors[0].to_string()
}

#[test]
fn writes_to_target_variables_are_guru_only() {
    // security-band-aids/cve-2008-0600.stp, as stap -g runs it.
    let e = guru_error("probe kernel.function(\"vmsplice_to_user\") {\n  $nr_segs = 0\n}\n");
    assert_eq!(
        e,
        "semantic error: write to target variable not permitted: stapvm runs only verified \
         bytecode and has no guru mode (there is no -g): identifier '$nr_segs' at x.stp:2:3"
    );
    for (src, at) in [
        (
            "probe kernel.function(\"f\").return { $return = -1 }",
            "'$return'",
        ),
        ("probe kernel.function(\"f\") { $p->len = 1 }", "'$p'"),
        ("probe kernel.function(\"f\") { $p->a->b++ }", "'$p'"),
        ("probe kernel.function(\"f\") { $argv[1] = 0 }", "'$argv'"),
        ("probe kernel.function(\"f\") { $x += 2 }", "'$x'"),
        ("probe kernel.function(\"f\") { --$x }", "'$x'"),
        (
            "probe begin { @cast(0, \"task_struct\")->pid = 1 }",
            "operator '@cast'",
        ),
        ("probe begin { @var(\"jiffies\") = 1 }", "operator '@var'"),
    ] {
        let e = guru_error(src);
        assert!(
            e.contains("write to target variable not permitted") && e.contains(at),
            "{src}: {e}"
        );
    }
}

#[test]
fn reading_target_variables_and_writing_locals_stay_allowed() {
    // The refusal is about writes to target values only.
    let o = Options::default();
    let src = "global a\nprobe kernel.function(\"vfs_read\") { x = $count; x++; a[$count] = x }";
    compile("x.stp", src, &o).unwrap();
}

#[test]
fn guru_tapset_functions_say_why() {
    for f in [
        "raise(9)",
        "panic(\"x\")",
        "mdelay(1)",
        "set_kernel_long(0, 1)",
        "printk(0, \"x\")",
    ] {
        let e = guru_error(&format!("probe begin {{ {f} }}"));
        let name = f.split('(').next().unwrap_or("");
        assert!(e.contains(&format!("{name}() is guru-only: ")), "{e}");
    }
    // A script's own function of that name is just a function.
    let o = Options::default();
    compile(
        "x.stp",
        "function raise(s) { return s }\nprobe begin { print(raise(9)) }",
        &o,
    )
    .unwrap();
}

#[test]
fn absolute_statement_probes_are_kprobes_at_an_address() {
    // buildok/twentyeight.stp, guru in stap: here the loader finds the
    // symbol holding the address and the kernel's kprobe checks guard it.
    for src in [
        "probe kernel.statement(0).absolute { log(\"absolute zero reached\") }",
        "probe kprobe.statement(0xffffffff81000010).absolute { }",
    ] {
        let c = compile("x.stp", src, &Options::default()).unwrap();
        let p = &c.program.probes[0];
        assert_eq!(u32::from(p.kind), vm_spec::abi::STP_PROBE_KPROBE, "{src}");
        assert!(
            matches!(p.target, vm_spec::program::ProbeTarget::Address(_)),
            "{src}"
        );
    }
    let e = compile(
        "x.stp",
        "probe kernel.statement(\"f\").absolute { }",
        &Options::default(),
    )
    .unwrap_err()
    .rendered;
    assert!(e.contains("probe point mismatch"), "{e}");
}

/// Guru examples that fail before their guru construct is reached, with
/// why; each must leave this list once it is refused as guru.
const GURU_PENDING: &[(&str, &str)] = &[(
    "security-band-aids__cve-2026-31431.stp",
    "its probe conditions name stap's cve tapset globals (cve_enabled_p ...), \
         which stapvm's tapset lacks: alias expansion stops before the body",
)];

/// Guru examples stapvm compiles without -g on purpose, with why.
const GURU_ACCEPTED: &[(&str, &str)] = &[(
    "network__netfilter_drop.stp",
    "its guru construct is `$verdict = nf_drop`: stap needs -g for any write of \
         the netfilter verdict, stapvm allows NF_DROP and NF_ACCEPT only (refused at \
         compile time for other constants, a run-time error and NF_ACCEPT for other \
         computed values: docs/tapset.md, Netfilter hooks)",
)];

/// The script arguments of a test_check line: the words after the
/// script, less stap's options and their values.
fn check_args(line: &str, script: &str) -> Vec<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some(at) = words.iter().position(|w| *w == script) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut it = words[at + 1..].iter();
    while let Some(w) = it.next() {
        if ["-x", "-c", "-d", "-G"].contains(w) {
            it.next();
        } else if !w.starts_with('-') {
            out.push(w.trim_matches('\'').to_string());
        }
    }
    out
}

#[test]
fn every_guru_example_is_refused_as_guru() {
    // The examples whose test_check runs stap -g: without -g each must be
    // refused for what it does, with the guru message.
    let dir = vm_testkit::paths::corpus("stp-examples");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut checked = 0;
    let mut wrong = Vec::new();
    for e in rd.flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "stp") {
            continue;
        }
        let Ok(m) = std::fs::read_to_string(p.with_extension("meta")) else {
            continue;
        };
        let Some(line) = m.lines().find(|l| l.starts_with("test_check:")) else {
            continue;
        };
        let guru = line
            .split_whitespace()
            .any(|w| w.starts_with('-') && !w.starts_with("--") && w[1..].starts_with('g'));
        if !guru {
            continue;
        }
        let file = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let script = file.split_once("__").map_or(file, |x| x.1);
        let src = String::from_utf8_lossy(&std::fs::read(&p).unwrap_or_default()).into_owned();
        let opts = Options {
            args: check_args(line, script),
            ..Options::default()
        };
        checked += 1;
        let pending = GURU_PENDING.iter().any(|(f, _)| *f == file);
        let accepted = GURU_ACCEPTED.iter().any(|(f, _)| *f == file);
        match compile(&p.display().to_string(), &src, &opts) {
            Ok(_) if accepted => {}
            Ok(_) => wrong.push(format!("{file}: compiles")),
            Err(f) if accepted => wrong.push(format!(
                "{file}: on GURU_ACCEPTED but refused: {}",
                f.rendered.lines().next().unwrap_or("")
            )),
            Err(f) if f.rendered.contains(NO_GURU) => {
                if pending {
                    wrong.push(format!("{file}: refused as guru now: off GURU_PENDING"));
                }
            }
            Err(f) if !pending => wrong.push(format!(
                "{file}: {}",
                f.rendered.lines().next().unwrap_or("")
            )),
            Err(_) => {}
        }
    }
    assert!(checked >= 30, "{checked} guru examples");
    assert!(wrong.is_empty(), "{wrong:#?}");
}
