//! The tier-3 tapset functions (compiler/src/tapset/library.stp's tier-3
//! section): byte order (inet.stp), device numbers (dev.stp), address
//! formatting (ip.stp, nfs_proc.stp's AF_INET/AF_INET6), task_state
//! (task.stp), kernel_string_quoted (conversions.stp) and
//! user_string_warn (uconversions.stp), run on the C core in user space
//! with the memory and task given by the `HostEnv`. The expected values
//! are what the C macros of stap's tapset compute on x86-64
//! (`ntohl`, `MAJOR`/`MINOR`/`MKDEV` with MINORBITS 20, `new_decode_dev`,
//! `%pI4`, `%pI6`).
mod common;
use common::*;
use vm_spec::program::{Program, RelocKind, TargetSite};
use vm_testkit::HostEnv;

/// A NUL-terminated "a\tb\"c" here.
const QUOTE: u64 = 0x1000;
/// ::1 then 2001:db8::ff00:42:8329 (struct in6_addr, network order).
const IN6: u64 = 0x2000;
/// Nothing mapped here.
const HOLE: u64 = 0x900_0000;
/// The current task_struct: a 4-byte `__state` at +8 (0x402), an 8-byte
/// `state` at +16 (1).
const TASK: u64 = 0x10000;

fn env() -> HostEnv {
    let mut task = vec![0u8; 64];
    task[8..12].copy_from_slice(&0x402u32.to_le_bytes());
    task[12..16].copy_from_slice(&0xffff_ffffu32.to_le_bytes());
    task[16..24].copy_from_slice(&1u64.to_le_bytes());
    let mut in6 = vec![0u8; 32];
    in6[15] = 1;
    in6[16..32].copy_from_slice(&[
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0x42, 0x83, 0x29,
    ]);
    HostEnv {
        task: TASK,
        memory: vec![(QUOTE, b"a\tb\"c\0".to_vec()), (IN6, in6), (TASK, task)],
        ..HostEnv::default()
    }
}

/// Fills the @cast relocations as the loader would from BTF: `__state`
/// (an unsigned int at 8) exists when `new_state`, `state` (a long at
/// 16) always.
fn relocate(p: &mut Program, new_state: bool) {
    for tv in p.target_vars.clone() {
        assert_eq!(tv.site, TargetSite::Cast("task_struct".into()));
        let (exists, off, mask) = match tv.fields[0].as_str() {
            "__state" => (new_state, 8, 0xffff_ffff),
            "state" => (true, 16, -1),
            f => panic!("member {f}"),
        };
        for r in &tv.relocs {
            p.konsts[r.konst as usize] = match r.kind {
                RelocKind::Exists => i64::from(exists),
                RelocKind::Offset(1) => off,
                RelocKind::Deref(1) => 1,
                RelocKind::Mask => mask,
                _ => 0,
            };
        }
    }
}

/// Runs `src` (begin, end) in `env()`; the output and then one `ERROR:
/// <message>` line per failed handler.
fn run_with(src: &str, new_state: bool) -> String {
    let mut p = build(src).program;
    relocate(&mut p, new_state);
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
fn byte_order_swaps_16_32_and_64_bits() {
    // buildok/inet-embedded.stp's values.
    let out = run("probe begin { \
         printf(\"%x %x %x\\n\", ntohs(0xd00d), ntohl(0xdeadbeef), ntohll(0xfedcba9876543210)) \
         printf(\"%x %x %x\\n\", htons(0xabcd), htonl(0xff0000ff), htonll(0x0123456789abcdef)) \
         printf(\"%d %d %d\\n\", ntohs(0x12345678), ntohl(-1), htonll(1)) }");
    assert_eq!(
        out,
        "dd0 efbeadde 1032547698badcfe\n\
         cdab ff0000ff efcdab8967452301\n\
         30806 4294967295 72057594037927936\n"
    );
}

#[test]
fn device_numbers_use_the_kernel_encoding() {
    let out = run("probe begin { \
         printf(\"%d %d %d %d\\n\", MKDEV(8, 1), MAJOR(MKDEV(8, 1)), MINOR(MKDEV(8, 1)), \
         MKDEV(253, 0x12345)) \
         printf(\"%d %d %d\\n\", MAJOR(0x0fffffff), MINOR(0x0fffffff), MAJOR(-1)) \
         printf(\"%x %x %x\\n\", usrdev2kerndev(0x0801), usrdev2kerndev(0xfd00), \
         usrdev2kerndev(0x12345678)) \
         printf(\"%d %d %d %d\\n\", MAJOR(0), MINOR(0), MKDEV(0, 0), usrdev2kerndev(0)) }");
    // new_decode_dev(0x12345678): major 0x456, minor 0x78 | 0x12300.
    assert_eq!(
        out,
        "8388609 8 1 265364293\n\
         255 1048575 4294967295\n\
         800001 fd00000 45612378\n\
         0 0 0 0\n"
    );
}

#[test]
fn ipv4_addresses_print_as_the_kernel_holds_them() {
    let out = run("probe begin { \
         printf(\"%s %s %s\\n\", ip_ntop(0x0100007f), ip_ntop(htonl(0xc0a80001)), ip_ntop(0)) \
         printf(\"%s|%s|%d %d\\n\", format_ipaddr(0x0100007f, AF_INET()), format_ipaddr(0, 0), \
         AF_INET(), AF_INET6()) }");
    assert_eq!(
        out,
        "127.0.0.1 192.168.0.1 0.0.0.0\n127.0.0.1|*unknown address family*|2 10\n"
    );
}

#[test]
fn ipv6_addresses_are_read_from_kernel_memory() {
    let out = run(&format!(
        "probe begin {{ println(format_ipaddr({IN6}, 10)) \
         println(format_ipaddr({IN6} + 16, AF_INET6())) }}
         probe begin {{ println(format_ipaddr({HOLE}, 10)) }}"
    ));
    assert_eq!(
        out,
        "0000:0000:0000:0000:0000:0000:0000:0001\n\
         2001:0db8:0000:0000:0000:ff00:0042:8329\n\
         ERROR: kernel read fault at 0x9000000\n"
    );
}

#[test]
fn task_state_reads_state_or_the_older_member() {
    let src = "probe begin { println(task_state(task_current())) }";
    assert_eq!(run_with(src, true), "1026\n");
    assert_eq!(run_with(src, false), "1\n");
}

#[test]
fn kernel_string_quoted_escapes_and_gives_the_address_on_a_fault() {
    let out = run(&format!(
        "probe begin {{ println(kernel_string_quoted({QUOTE})) \
         println(kernel_string_quoted({HOLE})) println(kernel_string_quoted(0)) }}"
    ));
    assert_eq!(out, "\"a\\tb\\\"c\"\n0x9000000\n0x0\n");
}

#[test]
fn user_string_warn_warns_and_returns_empty_on_a_fault() {
    let out = run(&format!(
        "probe begin {{ printf(\"[%s]\\n\", user_string_warn({QUOTE})) \
         printf(\"[%s]\\n\", user_string_warn({HOLE})) \
         printf(\"[%s]\\n\", user_string_warn({HOLE}, \"<x>\")) }}"
    ));
    let w = "WARNING: user string copy fault -14 at 0x9000000 [man error::fault]\n";
    assert_eq!(out, format!("[a\tb\"c]\n{w}[]\n{w}[<x>]\n"));
}

#[test]
fn the_tier_3_functions_are_refused_nowhere_in_buildok_inet() {
    // buildok/inet-embedded.stp, verbatim.
    build(
        "probe begin {\n\tprint (ntohll(0xfedcba9876543210) + ntohl(0xdeadbeef) + ntohs(0xd00d) +\n\
         \t       htonll(0x0123456789abcdef) + htonl(0xff0000ff) + htons(0xabcd))\n}\n",
    );
}
