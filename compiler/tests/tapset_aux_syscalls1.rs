//! The first half of stap's syscall decoders (aux_syscalls1.stp: flag and
//! command names, wait statuses, futex operations, and the time, rlimit,
//! pipe and argv structs read from user memory), run on the C core in user
//! space; the expected strings are what stap's aux_syscalls.stp prints for
//! the same values on x86-64.
mod common;
use common::*;
use vm_testkit::HostEnv;

/// Structs of longs here (see `env`).
const LONGS: u64 = 0x2000;
/// Structs of ints here.
const INTS: u64 = 0x3000;
/// "ls\0-l\0" here.
const STRS: u64 = 0x4000;
/// A 32-bit argv here: STRS, STRS + 3, NULL.
const ARGV32: u64 = 0x5000;
/// A struct __kernel_timex (208 bytes) here.
const TIMEX: u64 = 0x6000;
/// Nothing mapped here.
const HOLE: u64 = 0x900_0000;

fn env() -> HostEnv {
    let longs: Vec<u8> = [1i64, 2, 3, 500_000, 5, 0x3fff_ffff, -1, -1]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let ints: Vec<u8> = [7i32, 8, -60, 1, 3, 4]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let argv: Vec<u8> = [STRS as u32, STRS as u32 + 3, 0, 0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    // modes ADJ_OFFSET|ADJ_OFFSET_SINGLESHOT|0x100000, offset -5, freq 7,
    // maxerror 9, esterror 11, status -2 (an int), constant 13,
    // precision 15, tolerance 17, tick 10000.
    let mut timex = vec![0u8; 208];
    timex[0..4].copy_from_slice(&0x10_8001u32.to_le_bytes());
    for (off, v) in [
        (8, -5i64),
        (16, 7),
        (24, 9),
        (32, 11),
        (48, 13),
        (56, 15),
        (64, 17),
        (88, 10_000),
    ] {
        timex[off..off + 8].copy_from_slice(&v.to_le_bytes());
    }
    timex[40..44].copy_from_slice(&(-2i32).to_le_bytes());
    HostEnv {
        memory: vec![
            (TIMEX, timex),
            (LONGS, longs),
            (INTS, ints),
            (STRS, b"ls\0-l\0".to_vec()),
            (ARGV32, argv),
        ],
        ..HostEnv::default()
    }
}

/// The lines `probe begin` prints for each expression of `exprs` (one
/// `println` each), in `env`.
fn lines(exprs: &[&str]) -> Vec<String> {
    let body: String = exprs.iter().map(|e| format!("println({e})\n")).collect();
    let src = format!("probe begin {{\n{body}}}\n");
    let opts = RunOptions {
        env: env(),
        ..Default::default()
    };
    run_begin_end(&src, &opts)
        .ok()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Each (expression, expected output) pair.
fn expect(cases: &[(&str, &str)]) {
    let exprs: Vec<&str> = cases.iter().map(|c| c.0).collect();
    let got = lines(&exprs);
    let want: Vec<&str> = cases.iter().map(|c| c.1).collect();
    for (i, w) in want.iter().enumerate() {
        assert_eq!(got.get(i).map(String::as_str), Some(*w), "{}", exprs[i]);
    }
    assert_eq!(got.len(), want.len());
}

#[test]
fn open_access_and_mode_flags() {
    expect(&[
        ("_sys_open_flag_str(0x241)", "O_WRONLY|O_CREAT|O_TRUNC"),
        ("_sys_open_flag_str(0)", "O_RDONLY"),
        (
            "_sys_open_flag_str(0x1080002)",
            "O_RDWR|O_CLOEXEC|0x1000000",
        ),
        // O_SYNC (04010000) comes first in stap's table and takes O_DSYNC.
        ("_sys_open_flag_str(0x1000)", "O_RDONLY|O_SYNC"),
        ("_access_mode_str(0)", "F_OK"),
        ("_access_mode_str(6)", "R_OK|W_OK"),
        ("_access_mode_str(0x11)", "X_OK|0x10"),
        (
            "_sys_open_mode_str(0644)",
            "S_IROTH|S_IRGRP|S_IWUSR|S_IRUSR",
        ),
        (
            "_sys_open_mode_str(0755)",
            "S_IXOTH|S_IROTH|S_IXGRP|S_IRGRP|S_IRWXU",
        ),
        ("_sys_open_mode_str(01000)", "01000"),
        ("_mknod_mode_str(0100644)", "S_IFREG|0644"),
        ("_mknod_mode_str(0140755)", "S_IFSOCK|0755"),
        ("_sys_pipe2_flag_str(0x80800)", "O_NONBLOCK|O_CLOEXEC"),
        ("_module_flags_str(0x800)", "O_NONBLOCK"),
        ("__sem_flags(0x780)", "IPC_CREAT|IPC_EXCL|0600"),
        ("__sem_flags(0x11a4)", "0x1000|0644"),
    ]);
}

#[test]
fn flag_tables_and_lookups() {
    expect(&[
        ("_wait4_opt_str(0x1000001)", "WNOHANG|WNOWAIT"),
        ("_wait4_opt_str(0)", "0x0"),
        ("_flock_cmd_str(6)", "LOCK_EX|LOCK_NB"),
        ("_flock_cmd_str(0xc0)", "LOCK_READ|LOCK_WRITE"),
        (
            "_inotify_watch_mask_str(0x40000300)",
            "IN_CREATE|IN_DELETE|IN_ISDIR",
        ),
        ("_msg_flags_str(0x80004040)", "MSG_DONTWAIT|MSG_NOSIGNAL"),
        ("_msg_flags_str(0x100000040)", "MSG_DONTWAIT"),
        ("_mountflags_str(0x5001)", "MS_RDONLY|MS_BIND|MS_REC"),
        ("_mountflags_str(0x101)", "MS_RDONLY|0x100"),
        ("_umountflags_str(3)", "MNT_FORCE|MNT_DETACH"),
        ("_getrandom_flags_str(3)", "GRND_NONBLOCK|GRND_RANDOM"),
        ("_mlockall_flags_str(5)", "MCL_CURRENT|MCL_ONFAULT"),
        ("_mfd_flags_str(3)", "MFD_CLOEXEC|MFD_ALLOW_SEALING"),
        ("_mremap_flags(1)", "MREMAP_MAYMOVE"),
        ("_msync_flag_str(6)", "MS_INVALIDATE|MS_SYNC"),
        ("_stp_mlock2_str(1)", "MLOCK_ONFAULT"),
        (
            "_sched_policy_str(0x40000001)",
            "SCHED_RESET_ON_FORK|SCHED_FIFO",
        ),
        ("_sched_policy_str(4)", "0x4"),
        ("_get_wc_str(1)", "CLOCK_MONOTONIC"),
        ("_get_wc_str(12)", "0xc"),
        ("_madvice_advice_str(8)", "MADV_FREE"),
        ("_madvice_advice_str(6)", "0x6"),
        ("_madvice_advice_str(14)", "MADV_HUGEPAGE"),
        ("_madvice_advice_str(100)", "MADV_HWPOISON"),
        ("_fadvice_advice_str(4)", "POSIX_FADV_DONTNEED"),
        ("_fcntl_cmd_str(1030)", "F_DUPFD_CLOEXEC"),
        ("_fcntl_cmd_str(7)", "F_SETLKW"),
        ("_fcntl_cmd_str(12)", "0xc"),
        ("_reboot_magic_str(0xfee1dead)", "LINUX_REBOOT_MAGIC1"),
        ("_reboot_flag_str(0x4321fedc)", "LINUX_REBOOT_CMD_POWER_OFF"),
        ("_sigprocmask_how_str(2)", "SIG_SETMASK"),
        ("_itimer_which_str(2)", "ITIMER_PROF"),
        ("_priority_which_str(1)", "PRIO_PGRP"),
        ("_shutdown_how_str(2)", "SHUT_RDWR"),
        ("_waitid_which_str(1)", "P_PID"),
        ("_seccomp_op_str(1)", "SECCOMP_SET_MODE_FILTER"),
        ("_seccomp_flags_str(1)", "SECCOMP_FILTER_FLAG_TSYNC"),
        ("_bpf_cmd_str(5)", "BPF_PROG_LOAD"),
        ("_bpf_cmd_str(-1)", "0xffffffffffffffff"),
        ("_stp_clock_nanosleep_flags_str(1)", "TIMER_ABSTIME"),
    ]);
}

#[test]
fn futex_operations_and_wait_statuses() {
    expect(&[
        ("_futex_op_str(137)", "FUTEX_WAIT_BITSET_PRIVATE"),
        ("_futex_op_str(0)", "FUTEX_WAIT"),
        ("_futex_op_str(130)", "0x82"),
        ("_futex_op_str(393)", "0x189"),
        (
            "_futex_wake_op_str(0x14001001)",
            "{FUTEX_OP_ADD, 1, FUTEX_OP_CMP_GT, 1}",
        ),
        (
            "_futex_wake_op_str(0x80fff000)",
            "{FUTEX_OP_OPARG_SHIFT|FUTEX_OP_SET, -1, FUTEX_OP_CMP_EQ, 0}",
        ),
        ("_wait_status_str(0x100)", "WEXITSTATUS=1"),
        ("_wait_status_str(0x9)", "WTERMSIG=SIGKILL"),
        ("_wait_status_str(0x8b)", "WCOREDUMP"),
        ("_wait_status_str(0x137f)", "WSTOPSIG=SIGSTOP"),
        (
            "_wait_status_str(0x3057f)",
            "WSTOPSIG=SIGTRAP | PTRACE_EVENT_CLONE << 8",
        ),
        ("_wait_status_str(0xffff)", "WIFCONTINUED"),
        ("WEXITSTATUS(0x2a00)", "42"),
        ("_ptrace_event_name(6)", "PTRACE_EVENT_EXIT"),
    ]);
}

#[test]
fn structs_in_user_memory() {
    let l = LONGS;
    let i = INTS;
    expect(&[
        (&format!("_struct_timeval_u({l}, 1)"), "[1.000002]"),
        (
            &format!("_struct_timeval_u({l}, 2)"),
            "[1.000002][3.500000]",
        ),
        ("_struct_timeval_u(0, 1)", "NULL"),
        (&format!("_struct_timeval_u({l}, 3)"), "NULL"),
        (&format!("_struct_timeval_u({HOLE}, 1)"), "0x9000000"),
        (&format!("_struct_timespec_u({l}, 1)"), "[1.000000002]"),
        (&format!("_struct_timespec_u({}, 1)", l + 32), "[UTIME_NOW]"),
        (&format!("_struct_itimerval_u({l})"), "[1.000002,3.500000]"),
        (&format!("_struct_itimerspec_u({l})"), "[1.000002,3.500000]"),
        (&format!("_struct_rlimit_u({})", l + 48), "[-1,-1]"),
        (&format!("_struct_utimbuf_modtime({l})"), "2"),
        (&format!("_struct_utimbuf_actime({HOLE})"), "0"),
        (&format!("_struct_compat_timeval_u({i}, 1)"), "[7.000008]"),
        (
            &format!("_struct_compat_timespec_u({i}, 1)"),
            "[7.000000008]",
        ),
        (
            &format!("_struct_compat_itimerval_u({i})"),
            "[7.000008,-60.000001]",
        ),
        (&format!("_struct_timezone_u({})", i + 8), "[-60, 1]"),
        (&format!("_struct_compat_utimbuf_actime({})", i + 8), "-60"),
        (&format!("_fildes_index_u({}, 1)", i + 16), "4"),
        (&format!("_fildes_index_u({}, 2)", i + 16), "0"),
        (
            &format!("__get_compat_argv({ARGV32}, 0)"),
            "[\"ls\", \"-l\"]",
        ),
        (&format!("__get_compat_argv({ARGV32}, 1)"), "[\"-l\"]"),
        (&format!("__count_compat_envp({ARGV32})"), "[/* 2 vars */]"),
    ]);
}

/// aux_syscalls_extra.stp's lseek whence and adjtimex struct decoders
/// (the buildok *syscalls-detailed files use them).
#[test]
fn seek_whence_and_timex() {
    expect(&[
        ("_seek_whence_str(0)", "SEEK_SET"),
        ("_seek_whence_str(4)", "SEEK_HOLE"),
        ("_seek_whence_str(0x100000002)", "SEEK_END"),
        ("_seek_whence_str(9)", "0x9"),
        ("_adjtimex_modes_str(0)", "0x0"),
        (
            "_adjtimex_modes_str(0x4003)",
            "ADJ_OFFSET|ADJ_FREQUENCY|ADJ_TICK",
        ),
        (
            &format!("_struct_timex_u({TIMEX})"),
            "{ADJ_OFFSET|ADJ_OFFSET_SINGLESHOT|0x100000, constant=13, esterror=11, \
             freq=7, maxerror=9, offset=18446744073709551611, precision=15, status=-2, \
             tick=10000, tolerance=17}",
        ),
        ("_struct_timex_u(0)", "NULL"),
        (&format!("_struct_timex_u({HOLE})"), "0x9000000"),
    ]);
}

#[test]
fn a_script_function_of_the_same_name_wins() {
    let src =
        "function _get_wc_str(x) { return \"mine\" }\nprobe begin { println(_get_wc_str(1)) }";
    let opts = RunOptions::default();
    assert_eq!(run_begin_end(src, &opts).ok(), "mine\n");
}
