//! Register allocation of expressions (issue 10): chains of one operator,
//! of any length and shape, need a few registers, so the scripts stap
//! accepts compile; `check` refuses, with `compile`'s message, what still
//! does not fit in the register files.
mod common;
use common::*;
use compiler::Options;

fn run(src: &str) -> String {
    let mut opts = RunOptions {
        check: true,
        ..Default::default()
    };
    opts.env.pid = 42;
    run_begin_end(src, &opts).ok()
}

/// `nregs` / `nsregs` of the last handler of `src`.
fn regs(src: &str) -> (u8, u8) {
    let c = build(src);
    check(&c.program);
    let h = c.program.handlers.last().unwrap();
    (h.nregs, h.nsregs)
}

fn joined(n: usize, sep: &str, term: impl Fn(usize) -> String) -> String {
    (0..n).map(term).collect::<Vec<_>>().join(sep)
}

/// `t0 op (t1 op (t2 op …))`.
fn right_leaning(n: usize, op: &str, term: impl Fn(usize) -> String) -> String {
    let mut s = term(n - 1);
    for i in (0..n - 1).rev() {
        s = format!("{} {op} ({s})", term(i));
    }
    s
}

#[test]
fn fifteen_sprints_concatenated() {
    let src = format!(
        "probe begin {{ x = {}; println(x) }}",
        joined(15, " . ", |i| format!("sprint({i})"))
    );
    assert_eq!(run(&src), "01234567891011121314\n");
    assert_eq!(regs(&src).1, 3);
}

#[test]
fn sixty_three_products_summed() {
    let src = format!(
        "probe begin {{ x = {}; println(x) }}",
        joined(63, " + ", |i| format!("(pid()*{i})"))
    );
    assert_eq!(run(&src), format!("{}\n", 42 * (62 * 63 / 2)));
    assert!(regs(&src).0 <= 4, "{:?}", regs(&src));
}

#[test]
fn long_left_leaning_chains() {
    let sum = format!(
        "probe begin {{ x = {}; println(x) }}",
        joined(200, " + ", |i| i.to_string())
    );
    assert_eq!(run(&sum), format!("{}\n", 199 * 200 / 2));
    let cat = format!(
        "probe begin {{ x = {}; println(x) }}",
        joined(100, " . ", |i| format!("\"{}\"", i % 10))
    );
    assert_eq!(run(&cat), format!("{}\n", "0123456789".repeat(10)));
    assert!(regs(&cat).1 <= 3);
}

#[test]
fn right_leaning_chains_keep_left_to_right_order() {
    // Calls, evaluated as written: the chain is re-associated, not
    // reordered.
    let cat = format!(
        "function f(i) {{ printf(\"<%d>\", i); return sprint(i) }}\n\
         probe begin {{ x = {}; println(\"=\", x) }}",
        right_leaning(20, ".", |i| format!("f({i})"))
    );
    let order = joined(20, "", |i| format!("<{i}>"));
    let value = joined(20, "", |i| i.to_string());
    assert_eq!(run(&cat), format!("{order}={value}\n"));
    assert!(regs(&cat).1 <= 4);
    let sum = format!(
        "global n\nfunction g(i) {{ n = n * 10 + i; return i }}\n\
         probe begin {{ x = {}; println(x, \" \", n) }}",
        right_leaning(9, "+", |i| format!("g({})", i + 1))
    );
    assert_eq!(run(&sum), "45 123456789\n");
}

#[test]
fn pure_right_leaning_trees_go_deeper_side_first() {
    // `-` is not associative: Sethi–Ullman order, the operands being pure.
    let src = format!(
        "probe begin {{ y = 3; x = {}; println(x) }}",
        right_leaning(25, "-", |i| format!("y*{i}"))
    );
    // 0 - (3 - (6 - …)): the alternating sum of 3i.
    let want: i64 = (0..25)
        .map(|i| if i % 2 == 0 { 3 * i } else { -3 * i })
        .sum();
    assert_eq!(run(&src), format!("{want}\n"));
    assert!(regs(&src).0 <= 6, "{:?}", regs(&src));
}

#[test]
fn a_local_destination_is_written_last() {
    // `x = 1 + x` lowers straight into x: its operands read x first.
    assert_eq!(
        run("probe begin { x = 5; x = 1 + x; y = 2; y = y * 3 - y; println(x, \" \", y) }"),
        "6 4\n"
    );
    assert_eq!(
        run("probe begin { s = \"b\"; s = \"a\" . s . s; println(s) }"),
        "abb\n"
    );
}

#[test]
fn check_and_compile_agree_on_what_does_not_fit() {
    // A sprintf of 17 strings needs a run of 17 string registers (PRINTF's
    // operands); there are STP_MAX_SREGS = 16.
    let src = format!(
        "probe begin {{ println(sprintf(\"{}\", {})) }}",
        "%s".repeat(17),
        joined(17, ", ", |i| format!("sprint({i})"))
    );
    let compiled = fail(&src);
    assert!(
        compiled.contains("expression too complex: out of string registers"),
        "{compiled}"
    );
    let checked = match compiler::check("x.stp", &src, &Options::default()) {
        Ok(_) => panic!("check accepted what compile refuses:\n{src}"),
        Err(f) => f.rendered,
    };
    assert_eq!(checked, compiled);
}
