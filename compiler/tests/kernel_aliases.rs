//! The kernel tapset aliases rebuilt on BTF (compiler/src/tapset/
//! kernel_aliases.rs): which points they expand to, that only the alias
//! variables a script mentions are computed, and that a script's own
//! alias of the same family wins.
mod common;
use common::aliases::{points, vars};
use vm_spec::program::Program;

/// The program of `src`, or a panic with the rendered diagnostics.
fn build(src: &str) -> Program {
    common::build(src).program
}

#[test]
fn vfs_return_probes_compute_only_what_the_script_reads() {
    let p = build("probe vfs.read.return { print(bytes_read) }");
    assert_eq!(
        points(&p),
        [(
            "kernel.function(\"vfs_read\").return".to_string(),
            "vfs_read".to_string()
        )]
    );
    // bytes_read is $return: no target variable, no entry probe.
    assert!(p.target_vars.is_empty(), "{:?}", vars(&p));
    // ino: stap's __file_ino, @casts from the entry value of $file.
    let p = build("probe vfs.write { printf(\"%s %d %d\\n\", name, ino, bytes_to_write) }");
    let v = vars(&p);
    assert!(v.contains(&"@cast(file)->f_inode".to_string()), "{v:?}");
    assert!(v.contains(&"@cast(inode)->i_ino".to_string()), "{v:?}");
    assert!(v.contains(&"$count".to_string()), "{v:?}");
    assert!(
        !v.iter().any(|x| x.contains("s_dev")),
        "dev is not read: {v:?}"
    );
}

#[test]
fn tracepoint_families() {
    let p = build("probe netdev.transmit, netdev.receive { print(length) }");
    let pts: Vec<String> = points(&p).into_iter().map(|x| x.0).collect();
    assert_eq!(
        pts,
        [
            "kernel.trace(\"net_dev_queue\")",
            "kernel.trace(\"netif_receive_skb\")"
        ]
    );
    assert_eq!(vars(&p), ["$skb->len", "$skb->len"]);
    let p = build("probe signal.send { printf(\"%s %s\\n\", sig_name, pid_name) }");
    assert_eq!(points(&p)[0].0, "kernel.trace(\"signal_generate\")");
    let v = vars(&p);
    assert!(
        v.contains(&"$sig".to_string()) && v.contains(&"$task".to_string()),
        "{v:?}"
    );
    let p =
        build("probe kprocess.create { print(new_pid) } probe kprocess.exec { print(filename) }");
    let pts: Vec<String> = points(&p).into_iter().map(|x| x.0).collect();
    assert_eq!(
        pts,
        [
            "kernel.trace(\"sched_process_fork\")",
            "syscall.execve",
            "syscall.execveat"
        ]
    );
}

#[test]
fn a_script_s_own_alias_wins_and_unknown_members_are_no_match() {
    let p = build(
        "probe vfs.read = kernel.function(\"ksys_read\") { n = 1 }\n\
         probe vfs.read { print(n) }",
    );
    assert_eq!(points(&p)[0].1, "ksys_read");
    let e = common::fail("probe vfs.nope { }");
    assert!(e.contains("probe point mismatch"), "{e}");
}

#[test]
fn signal_names() {
    let src = "probe begin { printf(\"%s %s %s %s %s [%s]\\n\", _signal_name(1), _signal_name(9), \
               _signal_name(26), _signal_name(31), _signal_name(35), _signal_name(0)) }";
    let p = build(src);
    let r = common::run_program(&p, &Default::default()).expect("verifies");
    assert!(r.errors.is_empty());
    assert_eq!(
        r.output(),
        "SIGHUP SIGKILL SIGVTALRM SIGSYS SIGRTMIN+3 []\n"
    );
}
