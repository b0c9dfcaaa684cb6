//! `try { } catch [(msg)] { }` end to end in user space: scripts compiled,
//! verified, and run on both the C core (`HostSession`) and the reference
//! VM (`vm_testkit::diff::check_case` compares records, registers, fuel and
//! outcomes), with stap's semantics: what is caught (error(), division by
//! 0, read faults, array overflow, MAXNESTING, from called functions too)
//! and what is not (MAXACTION), the message a catch variable receives,
//! nesting, loops, and a caught error neither printed nor counted.
mod common;
use vm_spec::abi;
use vm_testkit::gen::Case;
use vm_testkit::HostEnv;

/// Runs the begin probes on both VMs (which must agree; then the end
/// probes on the C core); the output, then one `ERROR: message` line per
/// uncaught run-time error.
fn run(src: &str) -> String {
    run_with(src, &[])
}

fn run_with(src: &str, defines: &[(&str, &str)]) -> String {
    let opts = common::RunOptions {
        compile: compiler::Options {
            defines: defines
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        },
        check: true,
        ..Default::default()
    };
    let r = common::run_begin_end(src, &opts);
    let prog = &r.program;
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
        panic!("C core and reference VM differ: {m}");
    }
    r.report("")
}

#[test]
fn division_by_zero_is_caught_with_its_message() {
    let out = run(r#"probe begin {
  try { println("in"); a = 1 / 0; println("not here") } catch (m) { printf("caught [%s]\n", m) }
  println("after")
}"#);
    assert_eq!(out, "in\ncaught [division by 0]\nafter\n");
}

#[test]
fn catch_without_a_variable_and_nothing_failing() {
    let out = run(r#"probe begin {
  m = "kept"
  try { x = 1 } catch (m) { println("no") }
  try { error("e") } catch { println("caught") }
  printf("%s %d\n", m, x)
}"#);
    assert_eq!(out, "caught\nkept 1\n");
}

#[test]
fn errors_of_called_functions_are_caught_by_the_caller() {
    let out = run(
        r#"function f(x) { if (x > 2) error(sprintf("deep %d", x)); return f(x + 1) }
function g() { try { return f(0) } catch (m) { printf("g caught %s\n", m) } return -1 }
probe begin {
  try { f(0) } catch (m) { printf("caught [%s]\n", m) }
  printf("g = %d\n", g())
}"#,
    );
    assert_eq!(out, "caught [deep 3]\ng caught deep 3\ng = -1\n");
}

#[test]
fn nested_try_and_errors_in_a_catch_block() {
    let out = run(r#"probe begin {
  try {
    try { error("inner") } catch (e) { printf("inner caught %s\n", e); error("again") }
    println("not here")
  } catch (e2) { printf("outer caught %s\n", e2) }
  try { try { x = 1 } catch { } ; error("outer body") } catch (e3) { println(e3) }
}"#);
    assert_eq!(out, "inner caught inner\nouter caught again\nouter body\n");
}

#[test]
fn break_and_continue_out_of_a_try_body() {
    let out = run(r#"probe begin {
  try {
    for (i = 0; i < 5; i++) {
      try { if (i == 1) continue; if (i == 3) break; println(i) } catch { println("x") }
    }
    error("after the loop")
  } catch (m) { println(m) }
  while (1) { try { break } catch { } }
  error("uncaught")
}"#);
    assert_eq!(out, "0\n2\nafter the loop\nERROR: uncaught\n");
}

#[test]
fn maxaction_is_not_caught() {
    let out = run_with(
        r#"probe begin { try { while (1) { } } catch { println("no") } }"#,
        &[("MAXACTION", "100")],
    );
    assert_eq!(out, "ERROR: MAXACTION exceeded\n");
}

#[test]
fn maxnesting_and_array_overflow_are_caught() {
    let out = run(r#"global a[2]
function r(n) { return r(n + 1) }
probe begin {
  try { r(0) } catch (m) { println(m) }
  try { a[1] = 1; a[2] = 2; a[3] = 3 } catch (m) { println(m) }
  try { println(kernel_string(0)) } catch (m) { println(m) }
}"#);
    assert_eq!(
        out,
        "MAXNESTING exceeded\nArray overflow, check size limit (2)\n\
         kernel string copy fault at 0x0 [man error::fault]\n"
    );
}

#[test]
fn try_inside_foreach() {
    let out = run(r#"global a
probe begin {
  a[1] = 10; a[2] = 0; a[3] = 5
  foreach (k+ in a) { try { printf("%d\n", 100 / a[k]) } catch (m) { printf("%d: %s\n", k, m) } }
}"#);
    assert_eq!(out, "10\n2: division by 0\n20\n");
}

#[test]
fn code_shape() {
    let c = common::build("probe begin { try { error(\"x\") } catch (m) { println(m) } }");
    let h = &c.program.handlers[c.program.probes[0].handler as usize];
    let names = common::names(h);
    assert!(names.contains(&"TRY"), "{names:?}");
    assert!(names.contains(&"TRYEND"), "{names:?}");
}

#[test]
fn a_failed_string_read_leaves_the_variable_as_it_was() {
    let out = run(r#"probe begin {
  s = "old"
  try { s = kernel_string(0) } catch { }
  println(s)
}"#);
    assert_eq!(out, "old\n");
}
