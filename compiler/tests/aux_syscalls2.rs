//! The second half of stap's syscall decoders (tapset aux_syscalls2.stp:
//! `_quotactl_cmd_str` .. `_userfaultfd_flags_str`), compiled and run on
//! the C core in user space. The pure decoders print what stap prints for
//! the same values (x86-64); the ones that read user memory print NULL
//! for a null pointer and the address where the read faults (the user
//! space session maps no user memory); the buildok calls all compile.
mod common;
use common::*;

/// Runs a begin probe printing one decoded value a line; the lines.
fn lines(calls: &[&str]) -> Vec<String> {
    let body: String = calls.iter().map(|c| format!("println({c})\n")).collect();
    let src = format!("probe begin {{\n{body}}}\n");
    run_begin_end(&src, &Default::default())
        .ok()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Checks each (call, stap's output) pair.
fn check_all(cases: &[(&str, &str)]) {
    let calls: Vec<&str> = cases.iter().map(|c| c.0).collect();
    let got = lines(&calls);
    assert_eq!(got.len(), cases.len(), "{got:?}");
    let wrong: Vec<String> = cases
        .iter()
        .zip(&got)
        .filter(|((_, want), got)| got != want)
        .map(|((call, want), got)| format!("{call}: got {got:?}, stap prints {want:?}"))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn value_tables_print_stap_names_and_hex_for_unknown_values() {
    check_all(&[
        ("_sock_family_str(10)", "PF_INET6"),
        ("_sock_family_str(999)", "0x3e7"),
        ("_rlimit_resource_str(7)", "RLIMIT_NOFILE"),
        ("_quotactl_cmd_str(0x80000701)", "Q_GETQUOTA|GRPQUOTA"),
        ("_adjtimex_return_str(5)", "5 (TIME_ERROR)"),
        ("_adjtimex_return_str(42)", "42 (42)"),
        ("_semctl_cmd(0x102)", "IPC_64|IPC_STAT"),
        ("_stp_msgctl_cmd_str(2)", "IPC_STAT"),
        ("_sock_protocol_str(2, 6)", "IPPROTO_TCP"),
        ("_sock_protocol_str(1, 6)", "6"),
        ("_dfd_str(-100)", "AT_FDCWD"),
        ("_dfd_str(3)", "3"),
        ("_sighandler_str(1)", "SIG_IGN"),
        ("_kcmp_type_str(8)", "KCMP_TYPES"),
        ("_membarrier_cmd_str(0)", "MEMBARRIER_CMD_QUERY"),
        ("_stp_ioprio_value_str(0x4004)", "IOPRIO_CLASS_BE|4"),
        (
            "_mempolicy_mode_str(0x8002)",
            "MPOL_F_STATIC_NODES|MPOL_BIND",
        ),
        ("_prctl_argstr(15, 0x1234, 0, 0, 0)", "PR_SET_NAME, 0x1234"),
        ("_prctl_argstr(4, 1, 0, 0, 0)", "PR_SET_DUMPABLE, 1"),
        (
            "_prctl_argstr(1000, 1, 2, 3, 4)",
            "0x3e8, 0x1, 0x2, 0x3, 0x4",
        ),
        (
            "_ptrace_argstr(16, 123, 0x10, 0x20)",
            "PTRACE_ATTACH, 123, 0x10, 0x20",
        ),
    ]);
}

#[test]
fn flag_tables_join_names_in_stap_order_with_a_hex_remainder() {
    check_all(&[
        ("_mmap_flags(0x22)", "MAP_PRIVATE|MAP_ANONYMOUS"),
        (
            "_mmap_flags(0x78040022)",
            "MAP_HUGE_1GB|MAP_PRIVATE|MAP_ANONYMOUS|MAP_HUGETLB",
        ),
        ("_mprotect_prot_str(7)", "PROT_READ|PROT_WRITE|PROT_EXEC"),
        ("_mprotect_prot_str(0)", "PROT_NONE"),
        (
            "__fork_flags(0x1200011)",
            "CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD",
        ),
        ("_at_flag_str(0x8000100)", "AT_SYMLINK_NOFOLLOW|0x8000000"),
        ("_eventfd2_flag_str(0x80800)", "EFD_NONBLOCK|EFD_CLOEXEC"),
        ("_eventfd2_flag_str(0)", "0x0"),
        (
            "_sock_type_str(0x80801)",
            "SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK",
        ),
        ("_sock_type_str(0x100002)", "SOCK_DGRAM|0x100000"),
        ("_swapon_flags_str(0x8005)", "SWAP_FLAG_PREFER|5"),
        ("_stp_shmget_flags_str(0x3b6)", "IPC_CREAT|0666"),
        ("irqflags_str(0x2080)", "IRQF_SHARED|IRQF_ONESHOT"),
        (
            "_fanotify_init_flags_str(5)",
            "FAN_CLASS_CONTENT|FAN_CLOEXEC",
        ),
        ("_renameat2_flags_str(1)", "RENAME_NOREPLACE"),
        ("_stp_sigmask_str(0x10002)", "[SIGINT|SIGCHLD]"),
        ("_stp_sigmask_str(0)", "[EMPTY]"),
    ]);
}

#[test]
fn casts_narrow_and_extend_as_c_does() {
    check_all(&[
        ("__short(0xffff)", "-1"),
        ("__ushort(-1)", "65535"),
        ("__int32(0xffffffff)", "-1"),
        ("__uint32(-1)", "4294967295"),
        ("__long(-5)", "-5"),
    ]);
}

#[test]
fn user_structs_print_null_and_the_address_of_a_faulting_read() {
    check_all(&[
        ("_stp_sigset_u(0)", "NULL"),
        ("_stp_sigset_u(0x1000)", "0x1000"),
        ("_struct_sigaction_u(0)", "NULL"),
        ("_struct_sigaction32_u(0x2000)", "0x2000"),
        ("_stp_struct_iovec_u(0)", "NULL"),
        ("_stp_siginfo_u(0)", "NULL"),
        ("_stp_siginfo_u(0x3000)", "0x3000"),
        ("_struct_tms_u(0x4000)", "0x4000"),
        ("_stp_sigaltstack_u(0)", "0x0"),
        ("get_mmap_args(0x5000)", "0x5000"),
        ("_stp_xattr_val_str(0x6000, 4)", "0x6000"),
        ("_ptrace_return_geteventmsg_data(0, 0)", "0"),
    ]);
}

/// Every call of buildok/aux_syscalls-embedded.stp from `_seek_whence_str`
/// on compiles (the script's second half, as stap's -p4 test does).
#[test]
fn buildok_second_half_compiles() {
    let src = r#"probe begin {
	print (_seek_whence_str(0)) print (_quotactl_cmd_str(0))
	print (_sockopt_optname_str(0)) print (_sockopt_level_str(0))
	print (_sock_family_str(0)) print (_sock_type_str(0)) print (_sock_flags_str(0))
	print (_sock_protocol_str(0,0)) print (_opoll_op_str(0))
	print (_rlimit_resource_str(0)) print (_rusage_who_str(0))
	print (__short(0)) print (__ushort(0)) print (__int32(0)) print (__uint32(0))
	print (__ulong(0)) print (__long(0)) print (_dfd_str(0)) print (_adjtimex_return_str(0))
	print (_signal_name(0)) print (_semctl_cmd(0)) print (_stp_sigset_u(0))
	print (_stp_compat_sigset_u(0)) print (__fork_flags(0)) print (_at_flag_str(0))
	print (_epoll_create1_flag_str(0)) print (_eventfd2_flag_str(0))
	print (_signalfd4_flags_str(0)) print (_inotify_init1_flag_str(0)) print (_dup3_flag_str(0))
	print (_shmat_flags_str(0)) print (_mprotect_prot_str(0)) print (_mmap_flags(0))
	print (get_mmap_args(0)) print (_sighandler_str(0)) print (_struct_sigaction_u(0))
	print (_struct_sigaction32_u(0)) print (_struct_old_sigaction32_u(0))
	print (_stp_sigmask_str(0)) print (irqflags_str(0)) print (_stp_struct_iovec_u(0))
	print (_stp_struct_compat_iovec_u(0)) print (_stp_elf_notes_str(0))
	print (__ptrace_request_str(0)) print (_ptrace_argstr(0,0,0,0))
	print (_ptrace_return_geteventmsg_data(0,0)) print (_ptrace_return_arch_prctl_addr(0,0,0))
	print (_swapon_flags_str(0)) print (__is_user_regs(0)) print (_stp_shmget_flags_str(0))
	print (_stp_msgget_key_str(0)) print (_stp_msgctl_cmd_str(0)) print (_stp_msgflg_str(0))
	print (_stp_compat_msgrcv_msgbuf(0,0)) print (_stp_compat_msgrcv_msgtyp(0,0,0))
	print (_stp_xattr_flags_str(0)) print (_stp_xattr_val_str(0,0))
	print (_stp_ioprio_which_str(0)) print (_stp_ioprio_value_str(0))
	print (_mempolicy_flags_str(0)) print (_mempolicy_mode_str(0))
	print (_finit_module_flags_str(0)) print (_prctl_argstr(0, 0, 0, 0, 0))
	print (_stp_timerfd_flags_str(0)) print (_stp_fallocate_mode_str(0))
	print (_sync_file_range_flags_str(0)) print (_stp_siginfo_u(0))
	print (_stp_compat_siginfo_u(0)) print (_struct_tms_u(0)) print (_struct_sysinfo_u(0))
	print (_kexec_flags_str(0)) print (_kexec_file_load_flags_str(0))
	print (_stp_sigaltstack_u(0)) print (_stp_compat_sigaltstack_u(0))
	print (_renameat2_flags_str(0)) print (_fanotify_init_flags_str(0))
	print (_fanotify_mark_flags_str(0)) print (_fanotify_mark_mask_str(0))
	print (_perf_event_open_flags_str(0)) print (_kcmp_type_str(0))
	print (_struct_sched_attr_u(0)) print (_struct_compat_itimerspec_u(0))
	print (_struct_compat_timex_u(0)) print (_membarrier_cmd_str(0))
	print (_userfaultfd_flags_str(0))
}"#;
    let c = build(src);
    check(&c.program);
}
