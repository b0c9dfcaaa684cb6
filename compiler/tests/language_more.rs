//! Language leftovers, compiled and run on the C core in user space:
//! system() (its STP_REC_SYSTEM record in order with the output records),
//! a function parameter shadowing a global array of the same name
//! (network/tcp_trace.stp), `systemtap_privilege` in a preprocessor
//! conditional (buildok/systemtap_privilege.stp) and `delete` of an array
//! slice (profiling/syscallsbypid.stp).
mod common;
use common::*;
use vm_spec::records::Record;

/// Runs begin then end probes, which must not fail; the printed output
/// with each system() command shown as `<system: CMD>` where it ran.
fn run_records(src: &str) -> String {
    let ran = run_begin_end(src, &Default::default());
    assert!(ran.errors.is_empty(), "{:?}", ran.errors);
    let mut out = String::new();
    for r in ran.session.records() {
        match r {
            Record::Printf { fmt, args, .. } => {
                let f = &ran.program.formats[usize::from(fmt)];
                let a: Vec<_> = args.iter().map(|a| a.as_fmt_arg()).collect();
                out.push_str(&String::from_utf8_lossy(&vm_spec::core::format(
                    &f.text, &a,
                )));
            }
            Record::System { cmd, .. } => {
                out.push_str(&format!("<system: {}>", String::from_utf8_lossy(&cmd)))
            }
            _ => {}
        }
    }
    out
}

/// Runs begin then end probes, which must not fail; the output.
fn run(src: &str) -> String {
    run_begin_end(src, &Default::default()).ok()
}

#[test]
fn system_record_sits_between_the_output_around_it() {
    let out = run_records(
        r#"probe begin { printf("before\n"); system("echo from-shell"); printf("after\n") }"#,
    );
    assert_eq!(out, "before\n<system: echo from-shell>after\n");
}

#[test]
fn system_command_is_built_at_run_time() {
    let out = run_records(
        r#"function go(pid) { system(sprintf("kill -CONT %d", pid)) }
           probe begin { go(42); c = "date"; system(c . " -u") }"#,
    );
    assert_eq!(out, "<system: kill -CONT 42><system: date -u>");
}

#[test]
fn system_returns_nothing() {
    let e = first_semantic_error(r#"probe begin { x = system("true"); print(x) }"#);
    assert!(!e.is_empty(), "a void system() used as a value compiled");
}

#[test]
fn parameter_shadows_a_global_array() {
    let out = run(r#"global state, names
        function name_of:string(state:long) {
            return (state in names ? names[state] : "UNDEF")
        }
        probe begin {
            names[1] = "ESTABLISHED"; state[7] = 1
            printf("%s %s %d\n", name_of(1), name_of(2), state[7])
        }"#);
    assert_eq!(out, "ESTABLISHED UNDEF 1\n");
}

#[test]
fn a_probe_local_still_names_the_global() {
    // Only function parameters shadow: elsewhere the name is the global.
    let e = first_semantic_error(
        r#"global state
        probe begin { state[1] = 1; state = 2 }"#,
    );
    assert!(e.contains("array 'state' used as a scalar"), "{e}");
}

#[test]
fn systemtap_privilege_is_stapdev() {
    let out = run(r#"
        %( systemtap_privilege != "stapusr" %? probe begin { printf("begin!\n") } %: **ERROR** %)
        %( systemtap_privilege == "stapdev" %? probe end { printf("end!\n") } %: **ERROR** %)"#);
    assert_eq!(out, "begin!\nend!\n");
}

#[test]
fn delete_of_a_slice_deletes_the_matching_entries() {
    let out = run(r#"global arr, names
        probe begin {
            arr[1, 10] = 1; arr[1, 20] = 2; arr[2, 10] = 3; arr[2, 30] = 4
            names["a", 1, "x"] = 1; names["a", 2, "y"] = 2; names["b", 1, "x"] = 3
            delete arr[1, *]
            delete names[*, 1, *]
            foreach ([a, b] in arr+) printf("%d,%d ", a, b)
            foreach ([s, n, t] in names) printf("%s%d%s ", s, n, t)
            delete arr[*, 99]
            k = 2; delete arr[k, *]
            printf("| %d\n", [2, 10] in arr)
        }"#);
    assert_eq!(out, "2,10 2,30 a2y | 0\n");
}

#[test]
fn delete_of_a_slice_inside_a_foreach_over_another_array() {
    let out = run(r#"global arr, pids
        probe begin {
            pids[5] = 1; pids[6] = 1
            arr[5, "r"] = 1; arr[5, "w"] = 2; arr[6, "r"] = 3; arr[7, "r"] = 4
            foreach (p in pids) delete arr[p, *]
            foreach ([p, s] in arr) printf("%d%s\n", p, s)
        }"#);
    assert_eq!(out, "7r\n");
}

#[test]
fn in_of_a_slice_finds_any_matching_entry() {
    let out = run(r#"global arr
        probe begin {
            arr[1, "r", 7] = 1; arr[2, "w", 8] = 2
            printf("%d %d %d %d %d\n", [1, *, *] in arr, [*, "w", *] in arr,
                   [3, *, *] in arr, [1, "w", *] in arr, [*, *, 8] in arr)
            foreach ([a, b, c] in arr)
                if ([a, *, *] in arr && !([*, *, c + 10] in arr)) printf("%d%s ", a, b)
            k = 2; delete arr[k, *, *]
            printf("| %d\n", [2, *, *] in arr)
        }"#);
    assert_eq!(out, "1 1 0 0 1\n1r 2w | 0\n");
}
