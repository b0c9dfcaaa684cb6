//! Statistics end to end in user space: scripts with `<<<`, the
//! extractors, `@hist_log` / `@hist_linear` and the display at exit,
//! compiled and run on the C core (`HostSession`, several simulated CPUs),
//! and the semantic errors of misused statistics.
mod common;
use common::*;

/// Runs begin probes, then the timer probes (timer run `i` on CPU
/// `i % cpus`) until one calls `exit()` or `max_ticks` ran, then end
/// probes; returns the output (histograms drawn) and the errors.
fn run(src: &str, cpus: u32, max_ticks: usize) -> (String, Vec<String>) {
    let opts = RunOptions {
        cpus,
        timers: max_ticks,
        ..Default::default()
    };
    let r = run_begin_end(src, &opts);
    (r.output(), r.errors)
}

#[test]
fn extractors_merge_over_cpus() {
    let src = "global s, n\nprobe timer.ms(1) { n++; s <<< n; if (n == 5) exit() }\n\
               probe end { printf(\"%d %d %d %d %d %d %d\\n\", @count(s), @sum(s), @min(s), \
               @max(s), @avg(s), @variance(s), @variance(s, 1)) }";
    for cpus in [1, 2, 3, 8] {
        let (out, errs) = run(src, cpus, 100);
        assert!(errs.is_empty(), "{errs:?}");
        // stap.1: 1..5 gives @variance 2 (exact 2.5); the counters never
        // depend on the CPUs.
        let f: Vec<&str> = out.split_whitespace().collect();
        assert_eq!(&f[..5], &["5", "15", "1", "5", "3"], "cpus {cpus}: {out}");
    }
    let (out, _) = run(src, 1, 100);
    assert_eq!(out, "5 15 1 5 3 2 2\n");
}

#[test]
fn variance_of_the_corpus_matches_stap() {
    // runok-output/maps/linear.exp: variance=450768, on one CPU.
    let src = "global agg\nprobe begin { for (key = 0; key < 100; key++) { \
               agg <<< key; agg <<< key * 2; agg <<< key * 3; agg <<< key * 4; \
               agg <<< key * 5; agg <<< key * 6; agg <<< key * 7; agg <<< key * 8; \
               agg <<< key * 9; agg <<< key * 10; agg <<< key * 11; agg <<< key * 12; \
               agg <<< key * 12; agg <<< key * 13; agg <<< key * 14; agg <<< key * 15 } \
               printf(\"%d %d\\n\", @avg(agg), @variance(agg)) }";
    let (out, errs) = run(src, 1, 0);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(out, "408 450768\n");
}

#[test]
fn histograms_merge_over_cpus() {
    let src = "global s, l, n\nprobe timer.ms(1) { n++; s <<< n; l <<< n; if (n == 20) exit() }\n\
               probe end { print(@hist_log(s)); println(@hist_linear(l, 0, 10, 5)) }";
    let (one, errs) = run(src, 1, 100);
    assert!(errs.is_empty(), "{errs:?}");
    let (four, _) = run(src, 4, 100);
    assert_eq!(one, four);
    let row = |v: &str, bar: usize, c: u32, cnt: usize| {
        format!(
            "{v:>5} |{}{:>w$}\n",
            "@".repeat(bar),
            c,
            w = 50 - bar + 1 + cnt
        )
    };
    let head = "value |-------------------------------------------------- count\n";
    let want = [
        head.to_string(),
        row("0", 0, 0, 1),
        row("1", 1, 1, 1),
        row("2", 2, 2, 1),
        row("4", 4, 4, 1),
        row("8", 8, 8, 1),
        row("16", 5, 5, 1),
        row("32", 0, 0, 1),
        row("64", 0, 0, 1),
        "\n".to_string(),
        head.to_string(),
        // (0, 10, 5): 5 buckets; the overflow row is labelled with the
        // last bucket's value, as stap does.
        row("0", 4, 4, 1),
        row("5", 5, 5, 1),
        row("10", 5, 5, 1),
        row(">10", 6, 6, 1),
        "\n\n".to_string(),
    ]
    .concat();
    assert_eq!(one, want);
}

#[test]
fn empty_statistics_are_errors_but_count_and_sum() {
    let (out, errs) = run(
        "global s\nprobe begin { printf(\"%d %d\\n\", @count(s), @sum(s)); x = @avg(s); \
         print(\"not reached\") } probe end { if (0) s <<< 1 }",
        2,
        0,
    );
    assert_eq!(out, "0 0\n");
    assert_eq!(errs, vec!["empty aggregate".to_string()]);
    let (_, errs) = run(
        "global s\nprobe begin { print(@hist_log(s)) } probe end { if (0) s <<< 1 }",
        1,
        0,
    );
    assert_eq!(errs, vec!["empty aggregate".to_string()]);
}

#[test]
fn statistics_written_and_never_read_are_displayed_at_exit() {
    let (out, errs) = run(
        "global a, b, c\nprobe begin { a <<< 3; a <<< 5; c <<< 1; x = @count(c); if (0) b <<< 1 }",
        2,
        0,
    );
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(
        out,
        "a @count=2 @min=3 @max=5 @sum=8 @avg=4\nb @count=0x0\n"
    );
}

#[test]
fn misuse_is_a_semantic_error() {
    let first = first_semantic_error;
    assert_eq!(
        first("global s\nprobe begin { s <<< 1; print(s) }"),
        "semantic error: invalid type stats: identifier 's' at x.stp:2:30"
    );
    assert!(first("probe begin { a <<< 1 }").contains("statistics must be global"));
    assert!(
        first("global s\nprobe begin { s <<< \"x\" }").starts_with("semantic error: type mismatch")
    );
    assert_eq!(
        first(
            "global s\nprobe begin { s <<< 1; print(@hist_log(s)); print(@hist_linear(s, 0, 10, 1)) }"
        ),
        "semantic error: multiple histogram types declared on 's': operator '@hist_linear' at x.stp:2:51"
    );
    assert!(
        first("global s\nprobe begin { s <<< 1; print(@hist_linear(s, 0, 1000, 1)) }")
            .contains("Number of buckets must be between 1 and 126")
    );
    assert!(
        first("global s\nprobe begin { s <<< 1; print(@hist_linear(s, 0, 10, 0)) }")
            .contains("histogram step must be greater than zero")
    );
}

/// The guest case `stats-hist` (tests/cases) gives in user space, on one
/// or several CPUs, exactly what its `expect` says the kernel prints.
#[test]
fn guest_case_stats_hist_matches_user_space() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/cases/stats-hist");
    let src = std::fs::read_to_string(format!("{dir}/script.stp")).unwrap();
    let (out, errs) = run(&src, 2, 1000);
    assert!(errs.is_empty(), "{errs:?}");
    if std::env::var_os("STATS_WRITE_EXPECT").is_some() {
        std::fs::write(format!("{dir}/expect"), &out).unwrap();
    }
    let want = std::fs::read_to_string(format!("{dir}/expect")).unwrap();
    assert_eq!(out, want);
}

#[test]
fn statistics_arrays_merge_over_cpus() {
    // Keys n % 3 and a string; the samples land on several CPUs.
    // @variance depends on how the samples fall on CPUs (stap's merge):
    // compared with a second array of the same samples by one key.
    let src = "global a, v, n\nprobe timer.ms(1) { n++; a[n % 3, \"k\"] <<< n; v[n % 3] <<< n; \
               if (n == 9) exit() }\n\
               probe end { foreach ([i, s] in a-) printf(\"%d %s %d %d %d %d %d %d\\n\", i, s, \
               @count(a[i, s]), @sum(a[i, s]), @min(a[i, s]), @max(a[i, s]), @avg(a[i, s]), \
               @variance(a[i, s]) - @variance(v[i])); \
               printf(\"%d %d %d\\n\", [7, \"k\"] in a, @count(a[7, \"k\"]), @sum(a[7, \"k\"])) }";
    let want = "1 k 3 12 1 7 4 0\n2 k 3 15 2 8 5 0\n0 k 3 18 3 9 6 0\n0 0 0\n";
    for cpus in [1, 2, 3, 5] {
        let (out, errs) = run(src, cpus, 100);
        assert!(errs.is_empty(), "cpus {cpus}: {errs:?}");
        assert_eq!(out, want, "cpus {cpus}");
    }
}

#[test]
fn statistics_arrays_sort_by_count_and_delete() {
    let src = "global a\nprobe begin { a[\"x\"] <<< 1; a[\"y\"] <<< 1; a[\"y\"] <<< 1; \
               a[\"z\"] <<< 5; foreach (k in a-) print(k); println(\"\"); \
               foreach (k in a+ limit 2) print(k); println(\"\"); \
               delete a[\"y\"]; a[\"y\"] <<< 7; foreach (k in a) printf(\"%s%d \", k, @max(a[k])); \
               println(\"\"); delete a; printf(\"%d\\n\", @count(a[\"x\"])); x = @min(a[\"x\"]) }";
    let (out, errs) = run(src, 2, 0);
    assert_eq!(out, "yxz\nxz\nx1 z5 y7 \n0\n");
    assert_eq!(errs, vec!["empty aggregate".to_string()]);
}

#[test]
fn statistics_array_histograms() {
    let src = "global a\nprobe begin { for (i = 1; i <= 4; i++) { a[1] <<< i; a[2] <<< i * 10 } \
               print(@hist_linear(a[1], 0, 4, 2)); print(@hist_linear(a[2], 0, 4, 2)); \
               print(@hist_linear(a[3], 0, 4, 2)) }";
    let (out, errs) = run(src, 3, 0);
    assert_eq!(errs, vec!["empty aggregate".to_string()]);
    let head = "value |-------------------------------------------------- count\n";
    assert!(out.starts_with(head), "{out}");
    assert_eq!(out.matches(head).count(), 2, "{out}");
    let (log, errs) = run(
        "global a\nprobe begin { a[\"p\"] <<< 1; a[\"p\"] <<< 2; a[\"p\"] <<< 3; \
         print(@hist_log(a[\"p\"])) }",
        2,
        0,
    );
    assert!(errs.is_empty(), "{errs:?}");
    let (scalar, _) = run(
        "global s\nprobe begin { s <<< 1; s <<< 2; s <<< 3; print(@hist_log(s)) }",
        1,
        0,
    );
    assert_eq!(log, scalar);
}

#[test]
fn statistics_arrays_written_and_never_read_are_displayed_at_exit() {
    let (out, errs) = run(
        "global lat, s\nprobe begin { lat[\"a\\n\", 1] <<< 3; lat[\"b\", 2] <<< 5; \
         lat[\"b\", 2] <<< 7; s <<< 1 }",
        2,
        0,
    );
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(
        out,
        "lat[\"b\",2] @count=2 @min=5 @max=7 @sum=12 @avg=6\n\
         lat[\"a\\n\",1] @count=1 @min=3 @max=3 @sum=3 @avg=3\n\
         s @count=1 @min=1 @max=1 @sum=1 @avg=1\n"
    );
}

#[test]
fn statistics_array_misuse_is_a_semantic_error() {
    let first = first_semantic_error;
    assert!(first("global a\nprobe begin { a[1] <<< 1; print(a[1]) }")
        .starts_with("semantic error: invalid type stats"));
    assert!(first("global a\nprobe begin { a[1] <<< 1; a[2] = 3 }")
        .starts_with("semantic error: invalid type stats"));
    assert!(
        first("global a\nprobe begin { a[1] = 1; print(@count(a[1])) }")
            .starts_with("semantic error: invalid type stats")
    );
    assert!(first("global a\nprobe begin { a[1] <<< 1; a <<< 1 }").contains("used as a statistic"));
    assert!(
        first("global a\nprobe begin { a[1] <<< 1; foreach (k in a) a[k] <<< 2 }")
            .contains("variable 'a' modified during 'foreach' iteration")
    );
    assert!(
        first("global a\nprobe begin { a[1] <<< 1; foreach (v = k in a) print(k) }")
            .starts_with("semantic error: invalid type stats")
    );
}

#[test]
fn statistics_arrays_reuse_slots_and_overflow() {
    // A wrap array of 2: key 1 gets samples on CPUs 0 and 1, is evicted
    // by key 3, and comes back with only its new sample on every CPU.
    let src = "global a%[2], n\nprobe timer.ms(1) { n++; \
               if (n <= 2) k = 1 else if (n == 3) k = 2 else if (n == 4) k = 3 else k = 1; \
               a[k] <<< n * 10; if (n == 5) exit() }\n\
               probe end { printf(\"%d %d %d %d\\n\", @count(a[1]), @sum(a[1]), [2] in a, [3] in a) }";
    for cpus in [1, 3] {
        let (out, errs) = run(src, cpus, 100);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(out, "1 50 0 1\n", "cpus {cpus}");
    }
    let (_, errs) = run(
        "global b[1]\nprobe begin { b[1] <<< 1; b[2] <<< 1 } probe end { print(@count(b[1])) }",
        2,
        0,
    );
    assert_eq!(
        errs,
        vec!["Array overflow, check size limit (1)".to_string()]
    );
}

/// Issue 10: `delete s` of a scalar statistic empties it on every CPU, not
/// only on the CPU that runs the `delete` (the extractors merge them all):
/// afterwards only the new sample shows, in the extractors and in both
/// kinds of histogram, negative buckets included.
#[test]
fn delete_of_a_statistic_empties_every_cpu() {
    let src = "global s, l, n\n\
               probe timer.ms(1) { n++; s <<< n - 10; l <<< n - 10; if (n == 20) exit() }\n\
               probe end { delete s; delete l; printf(\"%d %d\\n\", @count(s), @sum(l)); \
               s <<< 0; l <<< 0; printf(\"%d %d %d %d\\n\", @count(s), @min(s), @max(l), @count(l)); \
               print(@hist_log(s)); print(@hist_linear(l, 0, 10, 5)); \
               printf(\"%s\", sprint(@hist_log(s))) }";
    let head = "value |-------------------------------------------------- count\n";
    let row = |v: &str, c: u32| {
        let bar = "@".repeat(c as usize);
        format!("{v:>5} |{bar}{c:>w$}\n", w = 50 - c as usize + 2)
    };
    let log = [head, &row("0", 1), &row("1", 0), &row("2", 0), "\n"].concat();
    let linear = [head, &row("0", 1), &row("5", 0), &row("10", 0), "\n"].concat();
    let want = format!("0 0\n1 0 0 1\n{log}{linear}{log}");
    for cpus in [1, 2, 3, 4] {
        let (out, errs) = run(src, cpus, 100);
        assert!(errs.is_empty(), "cpus {cpus}: {errs:?}");
        assert_eq!(out, want, "cpus {cpus}");
    }
}

/// The sequence of stap's testsuite/systemtap.maps/elision.stp (a scalar
/// statistic deleted between histograms): each histogram shows only its
/// own samples (issue 10, delete), and the C core's drawing for `sprint`
/// (format.c) is the user-space one (vm_spec::hist) character for
/// character, elided runs included.
#[test]
fn delete_between_histograms_and_both_drawings_agree() {
    let src = "global a, c\nprobe begin { \
               a <<< 444; a <<< 999; print(@hist_linear(a, 0, 1500, 50)); \
               printf(\"%s\", sprint(@hist_linear(a, 0, 1500, 50))); delete a; \
               a <<< 444; a <<< 500; print(@hist_linear(a, 0, 1500, 50)); \
               printf(\"%s\", sprint(@hist_linear(a, 0, 1500, 50))); delete a; \
               c <<< 128; print(@hist_log(c)); delete c; \
               c <<< -2; c <<< -4096; print(@hist_log(c)); \
               printf(\"%s\", sprint(@hist_log(c))) }";
    for cpus in [1, 2] {
        // sprint's string is cut at MAXSTRINGLEN, as stap's.
        let mut opts = RunOptions {
            cpus,
            ..Default::default()
        };
        opts.compile
            .defines
            .push(("MAXSTRINGLEN".into(), "4096".into()));
        let r = run_begin_end(src, &opts);
        let (out, errs) = (r.output(), r.errors);
        assert!(errs.is_empty(), "{errs:?}");
        let h: Vec<&str> = out.split("\n\n").collect();
        assert_eq!(h.len(), 8, "{out}");
        assert_eq!(h[0], h[1]);
        assert_eq!(h[2], h[3]);
        assert_eq!(h[5], h[6]);
        assert!(h[0].contains("  500 |") && h[0].contains("      ~\n  850 |"));
        assert!(!h[2].contains('~') && !h[2].contains("950"), "{}", h[2]);
        assert!(h[4].ends_with("  512 |                                                   0"));
        assert!(h[5].contains("       ~\n    -8 |") && !h[5].contains("128"));
    }
}
