//! The tier-6 kernel tapset functions (compiler/src/tapset/kernel/*.stp):
//! signal.stp's sigset_mask_str run on the C core in user space, and the
//! dentry/nfs/rpc functions compiled from a plain script.
mod common;
use common::*;

fn out(src: &str) -> String {
    run_begin_end(src, &RunOptions::default()).report("")
}

#[test]
fn sigset_mask_str_lists_the_set_signals() {
    // Bit 0 is signal 1; bit 62 is signal 63, the last.
    let o = out(
        "probe begin { println(sigset_mask_str(0x4000000000000105)) println(sigset_mask_str(0)) }",
    );
    assert_eq!(o, "1,3,9,63\n\n");
}

#[test]
fn subsystem_functions_compile() {
    let c = build(
        "probe kernel.function(\"do_exit\") { println(d_path(0), inode_path(0), clones_from_clnt(0), get_ip(0), __nfsi_cache_valid(0), timer_pending(0), container_of_task_rcu(0)) }",
    );
    check(&c.program);
}
