//! `foreach` beyond a probe body's own loops, run on the C core
//! (`HostSession`): in user functions (per-frame iterators, recursion),
//! nested in functions called from a foreach, over array slices
//! (`arr[1, *]`), and over statistics arrays sorted by any extractor.
mod common;
use vm_spec::abi;
use vm_testkit::host::HostSession;

/// Runs begin then end probes; the output, then an `ERROR:` line per
/// run-time error.
fn run(src: &str) -> String {
    common::run_begin_end(src, &Default::default()).report("")
}

#[test]
fn foreach_in_a_function_called_from_a_foreach() {
    // The function's iterator 0 is not the caller's iterator 0.
    let out = run(r#"global a, b
function sum_b() { t = 0; foreach (k in b) t += b[k]; return t }
function keys_of_a(sep) {
  s = ""
  foreach (k+ in a limit 2) s .= sprint(k) . sep
  return s
}
probe begin {
  a[3] = 1; a[1] = 2; a[2] = 3; b["x"] = 10; b["y"] = 20
  foreach (k+ in a) printf("%d:%d:%s\n", k, sum_b(), keys_of_a(","))
}"#);
    assert_eq!(out, "1:30:1,2,\n2:30:1,2,\n3:30:1,2,\n");
}

#[test]
fn nested_foreach_in_a_function_and_recursion() {
    let out = run(r#"global a
function pairs() {
  n = 0
  foreach (i+ in a) foreach (j- in a) if (i < j) n++
  return n
}
function walk(depth) {
  if (depth == 0) return ""
  s = ""
  foreach (k+ in a) s .= sprintf("%d%s|", k, walk(depth - 1))
  return s
}
probe begin {
  a[1] = 1; a[2] = 1; a[3] = 1
  println(pairs())
  println(walk(2))
}"#);
    assert_eq!(out, "3\n11|2|3||21|2|3||31|2|3||\n");
}

#[test]
fn recursion_past_maxnesting_in_a_foreach_is_an_error_not_a_crash() {
    let out = run(r#"global a
function f(n) { foreach (k in a) return f(n + 1); return n }
probe begin { a[1] = 1; println(f(0)) }"#);
    assert!(out.contains("ERROR: MAXNESTING exceeded"), "{out}");
}

#[test]
fn foreach_over_a_slice() {
    let out = run(r#"global arr, s
probe begin {
  arr[1, "a"] = 10; arr[2, "a"] = 20; arr[1, "b"] = 30; arr[3, "a"] = 40
  foreach ([x, y] in arr[1, *]) printf("%d %s %d\n", x, y, arr[x, y])
  foreach ([x, y] in arr[*, "a"]-) printf("%d %s\n", x, y)
  foreach ([x, y] in arr[2, "a"]) printf("only %d %s\n", x, y)
  i = 0
  foreach ([x, y] in arr[++i, *]) printf("i=%d %d %s\n", i, x, y)
  s["k", 1] = 1; s["k", 2] = 2; s["j", 1] = 3
  foreach ([p, q] in s["k", *] limit 1) printf("%s %d\n", p, q)
}"#);
    assert_eq!(
        out,
        "1 a 10\n1 b 30\n3 a\n2 a\n1 a\nonly 2 a\ni=1 1 a\ni=1 1 b\nk 1\n"
    );
}

#[test]
fn slice_type_and_arity_errors() {
    let e = common::fail(
        "global a\nprobe begin { a[1, 2] = 1; foreach ([x, y] in a[\"s\", *]) print(x) }",
    );
    assert!(e.contains("type mismatch"), "{e}");
    let e =
        common::fail("global a\nprobe begin { a[1, 2] = 1; foreach ([x, y] in a[1]) print(x) }");
    assert!(e.contains("arity"), "{e}");
}

#[test]
fn statistics_arrays_sorted_by_any_extractor() {
    // a: count 3 sum 6 min 1 max 3 avg 2; b: count 1 sum 10 min 10 max 10
    // avg 10; c: count 2 sum -4 min -5 max 1 avg -2.
    let src = r#"global s
probe begin {
  s["a"] <<< 1; s["a"] <<< 2; s["a"] <<< 3
  s["b"] <<< 10
  s["c"] <<< -5; s["c"] <<< 1
  foreach (k in s @sum-) printf("%s ", k); println("")
  foreach (k in s @sum+) printf("%s ", k); println("")
  foreach (k in s @min+) printf("%s ", k); println("")
  foreach (k in s @max-) printf("%s ", k); println("")
  foreach (k in s @avg+ limit 2) printf("%s ", k); println("")
  foreach (k in s @count-) printf("%s ", k); println("")
  foreach (k in s-) printf("%s ", k); println("")
}"#;
    assert_eq!(
        run(src),
        "b a c \nc a b \nc a b \nb a c \nc a \na c b \na c b \n"
    );
    // Ties stay in insertion order, both directions.
    let out = run(r#"global s
probe begin { s[3] <<< 5; s[1] <<< 5; s[2] <<< 4
  foreach (k in s @max-) printf("%d ", k); foreach (k in s @max+) printf("%d ", k) }"#);
    assert_eq!(out, "3 1 2 2 3 1 ");
    // `@variance` sorts by @count as in stap 5.x: tests/stat_gaps.rs.
}

/// The program of `src` with every MITER's order set to `sort`, verified.
fn verify_with_sort(src: &str, sort: u8) -> Result<(), String> {
    let mut prog = common::build(src).program;
    for h in &mut prog.handlers {
        for insn in &mut h.code {
            if u32::from(insn.op) == abi::STP_OP_MITER {
                insn.c = sort;
            }
        }
    }
    HostSession::from_program(&prog)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn verifier_takes_extractor_orders_only_on_statistics_values() {
    let stat = "global s\nprobe begin { s[1] <<< 1; foreach (k in s-) print(k) }";
    let long = "global a\nprobe begin { a[1] = 1; foreach (k in a-) print(k) }";
    let sum_desc = 15 | (abi::STP_SORTX_SUM as u8) << 4 | 0x80;
    assert_eq!(verify_with_sort(stat, sum_desc), Ok(()));
    assert_eq!(
        verify_with_sort(stat, 15 | (abi::STP_SORTX_AVG as u8) << 4),
        Ok(())
    );
    for (src, sort) in [
        (long, sum_desc),
        (stat, 1 | (abi::STP_SORTX_SUM as u8) << 4),
        (stat, 15 | (abi::STP_SORTX__COUNT as u8) << 4),
    ] {
        let e = verify_with_sort(src, sort).expect_err("refused");
        assert!(e.contains("MITER order"), "{e}");
    }
}

#[test]
fn the_guest_case_runs_the_same_in_user_space() {
    let src = include_str!("../../tests/cases/foreach-functions/script.stp");
    let want = include_str!("../../tests/cases/foreach-functions/expect");
    assert_eq!(run(src), want);
}
