//! Associative arrays end to end in user space: scripts compiled, run on
//! the C core (`HostSession`: begin, then end probes), their output and the
//! arrays printed at exit as stap prints them; and the semantic errors.
mod common;

/// Runs begin then end probes; output, then the arrays printed at exit,
/// then an `ERROR:` line per run-time error.
fn run(src: &str) -> String {
    let r = common::run_begin_end(src, &Default::default());
    r.report(&common::arrays_at_exit(&r.program, &r.session))
}

#[test]
fn read_write_incr_in_delete() {
    let out = run(r#"global a, s
probe begin {
  a[1] = 10; a[2] += 5; a[2]++; ++a[3]; a[1] -= 3; a[1] *= 2
  s["x", 1] = "one"; s["y", 2] = "two"; s["x", 1] .= "!"
  printf("%d %d %d %d\n", a[1], a[2], a[3], a[4])
  printf("%s %s [%s]\n", s["x", 1], s["y", 2], s["z", 3])
  printf("%d %d %d\n", 1 in a, 4 in a, ["y", 2] in s)
  delete a[1]
  printf("%d %d\n", 1 in a, a[1])
  x = a[2]--
  printf("%d %d\n", x, a[2])
  delete a
  printf("%d\n", 2 in a)
}"#);
    assert_eq!(out, "14 6 1 0\none! two []\n1 0 1\n0 0\n6 5\n0\n");
}

#[test]
fn foreach_orders_and_limit() {
    let out = run(r#"global a
probe begin {
  a[3, "c"] = 10; a[1, "z"] = 30; a[2, "b"] = 20; a[5, "a"] = 20
  foreach ([k, s] in a) printf("%d%s ", k, s); println("")
  foreach ([k, s] in a-) printf("%d%s ", k, s); println("")
  foreach ([k, s] in a+ limit 2) printf("%d%s ", k, s); println("")
  foreach ([k+, s] in a) printf("%d%s ", k, s); println("")
  foreach ([k, s-] in a) printf("%d%s ", k, s); println("")
  foreach (v = [k, s] in a limit 3) { if (k == 1) continue; printf("%d=%d ", k, v) }; println("")
  foreach ([k, s] in a) { if (k == 2) break; foreach ([j, t] in a+ limit 1) printf("%d/%d ", k, j) }
  println("")
}"#);
    assert_eq!(
        out,
        "3c 1z 2b 5a \n1z 2b 5a 3c \n3c 2b \n1z 2b 3c 5a \n1z 3c 2b 5a \n3=10 2=20 \n3/3 1/3 \n"
    );
}

#[test]
fn overflow_wrap_and_exit_print() {
    let out = run("global a[3]\nprobe begin { for (i = 0; i < 4; i++) a[i] = i }");
    assert_eq!(
        out,
        "a[2]=2\na[1]=1\na[0]=0\nERROR: Array overflow, check size limit (3)\n"
    );
    let out = run("global foo%[5]\nprobe begin { for (i = 0; i < 10; i++) foo[i] = i; exit() }");
    assert_eq!(out, "foo[9]=9\nfoo[8]=8\nfoo[7]=7\nfoo[6]=6\nfoo[5]=5\n");
    let out = run("global n\nprobe begin { n[\"a\"] = \"x\\ty\" }");
    assert_eq!(out, "n[\"a\"]=\"x\\ty\"\n");
}

#[test]
fn maxmapentries_overflow() {
    let out = run("global a\nprobe begin { for (i = 0; i < 3000; i++) a[i] = 1; println(\"no\") }");
    assert!(
        out.ends_with("ERROR: Array overflow, check MAXMAPENTRIES\n"),
        "{out}"
    );
}

#[test]
fn semantic_errors() {
    let e = common::fail("global a\nprobe begin { foreach (k in a) a[k] = 1 }");
    assert!(
        e.contains("variable 'a' modified during 'foreach' iteration"),
        "{e}"
    );
    let e = common::fail("global a\nfunction f() { a[1] = 2 }\nfunction g() { f() }\nprobe begin { foreach (k in a) g() }");
    assert!(
        e.contains("function call modifies var 'a' during 'foreach' iteration"),
        "{e}"
    );
    let e = common::fail("global a\nprobe begin { a[1] = 1; a[\"x\"] = 2 }");
    assert!(e.contains("type mismatch"), "{e}");
    let e = common::fail("global a\nprobe begin { a[1] = 1; a[1, 2] = 2 }");
    assert!(e.contains("inconsistent arity"), "{e}");
    let e = common::fail("global a\nprobe begin { a[1] = 1; a[2] = \"s\" }");
    assert!(e.contains("type mismatch"), "{e}");
    let e = common::fail("global a\nprobe begin { a[1] = 1; x = a[*] }");
    assert!(e.contains("not supported yet"), "{e}");
}
