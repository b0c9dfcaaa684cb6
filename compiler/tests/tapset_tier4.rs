//! The tier-4 tapset functions (compiler/src/tapset/library.stp's tier-4
//! section): task_cpu, task_max_file_handles, task_open_file_handles
//! (task.stp), task_start_time (task_time.stp), user_string_n_warn,
//! user_string_n_quoted (uconversions.stp), the UTF-32 / UTF-16 string
//! readers (conversions.stp, uconversions.stp), disk_name and bdevname
//! (dev.stp) and the queue statistics (queue_stats.stp), run on the C
//! core in user space with the memory and task given by the `HostEnv`.
//! The expected values are what stap's tapset computes: its C
//! `_stp_convert_utf32` (UTF-8 of up to 4 bytes, surrogates and code
//! points past 0x10ffff refused, the last character that fits in
//! MAXSTRINGLEN - 1 bytes), its error texts, and queue_stats.stp's
//! arithmetic worked by hand.
mod common;
use common::*;
use vm_spec::program::{Program, RelocKind, TargetSite};
use vm_testkit::HostEnv;

/// The current task_struct: an embedded thread_info at 0 (its `cpu` at
/// 0x18: 3), an older `cpu` at 0x28 (5), `files` at 0x30, `start_boottime`
/// at 0x38, `real_start_time` at 0x40, `signal` at 0x48.
const TASK: u64 = 0x10000;
/// A second task whose fdtable has 70 descriptors.
const TASK2: u64 = 0x10800;
/// files_struct: `fdt` at 0x20.
const FILES: u64 = 0x11000;
const FILES2: u64 = 0x11100;
/// fdtable: `max_fds` (u32) at 0, `open_fds` at 0x10.
const FDT: u64 = 0x12000;
const FDT2: u64 = 0x12100;
/// The open_fds bitmap: fds 0, 1, 3 and 63, then 64 .. 127.
const BITS: u64 = 0x13000;
/// gendisks: `disk_name` (char[32]) at 0x10: "sda", "nvme0n1".
const SDA: u64 = 0x14000;
const NVME: u64 = 0x14100;
/// block_device: `bd_disk` at 0, `bd_partno` (u8) at 8 (2).
const BDEV: u64 = 0x15000;
/// UTF-32 "Aé€😀", then the same in UTF-16 at +0x100.
const WIDE: u64 = 0x20000;
/// Bad strings: UTF-32 "x" U+D800, then +0x10 "x" U+110000, UTF-16 at
/// +0x20 a lone high surrogate then "y", at +0x30 a lone low surrogate.
const BAD: u64 = 0x21000;
/// UTF-32 "ab" in the last 8 bytes before an unmapped page.
const EDGE: u64 = 0x22ff8;
/// 200 U+20AC (3 bytes each) in UTF-32, then at +0x1000 the same in UTF-16.
const LONG: u64 = 0x30000;
/// A NUL-terminated "a\tbcdefghij".
const TEXT: u64 = 0x40000;
/// signal_struct: `rlim` (struct rlimit[16]) at 0x10: rlim_cur of
/// RLIMIT_NOFILE (7) 1024, of RLIMIT_CPU (0) -1 (RLIM_INFINITY).
const SIG: u64 = 0x16000;
/// Nothing mapped here.
const HOLE: u64 = 0x900_0000;

fn put(v: &mut [u8], at: usize, bytes: &[u8]) {
    v[at..at + bytes.len()].copy_from_slice(bytes);
}

fn utf32(s: &[u32]) -> Vec<u8> {
    s.iter().flat_map(|c| c.to_le_bytes()).collect()
}

fn utf16(s: &[u16]) -> Vec<u8> {
    s.iter().flat_map(|c| c.to_le_bytes()).collect()
}

fn env() -> HostEnv {
    let mut task = vec![0u8; 0x900];
    put(&mut task, 0x18, &3u32.to_le_bytes());
    put(&mut task, 0x28, &5u32.to_le_bytes());
    put(&mut task, 0x30, &FILES.to_le_bytes());
    put(&mut task, 0x38, &123_456_789_000u64.to_le_bytes());
    put(&mut task, 0x40, &42u64.to_le_bytes());
    put(&mut task, 0x48, &SIG.to_le_bytes());
    put(&mut task, 0x830, &FILES2.to_le_bytes());
    let mut sig = vec![0u8; 0x120];
    put(&mut sig, 0x10, &u64::MAX.to_le_bytes());
    put(&mut sig, 0x10 + 7 * 16, &1024u64.to_le_bytes());
    put(&mut sig, 0x10 + 7 * 16 + 8, &4096u64.to_le_bytes());
    let mut files = vec![0u8; 0x200];
    put(&mut files, 0x20, &FDT.to_le_bytes());
    put(&mut files, 0x120, &FDT2.to_le_bytes());
    let mut fdt = vec![0u8; 0x200];
    put(&mut fdt, 0, &128u32.to_le_bytes());
    put(&mut fdt, 0x10, &BITS.to_le_bytes());
    put(&mut fdt, 0x100, &70u32.to_le_bytes());
    put(&mut fdt, 0x110, &BITS.to_le_bytes());
    let mut bits = Vec::new();
    bits.extend_from_slice(&(0x8000_0000_0000_000bu64).to_le_bytes());
    bits.extend_from_slice(&u64::MAX.to_le_bytes());
    let mut disks = vec![0u8; 0x200];
    put(&mut disks, 0x10, b"sda\0");
    put(&mut disks, 0x110, b"nvme0n1\0");
    let mut bdev = vec![0u8; 16];
    put(&mut bdev, 0, &SDA.to_le_bytes());
    bdev[8] = 2;
    let mut wide = utf32(&[0x41, 0xe9, 0x20ac, 0x1f600, 0]);
    wide.resize(0x100, 0);
    wide.extend(utf16(&[0x41, 0xe9, 0x20ac, 0xd83d, 0xde00, 0]));
    let mut bad = vec![0u8; 0x40];
    put(&mut bad, 0, &utf32(&[0x78, 0xd800, 0]));
    put(&mut bad, 0x10, &utf32(&[0x78, 0x110000, 0]));
    put(&mut bad, 0x20, &utf16(&[0xd83d, 0x79, 0]));
    put(&mut bad, 0x30, &utf16(&[0xdc00, 0]));
    let mut long = utf32(&[0x20ac; 200]);
    long.resize(0x1000, 0);
    long.extend(utf16(&[0x20ac; 200]));
    long.extend([0, 0]);
    HostEnv {
        task: TASK,
        tid: 43,
        memory: vec![
            (TASK, task),
            (FILES, files),
            (FDT, fdt),
            (BITS, bits),
            (SDA, disks),
            (BDEV, bdev),
            (SIG, sig),
            (WIDE, wide),
            (BAD, bad),
            (EDGE, utf32(&[0x61, 0x62])),
            (LONG, long),
            (TEXT, b"a\tbcdefghij\0".to_vec()),
        ],
        ..HostEnv::default()
    }
}

/// (offset, whether the step reads 8 bytes, the mask of the value) of
/// `member` in `st`, and the struct it leads to; None when this BTF
/// lacks it.
fn member(st: &str, m: &str, new_kernel: bool) -> Option<(i64, i64, i64, &'static str)> {
    Some(match (st, m) {
        ("task_struct", "thread_info") if new_kernel => (0, 0, -1, "thread_info"),
        ("thread_info", "cpu") => (0x18, 1, 0xffff_ffff, ""),
        ("task_struct", "cpu") => (0x28, 1, 0xffff_ffff, ""),
        ("task_struct", "files") => (0x30, 1, -1, "files_struct"),
        ("task_struct", "start_boottime") if new_kernel => (0x38, 1, -1, ""),
        ("task_struct", "real_start_time") => (0x40, 1, -1, ""),
        ("task_struct", "signal") => (0x48, 1, -1, "signal_struct"),
        ("signal_struct", "rlim") => (0x10, 0, -1, ""),
        ("files_struct", "fdt") => (0x20, 1, -1, "fdtable"),
        ("fdtable", "max_fds") => (0, 1, 0xffff_ffff, ""),
        ("fdtable", "open_fds") => (0x10, 1, -1, ""),
        ("gendisk", "disk_name") => (0x10, 0, -1, ""),
        ("block_device", "bd_disk") => (0, 1, -1, "gendisk"),
        ("block_device", "bd_partno") => (8, 1, 0xff, ""),
        _ => return None,
    })
}

/// Fills the @cast relocations as the loader would from BTF: the
/// layouts of `member`, `new_kernel` choosing whether the 5.16
/// thread_info `cpu` and the 5.5 `start_boottime` exist.
fn relocate(p: &mut Program, new_kernel: bool) {
    for tv in p.target_vars.clone() {
        let TargetSite::Cast(st) = &tv.site else {
            panic!("site {:?}", tv.site)
        };
        let mut steps = Vec::new();
        let mut cur: &str = st;
        let mut exists = true;
        for f in &tv.fields {
            match member(cur, f, new_kernel) {
                Some((off, deref, mask, next)) => {
                    steps.push((off, deref, mask));
                    cur = next;
                }
                None => {
                    exists = false;
                    break;
                }
            }
        }
        let mask = steps.last().map_or(-1, |s| s.2);
        for r in &tv.relocs {
            p.konsts[r.konst as usize] = match r.kind {
                RelocKind::Exists => i64::from(exists),
                RelocKind::Offset(i) if i >= 1 => steps.get(i as usize - 1).map_or(0, |s| s.0),
                RelocKind::Deref(i) if i >= 1 => steps.get(i as usize - 1).map_or(0, |s| s.1),
                RelocKind::Mask => mask,
                _ => 0,
            };
        }
    }
}

/// Runs `src` (begin, end) in `env()`; the output and then one `ERROR:
/// <message>` line per failed handler.
fn run_with(src: &str, new_kernel: bool) -> String {
    let mut p = build(src).program;
    relocate(&mut p, new_kernel);
    let opts = RunOptions {
        env: env(),
        check: true,
        ..Default::default()
    };
    run_program(&p, &opts).expect("verifies").report("")
}

fn run(src: &str) -> String {
    run_with(src, true)
}

#[test]
fn task_cpu_reads_thread_info_or_the_older_member() {
    let src = "probe begin { println(task_cpu(task_current())) }";
    assert_eq!(run_with(src, true), "3\n");
    assert_eq!(run_with(src, false), "5\n");
}

#[test]
fn file_handles_come_from_the_fdtable() {
    let out = run(&format!(
        "probe begin {{ printf(\"%d %d %d %d\\n\", task_max_file_handles(task_current()), \
         task_open_file_handles(task_current()), task_max_file_handles({TASK2}), \
         task_open_file_handles({TASK2})) }}
         probe begin {{ println(task_open_file_handles({HOLE})) }}"
    ));
    // 4 + 64 bits of 128; 4 + 6 of the first 70.
    assert_eq!(out, "128 68 70 10\nERROR: kernel read fault at 0x9000030\n");
}

#[test]
fn resource_limits_are_rlim_cur() {
    let out = run("probe begin { t = task_current() \
         printf(\"%d %d %d %d\\n\", task_rlimit_nofile(t), task_rlimit_cpu(t), \
         task_rlimit_nproc(t), _task_rlimit_cur(t, 16)) }");
    assert_eq!(out, "1024 -1 0 -1\n");
}

#[test]
fn task_start_time_is_the_boot_time_start_or_zero() {
    let src = "probe begin { printf(\"%d %d\\n\", task_start_time(tid()), task_start_time(7)) }";
    assert_eq!(run_with(src, true), "123456789000 0\n");
    assert_eq!(run_with(src, false), "42 0\n");
}

#[test]
fn user_string_n_warn_warns_and_returns_the_message() {
    let out = run(&format!(
        "probe begin {{ printf(\"[%s]\\n\", user_string_n_warn({TEXT}, 3)) \
         printf(\"[%s]\\n\", user_string_n_warn({HOLE}, 3)) \
         printf(\"[%s]\\n\", user_string_n_warn({HOLE}, 3, \"<x>\")) \
         printf(\"[%s]\\n\", user_string_n_warn({TEXT}, 3, \"<x>\")) }}"
    ));
    let w = "WARNING: user string copy fault -14 at 0x9000000 [man error::fault]\n";
    assert_eq!(out, format!("[a\tb]\n{w}[]\n{w}[<x>]\n[a\tb]\n"));
}

#[test]
fn user_string_n_quoted_quotes_cuts_and_gives_the_address() {
    let out = run(&format!(
        "probe begin {{ println(user_string_n_quoted({TEXT}, 5)) \
         println(user_string_n_quoted({TEXT}, 20, 10)) \
         println(user_string_n_quoted({TEXT}, 20, 12)) \
         println(user_string_n_quoted({TEXT}, 20, 14)) println(user_string_n_quoted({TEXT}, 20, 16)) \
         println(user_string_n_quoted({HOLE}, 5)) println(user_string_n_quoted(0, 5, 10)) }}"
    ));
    // 5 bytes read are "a\tbcd"; "\"a\\tbcdefghij\"" is 14 bytes: over outlen - 2 it is cut at
    // outlen - 4 and `"...` added.
    assert_eq!(
        out,
        "\"a\\tbcd\"\n\"a\\tbc\"...\n\"a\\tbcde\"...\n\"a\\tbcdefg\"...\n\"a\\tbcdefghij\"\n0x9000000\n0x0\n"
    );
}

#[test]
fn wide_strings_decode_to_utf8() {
    let out = run(&format!(
        "probe begin {{ println(kernel_string_utf32({WIDE})) \
         println(kernel_string_utf16({WIDE} + 0x100)) \
         println(user_string_utf32({WIDE})) println(user_string_utf16({WIDE} + 0x100)) \
         println(kernel_string_quoted_utf32({WIDE})) println(user_string_quoted_utf16({HOLE})) \
         printf(\"[%s][%s]\\n\", kernel_string_utf32({WIDE} + 16), user_string_utf16({WIDE} + 0x10a)) }}"
    ));
    assert_eq!(
        out,
        "Aé€😀\nAé€😀\nAé€😀\nAé€😀\n\"A\\303\\251\\342\\202\\254\\360\\237\\230\\200\"\n0x9000000\n[][]\n"
            .replace("\\303\\251\\342\\202\\254\\360\\237\\230\\200", &quoted_tail())
    );
}

/// string_quoted of "é€😀" as stapvm's `string_quoted` gives it.
fn quoted_tail() -> String {
    let out = run("probe begin { println(string_quoted(\"é€😀\")) }");
    out.trim_end().trim_matches('"').to_string()
}

#[test]
fn invalid_code_points_are_errors_with_stap_texts() {
    let out = run(&format!(
        "probe begin {{ println(kernel_string_utf32({BAD})) }}
         probe begin {{ println(user_string_utf32({BAD} + 16)) }}
         probe begin {{ println(kernel_string_utf16({BAD} + 32)) }}
         probe begin {{ println(user_string_utf16({BAD} + 48)) }}
         probe begin {{ printf(\"%s|%s|%s|%s\\n\", kernel_string_utf32({BAD}, \"e1\"), \
         user_string_utf16({BAD} + 32, \"e2\"), kernel_string_quoted_utf16({BAD} + 48), \
         user_string_quoted_utf32({BAD})) }}"
    ));
    assert_eq!(
        out,
        "e1|e2|0x21030|0x21000\n\
         ERROR: invalid UTF-32 character U+D800 at 0x21004\n\
         ERROR: invalid UTF-32 character U+110000 at 0x21014\n\
         ERROR: invalid UTF-16 character U+D83D at 0x21020\n\
         ERROR: invalid UTF-16 character U+DC00 at 0x21030\n"
    );
}

#[test]
fn faults_name_the_character_address() {
    let out = run(&format!(
        "probe begin {{ println(kernel_string_utf32({EDGE})) }}
         probe begin {{ println(user_string_utf32({EDGE})) }}
         probe begin {{ println(kernel_string_utf16({HOLE})) }}
         probe begin {{ println(user_string_utf16({HOLE})) }}
         probe begin {{ printf(\"%s|%s\\n\", user_string_utf32({EDGE}, \"e\"), \
         kernel_string_quoted_utf32({EDGE})) }}"
    ));
    assert_eq!(
        out,
        "e|0x22ff8\n\
         ERROR: kernel string copy fault at 0x23000 [man error::fault]\n\
         ERROR: user string copy fault at 0x23000 [man error::fault]\n\
         ERROR: kernel string copy fault at 0x9000000 [man error::fault]\n\
         ERROR: user string copy fault at 0x9000000 [man error::fault]\n"
    );
}

#[test]
fn wide_strings_stop_at_the_last_character_that_fits() {
    // MAXSTRINGLEN - 1 bytes hold (MAXSTRINGLEN - 1) / 3 whole U+20AC.
    let out = run(&format!(
        "probe begin {{ m = strlen(sprintf(\"%4096s\", \"\")) \
         printf(\"%d %d %d %d\\n\", strlen(kernel_string_utf32({LONG})), \
         strlen(user_string_utf16({LONG} + 0x1000)), m / 3 * 3, \
         substr(kernel_string_utf32({LONG}), 0, 3) == \"€\") }}"
    ));
    let v: Vec<i64> = out.split_whitespace().map(|x| x.parse().unwrap()).collect();
    assert_eq!(v[0], v[2].min(600), "{out}");
    assert_eq!(v[1], v[0]);
    assert_eq!(v[3], 1);
    assert!(v[0] < 600, "{out}: the test wants the cap to bind");
}

#[test]
fn disk_names_add_the_partition() {
    let out = run(&format!(
        "probe begin {{ printf(\"%s %s %s %s %s %s\\n\", disk_name({SDA}, 0), disk_name({SDA}, 1), \
         disk_name({NVME}, 0), disk_name({NVME}, 2), bdevname({BDEV}), bdevname(0)) }}"
    ));
    assert_eq!(out, "sda sda1 nvme0n1 nvme0n1p2 sda2 N/A\n");
}

#[test]
fn queue_statistics_average_since_qsq_start() {
    // qs_time() is the script's (queue_stats.stp lets a script define
    // it): times 100 .. 200 by hand. Two requests: one waits 100..110,
    // runs 110..140; the other waits 120..140, runs 140..170; the query
    // at 200 (elapsed 100).
    let out = run("global t
         function qs_time() { return t }
         probe begin {
           t = 100 qsq_start(\"q\") qs_wait(\"q\")
           t = 110 qs_run(\"q\")
           t = 120 qs_wait(\"q\")
           t = 140 qs_done(\"q\") qs_run(\"q\")
           t = 170 qs_done(\"q\")
           t = 200
           printf(\"%d %d %d %d %d %d\\n\", qsq_utilization(\"q\", 100), qsq_blocked(\"q\", 100),
             qsq_wait_queue_length(\"q\", 1000), qsq_service_time(\"q\", 1),
             qsq_wait_time(\"q\", 1), qsq_throughput(\"q\", 1000))
           qsq_print(\"q\")
         }
         probe begin { t = 5 qsq_start(\"r\") qsq_service_time(\"r\", 1) }");
    // run 110..170 = 60; wait 100..110 and 120..140 = 30; wait length
    // integral 30; run length integral 60; 2 done.
    assert_eq!(
        out,
        "60 30 300 30 45 20\n\
         q: 20000.000 ops/s, 0.300 qlen, 45 await, 30 svctm, 30% wait, 60% util\n\
         ERROR: division by 0\n"
    );
}

#[test]
fn buildok_dev_and_queue_stats_compile() {
    // buildok/dev-embedded.stp and queue_stats-embedded.stp, verbatim.
    build(
        "probe begin {\n\tprint(MAJOR(0))\n\tprint(MINOR(0))\n\tprint(MKDEV(0, 0))\n\
         \tprint(usrdev2kerndev(0))\n\tprint(disk_name(0, 0))\n\tprint(bdevname(0))\n}\n",
    );
    build(
        "probe begin {\n  qsq_start(\"test\")\n  qs_wait(\"test\")\n  qs_run(\"test\")\n\
         \x20 qs_done(\"test\")\n\n  print(\"Time = %d\", qs_time())\n\
         \x20 print(\"Utilization % = %d\", qsq_utilization(\"test\", 100))\n\
         \x20 print(\"Wait % = %d\", qsq_blocked(\"test\", 100))\n\
         \x20 print(\"Avg queue length = %d\", qsq_wait_queue_length(\"test\", 1))\n\
         \x20 print(\"Avg service time = %d\", qsq_service_time(\"test\", 1))\n\
         \x20 print(\"Avg wait time = %d\", qsq_wait_time(\"test\", 1))\n\
         \x20 print(\"Avg requests served = %d\", qsq_throughput(\"test\", 1))\n\n\
         \x20 qsq_print(\"test\")\n}\n",
    );
}

/// The older names stap keeps (conversions.stp, uconversions.stp, ansi.stp)
/// and signal.stp's, vfs.stp's and inet_sock.stp's small helpers give what
/// the functions they stand for give.
#[test]
fn older_names_and_small_helpers() {
    let out = run(&format!(
        "probe begin {{ println(user_string2({TEXT}, \"e\"), \"|\", user_string2({HOLE}, \"e\")) \
         println(kernel_string2({HOLE}, \"k\")) \
         println(user_string_n2({TEXT}, 3, \"e\"), \"|\", user_string_n2({HOLE}, 3, \"e\")) \
         println(user_string_n2_quoted({TEXT}, 20, 12)) \
         printf(\"[%s]\\n\", user_string2_n_warn({HOLE}, 3, \"<x>\")) \
         printf(\"[%s]\\n\", user_string2_warn({TEXT}, \"w\")) \
         println(signal_str(9), \" \", daddr_to_string(0x0100007f)) \
         println(kernel_or_user_string_quoted({TEXT}), \" \", kernel_or_user_string_quoted(0)) \
         ansi_set_color2(31, 42) ansi_set_color3(31, 42, 1) println() }}"
    ));
    let w = "WARNING: user string copy fault -14 at 0x9000000 [man error::fault]\n";
    assert_eq!(
        out,
        format!(
            "a\tbcdefghij|e\nk\na\tb|e\n\"a\\tbcde\"...\n{w}[<x>]\n[a\tbcdefghij]\n\
             SIGKILL 127.0.0.1\n\"a\\tbcdefghij\" NULL\n\x1b[31;42m\x1b[31;42;1m\n"
        )
    );
}
