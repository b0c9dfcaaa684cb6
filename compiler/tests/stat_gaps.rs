//! Statistics forms stap 5.x accepts that stapvm refused until session 3:
//! `foreach` sorted by `@variance` (stap sorts it by @count) and the
//! histogram of a statistics-array element drawn into a string
//! (`sprint(@hist_log(a[k]))`), run on the C core in user space.
mod common;
use common::*;

/// The output of `src`'s begin, timer (`timers` runs over `cpus`
/// simulated CPUs) and end probes, then `ERROR: ...` per run-time error;
/// the verifier checks the program first.
fn run_on(src: &str, cpus: u32, timers: usize) -> String {
    let opts = RunOptions {
        check: true,
        cpus,
        timers,
        ..Default::default()
    };
    run_begin_end(src, &opts).report("")
}

/// `run_on` with begin and end probes only.
fn run(src: &str) -> String {
    run_on(src, 1, 0)
}

#[test]
fn foreach_sorted_by_variance_is_stap_count_order() {
    // x: 2 samples, large variance; y: 3 samples, variance 0; z: 1
    // sample. stap 5.x's translate.cxx sorts `@variance` by SORT_COUNT,
    // so the order is y x z (by @variance it would be x first).
    let src = "global a\nprobe begin { a[\"x\"] <<< 1; a[\"x\"] <<< 100; \
               a[\"y\"] <<< 5; a[\"y\"] <<< 5; a[\"y\"] <<< 5; a[\"z\"] <<< 1; \
               foreach (k in a @variance-) print(k); println(\"\"); \
               foreach (k in a @variance+ limit 2) print(k); println(\"\"); \
               foreach ([k] in a @variance-) printf(\"%s%d \", k, @variance(a[k])); println(\"\") }";
    // x's @variance is stap's integer Welford: mean 1 + 99 / 2 = 50,
    // M2 = 99 * (100 - 50) = 4950.
    assert_eq!(run(src), "yxz\nzx\ny0 x4950 z0 \n");
}

#[test]
fn foreach_sorted_by_variance_of_a_plain_array_is_refused() {
    let msg = fail("global a\nprobe begin { a[1] = 1; foreach (k in a @variance-) print(k) }");
    assert!(
        msg.contains("sort by @variance of an array that is not a statistic"),
        "{msg}"
    );
}

#[test]
fn sprint_of_an_array_element_histogram_is_what_print_draws() {
    // The string of `sprint` is the drawing `print` emits (STP_REC_HIST,
    // drawn by user space), for both kinds, string and integer keys, over
    // several CPUs' copies (a timer on simulated CPUs is in stats.rs; here
    // the begin probe's CPU).
    // Small enough to stay under MAXSTRINGLEN; both arrays read (else
    // the end handler displays them).
    let fill = "for (i = 1; i <= 6; i++) { a[\"p\", 1] <<< i; b[i % 2] <<< i * 3 } \
                x = @count(a[\"p\", 1]) + @count(b[0])";
    let drawn = |e: &str| {
        run(&format!(
            "global a, b\nprobe begin {{ {fill}; s = sprint({e}); printf(\"[%s]\", s) }}"
        ))
    };
    let printed = |e: &str| {
        let mut out = run(&format!(
            "global a, b\nprobe begin {{ {fill}; print({e}) }}"
        ));
        out.insert(0, '[');
        out.push(']');
        out
    };
    for e in ["@hist_log(a[\"p\", 1])", "@hist_linear(b[1], 0, 30, 10)"] {
        let (s, p) = (drawn(e), printed(e));
        assert!(s.starts_with("[value |---"), "{e}: {s}");
        assert_eq!(s, p, "{e}");
    }
    // sprintln and other arguments around the histogram.
    let out = run(&format!(
        "global a, b\nprobe begin {{ {fill}; s = sprintln(\"b1:\", @hist_linear(b[1], 0, 30, 10)); \
         print(s) }}"
    ));
    let p = printed("@hist_linear(b[1], 0, 30, 10)");
    assert_eq!(out, format!("b1:{}\n", &p[1..p.len() - 1]));
}

#[test]
fn sprint_of_an_absent_element_histogram_is_an_empty_aggregate() {
    let out = run(
        "global a\nprobe begin { a[1] <<< 1; s = \"x\"; s = sprint(@hist_log(a[2])); \
                   print(s) }",
    );
    assert_eq!(out, "ERROR: empty aggregate\n");
}

#[test]
fn sprint_of_an_element_histogram_merges_the_cpus() {
    // Samples on 3 simulated CPUs; the end probe draws the merged
    // buckets as print does.
    let src = |e: &str| {
        format!(
            "global a, n\nprobe timer.ms(1) {{ n++; a[n % 2] <<< n; if (n == 12) exit() }}\n\
             probe end {{ {e} }}"
        )
    };
    let s = run_on(
        &src("s = sprint(@hist_linear(a[0], 0, 12, 4)); print(s)"),
        3,
        100,
    );
    let p = run_on(&src("print(@hist_linear(a[0], 0, 12, 4))"), 3, 100);
    // 2, 4 ... 12 (the even n of every CPU): 1, 2, 2 and 1 samples.
    let counts: Vec<&str> = s.lines().filter_map(|l| l.rsplit(' ').next()).collect();
    assert_eq!(counts, ["count", "1", "2", "2", "1", ""], "{s}");
    assert_eq!(s, p);
}

#[test]
fn the_guest_case_runs_the_same_in_user_space() {
    // tests/cases/stat-gaps: what the kernel must print.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/cases/stat-gaps");
    let src = std::fs::read_to_string(format!("{dir}/script.stp")).expect("script");
    let want = std::fs::read_to_string(format!("{dir}/expect")).expect("expect");
    assert_eq!(run(&src), want);
}

#[test]
fn both_interpreters_agree_on_element_histogram_strings() {
    // The compiled programs on the C core and the reference VM
    // (vm_testkit::diff): MSTHISTS of entries in slots other than 0, samples
    // on three CPUs, an absent key.
    use vm_spec::abi;
    let src = "global a, n\nprobe timer.ms(1) { n++; a[n % 3, \"k\"] <<< n * n; \
               if (n == 12) exit() }\nprobe end { for (i = 0; i < 4; i++) { \
               s = sprint(@hist_log(a[i, \"k\"])); printf(\"%d %s\\n\", i, s) } }";
    let program = build(src).program;
    let handler = |kind: u32| {
        program
            .probes
            .iter()
            .find(|p| u32::from(p.kind) == kind)
            .map(|p| p.handler)
            .expect("probe")
    };
    let (timer, end) = (handler(abi::STP_PROBE_TIMER), handler(abi::STP_PROBE_END));
    let mut runs = vec![timer; 12];
    runs.push(end);
    let run_cpus = (0..13).map(|i| i % 3).collect();
    let case = vm_testkit::gen::Case {
        seed: 0,
        program,
        env: Default::default(),
        runs,
        cpus: 3,
        run_cpus,
    };
    if let Err(e) = vm_testkit::diff::check_case(&case) {
        panic!("{e}");
    }
}
