//! Target variables in probes with several points or wildcard points, the
//! `&` and `[i]` forms, the layout macros (`@offsetof`, `@container_of`,
//! `@cast_sizeof`, `@type_member_defined`, parse/tapset.stpm), `@this1`
//! ... `@this8`, `@defined` in `.return` probes and the scripts' own
//! `@task`-style macros. The compiler's side: what it records for the
//! loader (userspace/src/targetvars.rs resolves each probe of a handler on
//! its own symbol; its unit tests cover that), and runs on the C core in
//! user space with the relocated constants filled in as the loader does.
mod common;
use common::*;
use vm_spec::abi;
use vm_spec::program::{Program, RelocKind, TargetSite};
use vm_testkit::HostEnv;

/// `struct task { int tgid; char comm[16]; struct task *parent; }` (32
/// bytes) and `struct wrap { long pad; struct task t; }` (40), as the
/// loader would read them from BTF: (type, member) -> (offset, reads
/// memory, next type).
fn member(ty: &str, m: &str) -> Option<(i64, i64, &'static str)> {
    match (ty.trim_start_matches("struct "), m) {
        ("task", "tgid") => Some((0, 1, "int")),
        ("task", "comm") => Some((4, 0, "char[16]")),
        ("task", "parent") => Some((24, 1, "task*")),
        ("wrap", "pad") => Some((0, 1, "long")),
        ("wrap", "t") => Some((8, 0, "task")),
        _ => None,
    }
}

fn size_of(ty: &str) -> i64 {
    match ty.trim_start_matches("struct ") {
        "task" => 32,
        "wrap" => 40,
        "char[16]" => 1,
        _ => 8,
    }
}

/// Fills the `@cast` constants of `p` as the loader does for the layout
/// above (index steps: the element size of the type in hand).
fn relocate(p: &mut Program) {
    for tv in p.target_vars.clone() {
        let TargetSite::Cast(ty) = &tv.site else {
            continue;
        };
        let mut cur = ty.trim_start_matches("struct ").to_string();
        let mut steps = vec![(0, 0)];
        let mut exists = true;
        for f in &tv.fields {
            if f == "[]" {
                steps.push((size_of(&cur), 0));
                continue;
            }
            match member(&cur, f) {
                Some((off, deref, next)) => {
                    steps.push((off, deref));
                    cur = next.to_string();
                }
                None => {
                    exists = false;
                    steps.push((0, 0));
                }
            }
        }
        for r in &tv.relocs {
            p.konsts[r.konst as usize] = match r.kind {
                RelocKind::Exists => i64::from(exists),
                RelocKind::Offset(i) | RelocKind::ElemSize(i) => steps[i as usize].0,
                RelocKind::Deref(i) => steps[i as usize].1,
                RelocKind::Mask => -1,
                _ => 0,
            };
        }
    }
}

fn run_relocated(src: &str) -> String {
    let mut p = build(src).program;
    relocate(&mut p);
    run_program(&p, &RunOptions::default())
        .expect("verifies")
        .ok()
}

#[test]
fn several_points_share_a_handler_the_loader_resolves_per_probe() {
    let p = build(
        r#"probe kernel.function("vfs_read"), kernel.function("vfs_write") { println($count) }"#,
    )
    .program;
    assert_eq!(p.probes.len(), 2);
    assert_eq!(p.probes[0].handler, p.probes[1].handler);
    assert_eq!(p.target_vars.len(), 1);
    // The site names the first point; the loader uses each probe's symbol.
    assert_eq!(
        p.target_vars[0].site,
        TargetSite::Function("vfs_read".into())
    );
    assert_eq!(p.target_vars[0].handler, p.probes[0].handler);
    check(&p);
    // Mixed kinds: a tracepoint and a function (process/migrate.stp), a
    // syscall and a function.
    let p = build(
        r#"probe kernel.trace("sched_migrate_task")!, kernel.function("__migrate_task")
           { println(@choose_defined($new_cpu, $dest_cpu)) }"#,
    )
    .program;
    let f = |i: usize| u32::from(p.probes[i].flags);
    assert!(f(0) & abi::STP_PROBE_F_SUFFICIENT != 0);
    assert!(f(1) & abi::STP_PROBE_F_ALTERNATIVE != 0);
    assert_eq!(p.probes[0].handler, p.probes[1].handler);
    check(&p);
    let p = build(r#"probe syscall.read, kernel.function("vfs_read") { println($count) }"#).program;
    assert_eq!(p.target_vars[0].site, TargetSite::Syscall("read".into()));
    check(&p);
}

#[test]
fn wildcard_points_keep_their_pattern_for_the_loader() {
    let p = build(r#"probe kernel.function("vfs_*") { println($file) }"#).program;
    assert_eq!(p.target_vars[0].site, TargetSite::Function("vfs_*".into()));
    let p = build(r#"probe kernel.function("*audit_getname@kernel/auditsc.c") { println($name) }"#)
        .program;
    assert_eq!(
        p.target_vars[0].site,
        TargetSite::Function("*audit_getname".into())
    );
    check(&p);
}

#[test]
fn a_point_without_target_variables_needs_a_guard() {
    let e = first_semantic_error(r#"probe begin, kernel.function("vfs_read") { println($count) }"#);
    assert!(
        e.contains("probe point 'begin' has no target variables (while resolving $count)"),
        "{e}"
    );
    // Guarded: @defined is 0 in the begin handler (its probe has no symbol,
    // the loader leaves the constant 0), so it prints the alternative.
    let r = run_begin_end(
        r#"probe begin, kernel.function("vfs_read") { println(@choose_defined($count, 7)) }"#,
        &RunOptions::default(),
    );
    assert_eq!(r.ok(), "7\n");
    // No point has target variables: decided now, the use is dead code.
    let r = run_begin_end(
        r#"probe begin { println(@defined($x) ? $x->a[2] : 5) }"#,
        &RunOptions::default(),
    );
    assert_eq!(r.ok(), "5\n");
    assert!(r.program.target_vars.is_empty());
    // defined-entry.stp: @entry after @defined(@entry(...)) outside a
    // .return probe.
    let r = run_begin_end(
        r#"probe begin { if (@defined(@entry($call))) println(@entry($call)) else println("yo") }"#,
        &RunOptions::default(),
    );
    assert_eq!(r.ok(), "yo\n");
    let e = first_semantic_error(r#"probe begin { println(@entry($call)) }"#);
    assert!(e.contains("not supported yet: @entry"), "{e}");
}

#[test]
fn defined_in_a_return_probe_is_asked_at_entry() {
    // autofs4.stp's shape: @defined($mnt->...) and @entry($mnt->...) in a
    // .return probe; both go to the generated entry probe's handler.
    let p = build(
        r#"probe kernel.function("vfs_read").return {
             if (@defined($file->f_inode)) println(@entry($file->f_inode))
             if (@defined(@entry($nope))) println("no")
           }"#,
    )
    .program;
    assert_eq!(p.probes.len(), 2);
    let entry = p
        .probes
        .iter()
        .find(|pr| u32::from(pr.kind) == abi::STP_PROBE_KPROBE)
        .expect("entry probe")
        .handler;
    assert!(p.target_vars.iter().all(|t| t.handler == entry));
    let mut exists: Vec<(&str, &[String])> = p
        .target_vars
        .iter()
        .filter(|t| t.relocs.iter().all(|r| r.kind == RelocKind::Exists))
        .map(|t| (t.name.as_str(), t.fields.as_slice()))
        .collect();
    // The entry's store of @entry($file->f_inode) asks the same question
    // again (it is saved only where the return body reads it).
    exists.sort();
    exists.dedup();
    assert_eq!(
        exists,
        [("file", &["f_inode".to_string()][..]), ("nope", &[][..])]
    );
    check(&p);
}

#[test]
fn address_of_and_indexes() {
    let p =
        build(r#"probe kernel.function("vfs_read") { println(&$file->f_pos, $buf[$count - 1]) }"#)
            .program;
    let addr = &p.target_vars[0];
    assert!(addr.addr_of);
    assert_eq!(addr.fields, ["f_pos"]);
    // The address: no read of the last step, no narrowing.
    let kinds: Vec<RelocKind> = addr.relocs.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [
            RelocKind::ArgIndex,
            RelocKind::Offset(0),
            RelocKind::Deref(0),
            RelocKind::Offset(1)
        ]
    );
    let idx = p
        .target_vars
        .iter()
        .find(|t| t.name == "buf")
        .expect("$buf");
    assert_eq!(idx.fields, ["[]"]);
    assert!(idx.relocs.iter().any(|r| r.kind == RelocKind::ElemSize(1)));
    check(&p);
    let e = first_semantic_error(r#"probe kernel.function("vfs_read") { println(&$count) }"#);
    assert!(
        e.contains("cannot take address of object in register"),
        "{e}"
    );
    let e = first_semantic_error(r#"probe begin { x = 1; println(&x) }"#);
    assert!(e.contains("operand of '&'"), "{e}");
}

#[test]
fn layout_macros_compute_from_the_relocated_layout() {
    // sizeof.stpm, offsetof.stpm, type_defined.stpm.
    assert_eq!(
        run_relocated(
            r#"probe begin { println(@cast_sizeof("struct task"), " ", @cast_sizeof("wrap"), " ",
               @offsetof("struct task", parent), " ",
               @type_member_defined("struct task", comm), @type_member_defined("struct task", nope), " ",
               @type_defined("struct task")) }"#
        ),
        "32 40 24 10 1\n"
    );
    // container_of.stpm: from the address of a member to its struct, and on
    // through it (tcp_trace.stp's `& @container_of(...)->icsk_inet->sk`).
    assert_eq!(
        run_relocated(
            r#"probe begin { p = 0x1018
               println(& @container_of(p, "struct task", parent))
               println(& @container_of(p + 8, "struct wrap", t)->t->comm)
               println(& @cast(0x2000, "struct task")[3]) }"#
        ),
        format!("{}\n{}\n{}\n", 0x1000, 0x1020 - 8 + 8 + 4, 0x2000 + 3 * 32)
    );
    // A read through container_of: tgid of the task whose parent member is
    // at 0x10018.
    let mut p =
        build(r#"probe begin { println(@container_of(0x10018, "struct task", parent)->tgid) }"#)
            .program;
    relocate(&mut p);
    let mut env = HostEnv::default();
    env.memory.push((0x10000, 42u64.to_le_bytes().to_vec()));
    let opts = RunOptions {
        env,
        ..Default::default()
    };
    assert_eq!(run_program(&p, &opts).expect("verifies").ok(), "42\n");
    // Another module's types need its BTF.
    let e =
        first_semantic_error(r#"probe begin { println(@cast_module_sizeof("ext4", "struct x")) }"#);
    assert!(e.contains("@cast to a type of module 'ext4'"), "{e}");
}

#[test]
fn this_macros_pass_values_between_probes_of_a_thread() {
    // socket-events.stp: `@this1 = fd` at entry, `fd = @this1` at return.
    let p = build(
        r#"probe syscall.close { @this1 = fd }
           probe syscall.close.return { printf("%d %s\n", @this1, @this2) }
           probe begin { @this2 = "s" }"#,
    )
    .program;
    assert!(p.maps.iter().any(|m| m.name == "__this_var1" && m.wrap));
    assert!(p.maps.iter().any(|m| m.name == "__this_var2"));
    check(&p);
    // Per thread: the value a probe of one thread left is not another's,
    // and it stays until overwritten (no delete at read, as in stap).
    let r = run_begin_end(
        r#"probe begin { @this1 = tid() * 10 }
           probe end { println(@this1, " ", @this1, " ", @this3) }"#,
        &RunOptions::default(),
    );
    let tid = HostEnv::default().tid;
    assert_eq!(r.ok(), format!("{} {} 0\n", tid * 10, tid * 10));
    // A script's own global of that name is used as it is.
    let r = run_begin_end(
        r#"global __this_var5
           probe begin { @this5 = 3 } probe end { println(@this5, " ", __this_var5[tid()]) }"#,
        &RunOptions::default(),
    );
    assert_eq!(r.ok(), "3 3\n");
}

#[test]
fn scripts_own_macros_win_over_the_library() {
    // cve-2023-4911.stp uses the library's @task and @mm.
    let p = build(r#"probe begin { println(@mm(@task(task_current())->mm)->env_start) }"#).program;
    let mut sites: Vec<String> = p
        .target_vars
        .iter()
        .map(|t| format!("{:?}", t.site))
        .collect();
    sites.sort();
    assert_eq!(sites, [r#"Cast("mm_struct")"#, r#"Cast("task_struct")"#]);
    // A script's @define of the same name, and a macro parameter called
    // `task` (schedtimes.stp), take precedence.
    let p = build(
        r#"@define task(p) %( @cast(@p, "struct wrap") %)
           @define tgid_of(task) %( @task->tgid %)
           probe kernel.trace("sched_switch") { println(@task(0)->pad, @tgid_of($prev)) }"#,
    )
    .program;
    assert_eq!(
        p.target_vars[0].site,
        TargetSite::Cast("struct wrap".into())
    );
    assert_eq!(p.target_vars[1].name, "prev");
    assert_eq!(p.target_vars[1].fields, ["tgid"]);
}

#[test]
fn library_macro_text_points_at_the_invocation() {
    // A diagnostic inside a library macro's expansion names the script's
    // token, not an offset into the macro library.
    let src = "probe begin {\n  x = @container_of(1, \"struct s\", m, n)\n}";
    let e = fail(src);
    assert!(e.contains("x.stp:2:"), "{e}");
}

#[test]
fn uses_record_the_defined_conditions_they_run_under() {
    // cycle_thief.stp: `$id` runs only where `$irq` is absent, `$irq` only
    // where it is present; the loader resolves neither where it never runs.
    let p = build(
        r#"probe kernel.trace("irq_handler_entry") { i = @defined($irq) ? $irq : $id
             if (!@defined($a->b)) println($c) else println($d)
             if (@defined($e) && $e > 0) println(1) }"#,
    )
    .program;
    let conds = |name: &str| -> Vec<(String, Vec<String>, bool)> {
        p.target_vars
            .iter()
            .find(|t| t.name == name && !t.relocs.iter().all(|r| r.kind == RelocKind::Exists))
            .expect(name)
            .conds
            .iter()
            .map(|c| (c.name.clone(), c.fields.clone(), c.defined))
            .collect()
    };
    assert_eq!(conds("irq"), [("irq".into(), vec![], true)]);
    assert_eq!(conds("id"), [("irq".into(), vec![], false)]);
    assert_eq!(conds("c"), [("a".into(), vec!["b".to_string()], false)]);
    assert_eq!(conds("d"), [("a".into(), vec!["b".to_string()], true)]);
    assert_eq!(conds("e"), [("e".into(), vec![], true)]);
    check(&p);
}
