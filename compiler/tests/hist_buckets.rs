//! Histogram buckets as values: `i in @hist_log(s)` (stap: `@hist_log(s)[i]`,
//! the bucket's count) and the buckets of a statistics-array element
//! (`@hist_log(a[k])[j]`, `foreach (j in @hist_log(a[k]))`: MSTBKT), run
//! in user space on the C core and checked against stap's log2 buckets
//! (bucket 64 holds 0, 65 + k holds [2^k, 2^(k+1))), and on the reference
//! VM through the differential check.
mod common;
use common::*;

/// The output of `src`'s begin and end probes, then `ERROR: ...` per
/// run-time error; the verifier checks the program first.
fn run(src: &str) -> String {
    let opts = RunOptions {
        check: true,
        cpus: 2,
        ..Default::default()
    };
    run_begin_end(src, &opts).report("")
}

#[test]
fn the_guest_case_runs_the_same_in_user_space() {
    // tests/cases/hist-buckets: what the kernel must print.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/cases/hist-buckets");
    let src = std::fs::read_to_string(format!("{dir}/script.stp")).expect("script");
    let want = std::fs::read_to_string(format!("{dir}/expect")).expect("expect");
    assert_eq!(run(&src), want);
}

/// The lines of pmap_foreach.stp's output that are no histogram drawing.
fn text_lines(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.starts_with("count ") || l.starts_with("first ") || l.starts_with("bucket "))
        .collect()
}

#[test]
fn pmap_foreach_prints_what_stap_prints() {
    // stp-testsuite/buildok/pmap_foreach.stp, derived by hand from stap's
    // log2 buckets: foo[1] = 0 2 4 6 8, foo[2] = 0 4 16 36 64,
    // foo[3] = 0 8 64 216 512 64; bucket 0 is the most negative one.
    let path = vm_testkit::paths::corpus("stp-testsuite/buildok/pmap_foreach.stp");
    let src = std::fs::read_to_string(path).expect("corpus script");
    let out = run(&src);
    let head = |i: u32, n: u32| {
        vec![
            format!("count of foo[{i}] = {n}"),
            format!("first bucket of hist_log of foo[{i}] = 0"),
        ]
    };
    let counts = [(1, 5), (2, 5), (3, 6)];
    let mut want: Vec<String> = Vec::new();
    // for (i = 1; i < 4; i++), foreach (i in foo), foreach (i+ in foo):
    // insertion order is key order here.
    for _ in 0..3 {
        for (i, n) in counts {
            want.extend(head(i, n));
        }
    }
    let buckets: [&[(u32, u32)]; 3] = [
        &[(64, 1), (66, 1), (67, 2), (68, 1)],
        &[(64, 1), (67, 1), (69, 1), (70, 1), (71, 1)],
        &[(64, 1), (68, 1), (71, 2), (72, 1), (74, 1)],
    ];
    for ((i, n), bs) in counts.iter().zip(buckets) {
        want.push(format!("count of foo[{i}] = {n}"));
        for (j, c) in bs {
            want.push(format!("bucket {j} of hist_log of foo[{i}] = {c}"));
        }
    }
    assert_eq!(text_lines(&out), want, "{out}");
    // Every print(@hist_log(foo[i])) drew its histogram: 4 loops of 3.
    assert_eq!(out.matches("value |").count(), 12, "{out}");
    assert!(!out.contains("ERROR"), "{out}");
}

#[test]
fn in_on_a_histogram_is_the_bucket_count() {
    // histogram_operator_in.stp's test, on buckets that hold samples:
    // stap's `i in @hist_log(s)` is `@hist_log(s)[i]`, not 0 or 1.
    let out = run(
        "global s, t\nprobe begin { s <<< 4; s <<< 5; s <<< 6; t <<< 4; t <<< 5; \
                   t <<< 6; printf(\"%d %d %d\\n\", 67 in @hist_log(s), 66 in @hist_log(s), \
                   3 in @hist_linear(t, 0, 10, 2)); exit() }",
    );
    assert_eq!(out, "3 0 2\n");
}

#[test]
fn element_buckets_refuse_absent_keys_and_bad_indexes() {
    let out = run("global a\nprobe begin { a[1] <<< 1; x = @hist_log(a[1])[-1] }");
    assert!(out.contains("histogram index out of range"), "{out}");
    let out = run("global a\nprobe begin { a[1] <<< 1; x = @hist_log(a[2])[65] }");
    assert!(out.contains("empty aggregate"), "{out}");
    let out = run("global a\nprobe begin { a[\"k\", 2] <<< 1; \
                   printf(\"%d\\n\", @hist_linear(a[\"k\", 2], 0, 10, 2)[1]) }");
    assert_eq!(out, "1\n");
}

#[test]
fn element_buckets_lower_to_mstbkt() {
    let p = build(
        "global a\nprobe begin { a[1] <<< 1; x = @hist_log(a[1])[65]; \
                   if (64 in @hist_log(a[1])) x++; printf(\"%d\\n\", x) }",
    )
    .program;
    let n = p
        .handlers
        .iter()
        .flat_map(|h| names(h))
        .filter(|n| *n == "MSTBKT")
        .count();
    assert_eq!(n, 2);
}

#[test]
fn both_interpreters_agree_on_element_buckets() {
    // The compiled guest script on the C core and the reference VM
    // (vm_testkit::diff), samples on two CPUs.
    use vm_spec::abi;
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/cases/hist-buckets");
    let src = std::fs::read_to_string(format!("{dir}/script.stp")).expect("script");
    let program = build(&src).program;
    let handler = |kind: u32| {
        program
            .probes
            .iter()
            .find(|p| u32::from(p.kind) == kind)
            .map(|p| p.handler)
            .expect("probe")
    };
    let (begin, end) = (handler(abi::STP_PROBE_BEGIN), handler(abi::STP_PROBE_END));
    let case = vm_testkit::gen::Case {
        seed: 0,
        program,
        env: Default::default(),
        runs: vec![begin, begin, end],
        cpus: 2,
        run_cpus: vec![0, 1, 0],
    };
    if let Err(e) = vm_testkit::diff::check_case(&case) {
        panic!("{e}");
    }
}
