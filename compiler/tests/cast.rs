//! `@cast(addr, "type")->a->b` and the task_* tapset functions built on it:
//! the compiler records one `TargetVar` per use with a `Cast` site (no
//! argument register, usable in functions), and the code reads through the
//! relocated offsets. The loader's BTF side is tested in
//! userspace/src/targetvars.rs; here a fake task_struct layout stands in
//! for it, so the code's walk (offsets, reads, narrowing) runs on the C
//! core in user space.
mod common;
use common::{fail, run_program, RunOptions};
use vm_spec::abi;
use vm_spec::program::{PrettyNode, Program, RelocKind, TargetSite};
use vm_testkit::host::HostSession;
use vm_testkit::HostEnv;

/// The program of `src`, or a panic with the rendered diagnostics.
fn build(src: &str) -> Program {
    common::build(src).program
}

/// The fake layout: (member, byte offset, read at it, final shift, final
/// mask). task_struct: tgid int at 8, pid int at 12, real_parent at 16,
/// char comm[16] at 24, real_cred at 48; cred: kuid_t uid at 4, gid at 8,
/// each { u32 val; }.
const LAYOUT: &[(&str, i64, i64, i64, i64)] = &[
    ("tgid", 8, 1, 32, -1),
    ("pid", 12, 1, 32, -1),
    ("real_parent", 16, 1, 0, -1),
    ("comm", 24, 0, 0, -1),
    ("real_cred", 48, 1, 0, -1),
    ("uid", 4, 0, 0, -1),
    ("gid", 8, 0, 0, -1),
    ("val", 0, 1, 0, 0xffff_ffff),
];

/// The PRETTY nodes the loader would build for LAYOUT (their names after
/// `p.strings`): 3 is `struct cred` (uid and gid, each `{ u32 val; }`), 4
/// `char comm[16]`; `pretty_node` names the root a use ending in `field`
/// gets.
fn add_pretty_nodes(p: &mut Program) {
    let base = p.strings.len() as u32;
    p.strings
        .extend([b"val".to_vec(), b"uid".to_vec(), b"gid".to_vec()]);
    let n = |name: u32, offset: u32, kind: u32, size: u8, first: u32, count: u16| PrettyNode {
        name,
        offset,
        first,
        count,
        kind: kind as u8,
        size,
        bit_off: 0,
        bit_size: 0,
    };
    p.pretty = vec![
        n(base, 0, abi::STP_PK_UNSIGNED, 4, 0, 0),
        n(base + 1, 4, abi::STP_PK_STRUCT, 0, 0, 1),
        n(base + 2, 8, abi::STP_PK_STRUCT, 0, 0, 1),
        n(abi::STP_PRETTY_NAME_NONE, 0, abi::STP_PK_STRUCT, 0, 1, 2),
        n(abi::STP_PRETTY_NAME_NONE, 0, abi::STP_PK_CHARS, 0, 0, 0),
    ];
}

fn pretty_node(field: &str) -> i64 {
    match field {
        "real_cred" => 3,
        "comm" => 4,
        _ => panic!("no PRETTY node for {field}"),
    }
}

/// Fills every relocated constant of `p` as the loader would for LAYOUT.
fn relocate(p: &mut Program) {
    if p.target_vars.iter().any(|tv| {
        tv.relocs
            .iter()
            .any(|r| matches!(r.kind, RelocKind::Pretty { .. }))
    }) {
        add_pretty_nodes(p);
    }
    for tv in p.target_vars.clone() {
        assert_eq!(tv.site, TargetSite::Cast("task_struct".into()));
        let member = |n: u32| {
            let f = &tv.fields[n as usize - 1];
            *LAYOUT.iter().find(|l| l.0 == f).expect("member in LAYOUT")
        };
        let last = member(tv.fields.len() as u32);
        for r in &tv.relocs {
            p.konsts[r.konst as usize] = match r.kind {
                RelocKind::ArgIndex
                | RelocKind::Exists
                | RelocKind::ElemSize(_)
                | RelocKind::SymAddr => {
                    panic!("not in a @cast read")
                }
                RelocKind::Offset(0) | RelocKind::Deref(0) => 0,
                RelocKind::Offset(n) => member(n).1,
                RelocKind::Deref(n) => member(n).2,
                RelocKind::Shift | RelocKind::RShift => last.3,
                RelocKind::Mask => last.4,
                RelocKind::Pretty { .. } => pretty_node(last.0),
            };
        }
    }
}

/// Memory of two tasks: the current one at 0x10000 and its parent at
/// 0x20000, with their creds at 0x30000 and 0x30100.
fn env() -> HostEnv {
    let task = |tgid: i32, pid: i32, parent: u64, comm: &[u8], cred: u64| {
        let mut b = vec![0u8; 64];
        b[8..12].copy_from_slice(&tgid.to_le_bytes());
        b[12..16].copy_from_slice(&pid.to_le_bytes());
        b[16..24].copy_from_slice(&parent.to_le_bytes());
        b[24..24 + comm.len()].copy_from_slice(comm);
        b[48..56].copy_from_slice(&cred.to_le_bytes());
        b
    };
    let cred = |uid: u32, gid: u32| {
        let mut b = vec![0u8; 16];
        b[4..8].copy_from_slice(&uid.to_le_bytes());
        b[8..12].copy_from_slice(&gid.to_le_bytes());
        b
    };
    HostEnv {
        task: 0x10000,
        memory: vec![
            (0x10000, task(4242, 4243, 0x20000, b"curl", 0x30000)),
            (0x20000, task(-7, 1, 0, b"bash-with-a-long", 0x30100)),
            (0x30000, cred(1000, 100)),
            (0x30100, cred(0xffff_fffe, 0)),
        ],
        ..HostEnv::default()
    }
}

/// Runs the begin (then end) probes of `src`, relocated for LAYOUT, in
/// `env()`; the output, then an `ERROR:` line per run-time error.
fn run(src: &str) -> String {
    let mut p = build(src);
    relocate(&mut p);
    let opts = RunOptions {
        env: env(),
        ..Default::default()
    };
    run_program(&p, &opts).expect("verifies").report("")
}

#[test]
fn task_functions_read_members_of_the_current_task_and_its_parent() {
    let out = run(r#"probe begin {
        t = task_current(); p = task_parent(t)
        printf("%d %d %s %d %d\n", task_pid(t), task_tid(t), task_execname(t),
               task_uid(t), task_gid(t))
        printf("%d %d [%s] %d\n", task_pid(p), task_tid(p), task_execname(p), task_uid(p))
    }"#);
    // The parent's tgid is negative: an int is sign-extended; its uid is
    // a u32: zero-extended; comm fills its 16 bytes (no NUL in the
    // array), and kernel_string runs on to the next zero byte.
    assert_eq!(
        out,
        "4242 4243 curl 1000 100\n-7 1 [bash-with-a-long] 4294967294\n"
    );
}

#[test]
fn pretty_printing_casts_walks_the_loaders_nodes() {
    let out = run(r#"probe begin {
        t = task_current()
        println(@cast(t, "task_struct")->real_cred$)
        println(@cast(t, "task_struct")->real_cred$$)
        println(@cast(t, "task_struct")->comm$)
        p = @cast(t, "task_struct")->real_parent
        println(@cast(p, "task_struct")->comm$$)
    }"#);
    // A pointer to a struct prints the struct it points to; `$` leaves the
    // nested structs as {...}, `$$` expands them; a char array is quoted.
    assert_eq!(
        out,
        "{.uid={...}, .gid={...}}\n{.uid={.val=1000}, .gid={.val=100}}\n\"curl\"\n\
         \"bash-with-a-long\"\n"
    );
}

#[test]
fn pretty_printing_without_nodes_prints_a_question_mark() {
    // The .stpb as compiled: no loader, no nodes (a stand-in image).
    let p = build(r#"probe begin { println(@cast(8, "task_struct")->comm$) }"#);
    let opts = RunOptions {
        env: env(),
        ..Default::default()
    };
    assert_eq!(run_program(&p, &opts).expect("verifies").report(""), "?\n");
}

#[test]
fn casts_record_a_type_and_no_argument_register() {
    let p = build(
        r#"function f(a) { return @cast(a, "struct file")->f_path->dentry }
           probe begin { print(f(0) + @cast(8, "task_struct", "kernel<linux/sched.h>")->pid) }"#,
    );
    let sites: Vec<(&TargetSite, &[String])> = p
        .target_vars
        .iter()
        .map(|t| (&t.site, t.fields.as_slice()))
        .collect();
    assert_eq!(sites.len(), 2);
    assert!(sites.contains(&(
        &TargetSite::Cast("struct file".into()),
        &["f_path".to_string(), "dentry".to_string()][..]
    )));
    assert!(sites.contains(&(
        &TargetSite::Cast("task_struct".into()),
        &["pid".to_string()][..]
    )));
    for tv in &p.target_vars {
        assert!(tv.relocs.iter().all(|r| r.kind != RelocKind::ArgIndex));
    }
}

#[test]
fn a_fault_is_stap_s_error_and_bad_casts_are_refused() {
    // task_current() of 0 (no task in this env): reading at 8 faults.
    let mut p = build("probe begin { print(task_pid(0)) }");
    relocate(&mut p);
    let r = run_program(&p, &RunOptions::default()).expect("verifies");
    assert_eq!(r.errors.len(), 1);
    assert!(r.errors[0].contains("0x8"), "{}", r.errors[0]);
    for (src, want) in [
        (
            r#"probe begin { print(@cast(0, "x", "ext4")->a) }"#,
            "not supported yet: @cast to a type of module 'ext4'",
        ),
        (
            r#"probe begin { print(&@cast(0, "x")->a$) }"#,
            "the operand of '&' must be a target variable",
        ),
        (
            r#"probe begin { print(@cast("s", "x")->a) }"#,
            "type mismatch",
        ),
    ] {
        let e = fail(src);
        assert!(e.contains(want), "{src}: {e}");
    }
}

#[test]
fn kernel_int_short_char_sign_extend() {
    let p = build(
        "probe begin { printf(\"%d %d %d %d %d\\n\", kernel_int(0x10010), kernel_short(0x10010), \
         kernel_char(0x10010), kernel_pointer(0x10010), kernel_int(0x10ffe)) }",
    );
    let mut e = HostEnv::default();
    e.memory
        .push((0x10010, 0xffff_fffe_8000_fff0u64.to_le_bytes().to_vec()));
    let opts = RunOptions {
        env: e,
        ..Default::default()
    };
    let r = run_program(&p, &opts).expect("verifies");
    // 0x10ffe: 4 bytes cross into an unmapped page.
    assert_eq!(r.errors.len(), 1);
    assert!(r.errors[0].contains("0x10ffe"), "{}", r.errors[0]);
    assert_eq!(r.output(), "");
    let p = build(
        "probe begin { printf(\"%d %d %d %d\\n\", kernel_int(0x10010), kernel_short(0x10010), \
         kernel_char(0x10010), kernel_pointer(0x10010)) }",
    );
    let r = run_program(&p, &opts).expect("verifies");
    assert!(r.errors.is_empty());
    assert_eq!(
        r.output(),
        format!(
            "{} {} {} {}\n",
            0x8000_fff0u32 as i32, 0xfff0u16 as i16, 0xf0u8 as i8, 0xffff_fffe_8000_fff0u64 as i64
        )
    );
}

#[test]
fn defined_is_a_load_time_question_or_a_constant() {
    // In a probe without target variables: 0, at compile time.
    let p = build("probe begin { printf(\"%d %d\\n\", @defined($x), @defined($x->y)) }");
    assert!(p.target_vars.is_empty());
    let r = run_program(&p, &RunOptions::default()).expect("verifies");
    assert!(r.errors.is_empty());
    assert_eq!(r.output(), "0 0\n");
    // In a function probe: one Exists constant per question, and the
    // guarded use of @choose_defined is an ordinary use of the same
    // variable (the loader leaves it unfilled when BTF lacks it).
    let p = build(
        r#"probe kernel.trace("kfree_skb") { r = @choose_defined($reason, 0);
               print(r + @defined($skb->len) + @defined(@cast($skb, "sk_buff")->len)) }"#,
    );
    let kinds = |name: &str| -> Vec<Vec<RelocKind>> {
        p.target_vars
            .iter()
            .filter(|t| t.name == name)
            .map(|t| t.relocs.iter().map(|r| r.kind).collect())
            .collect()
    };
    let reason = kinds("reason");
    assert_eq!(reason.len(), 2);
    assert!(reason.contains(&vec![RelocKind::Exists]));
    assert!(reason.iter().any(|k| k.contains(&RelocKind::ArgIndex)));
    assert_eq!(kinds("skb"), [vec![RelocKind::Exists]]);
    assert_eq!(kinds("sk_buff"), [vec![RelocKind::Exists]]);
    assert!(p
        .target_vars
        .iter()
        .all(|t| t.handler == p.probes[0].handler));
    HostSession::from_program(&p).expect("verifies");
    // $return: whether the probe is a return probe.
    let p = build(
        r#"probe kernel.function("vfs_read").return { print(@defined($return)) }
           probe kernel.function("vfs_read") { print(@defined($return)) }"#,
    );
    assert!(p.target_vars.is_empty());
    let e = fail("probe begin { print(@defined(1)) }");
    assert!(e.contains("@defined takes a target variable"), "{e}");
}

/// The `@defined` conditions each non-`@defined` use of `fields` runs
/// under: (name, chain, answer).
fn conds_of(p: &Program, field: &str) -> Vec<(String, Vec<String>, bool)> {
    p.target_vars
        .iter()
        .filter(|t| t.fields.last().map(String::as_str) == Some(field))
        .filter(|t| t.relocs.iter().any(|r| r.kind != RelocKind::Exists))
        .flat_map(|t| t.conds.iter())
        .map(|c| (c.name.clone(), c.fields.clone(), c.defined))
        .collect()
}

#[test]
fn a_cast_fallback_runs_only_where_the_defined_chain_is_missing() {
    // A ternary (deviceseeks.stp's sector size), an early return, and a
    // parameter read at a return under `@defined(@entry(...))`.
    let p = build(
        r#"function f(q) {
            return @defined(@cast(q, "request_queue", "kernel")->limits->logical_block_size)
                ? @cast(q, "request_queue", "kernel")->limits->logical_block_size
                : @cast(q, "request_queue", "kernel")->hardsect_size
        }
        function g(d) {
            if (@defined(@cast(d, "dentry", "kernel")->d_u->d_alias))
                return 1
            return @cast(d, "dentry", "kernel")->d_alias
        }
        probe begin { println(f(0), g(0)) }"#,
    );
    let want = |fields: &[&str], defined| {
        vec![(
            vm_spec::program::cast_cond_name(if fields[0] == "limits" {
                "request_queue"
            } else {
                "dentry"
            }),
            fields.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
            defined,
        )]
    };
    assert_eq!(
        conds_of(&p, "hardsect_size"),
        want(&["limits", "logical_block_size"], false)
    );
    assert_eq!(
        conds_of(&p, "logical_block_size"),
        want(&["limits", "logical_block_size"], true)
    );
    assert_eq!(conds_of(&p, "d_alias"), want(&["d_u", "d_alias"], false));
}

#[test]
fn an_entry_fallback_is_saved_only_where_the_newer_parameter_is_missing() {
    // tcpipstat.stp: `@defined(@entry($sk)) ? @entry($sk) : @entry($sock->sk)`.
    let p = build(
        r#"probe kernel.function("tcp_sendmsg").return {
            sk = @defined(@entry($sk)) ? @entry($sk) : @entry($sock->sk)
            println(sk)
        }"#,
    );
    let sock: Vec<_> = p.target_vars.iter().filter(|t| t.name == "sock").collect();
    assert_eq!(sock.len(), 1);
    let c: Vec<_> = sock[0]
        .conds
        .iter()
        .map(|c| (c.name.as_str(), c.fields.len(), c.defined))
        .collect();
    assert_eq!(c, [("sk", 0, false)]);
    let sk_uses = p
        .target_vars
        .iter()
        .filter(|t| t.name == "sk" && t.relocs.iter().any(|r| r.kind != RelocKind::Exists))
        .count();
    assert_eq!(sk_uses, 1);
    assert!(p
        .target_vars
        .iter()
        .filter(|t| t.name == "sk" && t.relocs.iter().any(|r| r.kind != RelocKind::Exists))
        .all(|t| t.conds.iter().all(|c| c.defined)));
}
