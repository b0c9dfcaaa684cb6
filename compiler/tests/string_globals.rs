//! String globals end to end in user space: scripts compiled, verified and
//! run on the C core (`HostSession`: begin, then end probes); each string
//! scalar is a one-entry map (docs/design.md §7), printed at exit as stap
//! prints it (`name="value"`) when written and never read.
mod common;
use vm_spec::maps::{quoted, Val};
use vm_spec::program::{GlobalType, MapValue, Program};
use vm_testkit::host::HostSession;

/// The lines printed at exit for string globals written and never read,
/// read from their maps as the CLI does.
fn exit_lines(prog: &Program, s: &HostSession) -> String {
    let mut out = String::new();
    for g in prog.globals.iter().filter(|g| g.print_at_exit) {
        assert_eq!(g.ty, GlobalType::Str, "{}", g.name);
        let (mi, m) = prog
            .maps
            .iter()
            .enumerate()
            .find(|(_, m)| m.name == g.name && m.value == MapValue::Str)
            .expect("the global's map");
        let e = s.map_entries(mi, m).expect("map");
        let v = match e.first().map(|e| &e.value) {
            Some(Val::Str(b)) => b.clone(),
            _ => Vec::new(),
        };
        out.push_str(&format!("{}={}\n", g.name, quoted(&v)));
    }
    out
}

/// Runs begin then end probes; the output, the exit lines, then an
/// `ERROR:` line per run-time error.
fn run(src: &str) -> String {
    let r = common::run_begin_end(src, &Default::default());
    r.report(&exit_lines(&r.program, &r.session))
}

#[test]
fn read_write_concat_delete() {
    let out = run(r#"global s = "init", t
probe begin {
  printf("[%s] [%s]\n", s, t)
  t = s . "!"
  s .= "x"
  printf("%s %s %d\n", s, t, s == "initx")
}
probe end {
  delete s
  printf("[%s] %d\n", s, strlen(t))
  s = t . t
  println(s)
}"#);
    assert_eq!(out, "[init] []\ninitx init! 1\n[] 5\ninit!init!\n");
}

#[test]
fn functions_read_and_write_string_globals() {
    let out = run(r#"global name, calls
function greet(who) { name = who; calls++; return "hi " . name }
function last() { return name }
probe begin { println(greet("a")); println(greet("bb")); println(last() . " " . sprint(calls)) }"#);
    assert_eq!(out, "hi a\nhi bb\nbb 2\n");
}

#[test]
fn written_and_never_read_are_printed_quoted() {
    let src = r#"global msg, other = "kept", n
probe begin { msg = "a\"b\n"; n = 1 }"#;
    let r = common::run_begin_end(src, &Default::default());
    let prog = &r.program;
    let tys: Vec<GlobalType> = prog.globals.iter().map(|g| g.ty).collect();
    assert_eq!(tys, [GlobalType::Str, GlobalType::Str, GlobalType::Long]);
    // `other` is never written by a probe: only msg (and the long n).
    let at_exit: Vec<&str> = prog
        .globals
        .iter()
        .filter(|g| g.print_at_exit)
        .map(|g| g.name.as_str())
        .collect();
    assert_eq!(at_exit, ["msg", "n"]);
    let m = prog.maps.iter().position(|m| m.name == "msg").expect("map");
    let e = r.session.map_entries(m, &prog.maps[m]).expect("entries");
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].value, Val::Str(b"a\"b\n".to_vec()));
    assert_eq!(quoted(b"a\"b\n"), r#""a\"b\n""#);
}

#[test]
fn string_values_are_cut_at_maxstringlen() {
    let out = run(r#"global s
probe begin { s = "0123456789"; s .= s; s .= s; println(strlen(s)) }"#);
    assert_eq!(out, "40\n");
    let opts = common::RunOptions {
        compile: compiler::Options {
            defines: vec![("MAXSTRINGLEN".into(), "16".into())],
            args: Vec::new(),
        },
        ..Default::default()
    };
    let r = common::run_begin_end(
        r#"global s
probe begin { s = "0123456789"; s .= s; println(strlen(s)) }"#,
        &opts,
    );
    assert_eq!(r.output(), "15\n");
}

#[test]
fn type_conflicts_are_errors() {
    let e = common::fail("global s = \"x\"\nprobe begin { s = 1 }");
    assert!(e.contains("semantic error: type mismatch"), "{e}");
    let e = common::fail("global s\nprobe begin { s = \"a\"; s++ }");
    assert!(e.contains("semantic error"), "{e}");
}

#[test]
fn lowering_uses_the_global_map() {
    let c = common::build("global s\nprobe begin { s = \"a\"; x = s . s; println(x) }");
    let p = &c.program;
    assert_eq!(p.maps.len(), 1);
    assert_eq!(p.maps[0].capacity, 1);
    assert_eq!(p.maps[0].value, MapValue::Str);
    let names = common::names(&p.handlers[p.probes[0].handler as usize]);
    assert!(names.contains(&"MSETS"), "{names:?}");
    assert!(names.contains(&"MGETS"), "{names:?}");
    assert!(!names.contains(&"STG"), "{names:?}");
}
