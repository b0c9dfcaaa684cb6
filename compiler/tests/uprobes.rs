//! User-space probe points: `process("PATH").function("F")` (`.call`,
//! `.return`), `.statement(ADDR).absolute`, `.mark("M")` with
//! `.provider("P")`, and `process` without a path (the target); the
//! compiler keeps them symbolic (`ProbeTarget::User`) for the loader,
//! and refuses what needs DWARF or is malformed at its place.
mod common;
use vm_spec::abi;
use vm_spec::program::{ProbeTarget, UserSite};

#[test]
fn user_points_stay_symbolic() {
    let p = common::build(
        "probe process(\"ls\").function(\"main\") { }\n\
         probe process(\"/bin/ls\").function(\"x*\").return { print(returnval()) }\n\
         probe process(\"/bin/ls\").statement(0x1234).absolute { }\n\
         probe process(\"python3\").provider(\"python\").mark(\"function__entry\") { }\n\
         probe process.mark(\"tick\") { }\n\
         probe process(\"ls\").library(\"libc.so*\").function(\"malloc\").return { }\n\
         probe process(\"ls\").library(\"libc.so.6\").provider(\"libc\").mark(\"memory_*\") { }\n",
    )
    .program;
    let user = |path: &str, site: UserSite| ProbeTarget::User {
        path: path.into(),
        library: None,
        site,
    };
    let lib = |l: &str, site: UserSite| ProbeTarget::User {
        path: "ls".into(),
        library: Some(l.into()),
        site,
    };
    let got: Vec<(&ProbeTarget, u32)> = p
        .probes
        .iter()
        .map(|q| (&q.target, u32::from(q.kind)))
        .collect();
    assert_eq!(
        got,
        [
            (
                &user("ls", UserSite::Function("main".into())),
                abi::STP_PROBE_UPROBE
            ),
            (
                &user("/bin/ls", UserSite::Function("x*".into())),
                abi::STP_PROBE_URETPROBE
            ),
            (
                &user("/bin/ls", UserSite::Address(0x1234)),
                abi::STP_PROBE_UPROBE
            ),
            (
                &user(
                    "python3",
                    UserSite::Mark {
                        provider: Some("python".into()),
                        name: "function__entry".into()
                    }
                ),
                abi::STP_PROBE_UPROBE
            ),
            (
                &user(
                    "",
                    UserSite::Mark {
                        provider: None,
                        name: "tick".into()
                    }
                ),
                abi::STP_PROBE_UPROBE
            ),
            (
                &lib("libc.so*", UserSite::Function("malloc".into())),
                abi::STP_PROBE_URETPROBE
            ),
            (
                &lib(
                    "libc.so.6",
                    UserSite::Mark {
                        provider: Some("libc".into()),
                        name: "memory_*".into()
                    }
                ),
                abi::STP_PROBE_UPROBE
            ),
        ]
    );
    assert_eq!(
        p.probes[2].display,
        "process(\"/bin/ls\").statement(0x1234).absolute"
    );
    assert_eq!(
        u32::from(p.handlers[p.probes[1].handler as usize].ctx),
        abi::STP_CTX_URETPROBE
    );
}

#[test]
fn process_events_name_their_process_or_program() {
    let p = common::build(
        "probe process.begin { } probe process(\"ls\").end { }\n\
         probe process(42).thread.begin { } probe process.thread.end { }\n",
    )
    .program;
    let got: Vec<(&ProbeTarget, u32)> = p
        .probes
        .iter()
        .map(|q| (&q.target, u32::from(q.kind)))
        .collect();
    let ev = |path: &str, pid: i32, event: u32| ProbeTarget::Process {
        path: path.into(),
        pid,
        event,
    };
    let k = abi::STP_PROBE_PROCESS;
    assert_eq!(
        got,
        [
            (&ev("", 0, abi::STP_PROC_BEGIN), k),
            (&ev("ls", 0, abi::STP_PROC_END), k),
            (&ev("", 42, abi::STP_PROC_THREAD_BEGIN), k),
            (&ev("", 0, abi::STP_PROC_THREAD_END), k),
        ]
    );
    // Verified as timers: no arguments, no return value.
    assert_eq!(
        u32::from(p.handlers[p.probes[0].handler as usize].ctx),
        abi::STP_CTX_TIMER
    );
    // process.syscall: $syscall, $argN (ARG slots), $return.
    let p = common::build(
        "probe process.syscall { print($syscall + $arg1 + $arg6) }\n\
         probe process(\"ls\").syscall.return { print($syscall + $return) }\n",
    )
    .program;
    assert_eq!(
        (u32::from(p.probes[0].kind), u32::from(p.probes[1].kind)),
        (abi::STP_PROBE_PSYSCALL, abi::STP_PROBE_PSYSCALL_RETURN)
    );
    assert_eq!(
        u32::from(p.handlers[p.probes[1].handler as usize].ctx),
        abi::STP_CTX_KRETPROBE
    );
    for (src, want) in [
        (
            "probe process.syscall.return { print($arg1) }",
            "$arg1 in process.syscall.return",
        ),
        ("probe process.syscall { print($arg7) }", "$arg7"),
        ("probe process(0).begin { }", "invalid process"),
        ("probe process(\"\").end { }", "invalid process"),
        ("probe process.begin { print($return) }", "$return"),
    ] {
        let e = common::fail(src);
        assert!(e.contains(want), "{src}: {e}");
    }
}

#[test]
fn target_variables_of_user_functions_are_left_to_the_loader() {
    let p = common::build(
        "probe process(\"ls\").function(\"f\") { println($n, $p->a->b, $$parms) }\n\
         probe process(\"ls\").function(\"f\").return { println($n, $return) }\n",
    )
    .program;
    let uses: Vec<(&str, &[String])> = p
        .target_vars
        .iter()
        .map(|tv| (tv.name.as_str(), tv.fields.as_slice()))
        .collect();
    assert!(uses.contains(&("n", &[][..])), "{uses:?}");
    assert!(
        uses.contains(&("p", &["a".to_string(), "b".to_string()][..])),
        "{uses:?}"
    );
    // `$n` in the .return probe is read at entry: a generated entry
    // probe on the same function (tapset/entry.rs).
    assert_eq!(p.probes.len(), 3);
    // The chain reads user memory, never the kernel's.
    let calls = |h: u32| {
        p.handlers
            .iter()
            .flat_map(|x| &x.code)
            .filter(|i| u32::from(i.op) == abi::STP_OP_CALLI && i.imm == h as i32)
            .count()
    };
    assert!(calls(abi::STP_HLP_USER_LONG) >= 2);
    assert_eq!(calls(abi::STP_HLP_KERNEL_LONG), 0);
}

#[test]
fn what_needs_dwarf_or_is_malformed_is_refused() {
    for (src, want) in [
        (
            "probe process(\"ls\").statement(0x1234).absolute { print($argc) }",
            "target variable $argc of a user-space statement probe",
        ),
        (
            "probe process(\"ls\").mark(\"m\") { print($arg13) }",
            "USDT marker arguments ($arg13)",
        ),
        (
            "probe process(\"ls\").mark(\"m\").return { }",
            "probe point mismatch",
        ),
        (
            "probe process(\"ls\").function(\"a b\") { }",
            "invalid function name \"a b\"",
        ),
        (
            "probe process(\"\").function(\"f\") { }",
            "invalid process path \"\"",
        ),
        (
            "probe process(\"ls\").function(\"main@ls.c:3\") { }",
            "user-space function probes with a source file or line",
        ),
        (
            "probe process(\"ls\").library(\"\").function(\"f\") { }",
            "probe point mismatch",
        ),
        (
            "probe process(\"ls\").library(\"libc.so.6\") { }",
            "probe point mismatch",
        ),
        (
            "probe process(\"ls\").library(\"libc.so.6\").mark(\"m\").return { }",
            "probe point mismatch",
        ),
    ] {
        let e = common::fail(src);
        assert!(e.contains(want), "{src}: {e}");
    }
}

#[test]
fn perf_counters_are_never_defined() {
    // stapvm has no `.counter("NAME")`: `@defined(@perf(..))` is the
    // constant 0 (buildok/fortyfour.stp), not an error.
    let p = common::build("probe begin { println(@defined(@perf(\"x\"))) }").program;
    assert!(p.target_vars.is_empty());
    let h = &p.handlers[p.probes[0].handler as usize];
    assert_eq!(
        common::disasm(h)[0].split_whitespace().collect::<Vec<_>>(),
        ["LDI", "r0,", "0"]
    );
}
