//! Guru-only scripts: embedded C is refused once per script, at its first
//! block, with the reason (stapvm runs only verified bytecode; no -g).
use compiler::{check, compile, Options};

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
