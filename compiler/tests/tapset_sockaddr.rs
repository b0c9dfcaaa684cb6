//! The socket address variables of syscall.connect (`uaddr_af`,
//! `uaddr_ip`, `uaddr_ip_port`; stap's `_struct_sockaddr_u_*` in
//! aux_syscalls.stp) and the deprecated `string(num)`, run on the C core in
//! user space with the sockaddr in the `HostEnv`'s user memory.
mod common;
use common::*;
use vm_testkit::HostEnv;

/// The entry of `__x64_sys_connect(3, USER, len)` with `sa` at `USER`.
fn connect_env(sa: &[u8], len: i64) -> HostEnv {
    syscall_env(42, [3, USER as i64, len, 0, 0, 0], sa)
}

/// Fires handler 0 (the syscall.connect probe) of `src` in `env`, which
/// must not fail; the output.
fn run(src: &str, env: &HostEnv) -> String {
    let opts = RunOptions {
        env: env.clone(),
        fire: vec![0],
        ..Default::default()
    };
    run_begin_end(src, &opts).ok()
}

const SCRIPT: &str =
    "probe syscall.connect { printf(\"%s|%s|%s|%d\\n\", uaddr_af, uaddr_ip, uaddr_ip_port, addrlen) }";

#[test]
fn connect_decodes_an_inet_address() {
    // AF_INET, port 8080 (network order), 127.0.0.1, zero padding.
    let mut sa = vec![2, 0, 0x1f, 0x90, 127, 0, 0, 1];
    sa.extend([0u8; 8]);
    assert_eq!(
        run(SCRIPT, &connect_env(&sa, 16)),
        "AF_INET|127.0.0.1|8080|16\n"
    );
    // A high byte stays unsigned: 192.168.255.1 port 65535.
    let mut sa = vec![2, 0, 0xff, 0xff, 192, 168, 255, 1];
    sa.extend([0u8; 8]);
    assert_eq!(
        run(SCRIPT, &connect_env(&sa, 16)),
        "AF_INET|192.168.255.1|65535|16\n"
    );
}

#[test]
fn connect_decodes_inet6_and_names_other_families() {
    // AF_INET6 (10), port 443, flowinfo 0, ::1 as %pI6 prints it.
    let mut sa = vec![10, 0, 1, 0xbb, 0, 0, 0, 0];
    sa.extend([0u8; 15]);
    sa.push(1);
    sa.extend([0u8; 4]);
    assert_eq!(
        run(SCRIPT, &connect_env(&sa, 28)),
        "AF_INET6|0000:0000:0000:0000:0000:0000:0000:0001|443|28\n"
    );
    // AF_UNIX: the family only (the ip variables stay empty).
    let mut sa = vec![1, 0];
    sa.extend(b"/run/x.sock\0");
    assert_eq!(run(SCRIPT, &connect_env(&sa, 14)), "AF_UNIX|||14\n");
    // An AF_INET with the wrong length is unknown to stap too.
    let sa = [2u8, 0, 0, 80, 1, 2, 3, 4];
    assert_eq!(
        run(SCRIPT, &connect_env(&sa, 8)),
        "{unknown sockaddr with sa=2, salen=8}|||8\n"
    );
}

#[test]
fn connect_with_an_unreadable_address() {
    let mut env = connect_env(&[], 16);
    env.memory.truncate(1);
    assert_eq!(run(SCRIPT, &env), "{...}|||16\n");
    let mut regs = env.memory[0].1.clone();
    regs[104..112].copy_from_slice(&0i64.to_le_bytes());
    env.memory[0].1 = regs;
    assert_eq!(run(SCRIPT, &env), "NULL|||16\n");
}

#[test]
fn string_is_deprecated_but_formats_decimal() {
    let c = build("probe begin { println(string(42) . \",\" . string(-7)) }");
    assert_eq!(c.warnings.len(), 1, "one warning for all calls");
    assert!(
        c.warnings[0].starts_with("WARNING: function string() is deprecated"),
        "{}",
        c.warnings[0]
    );
    assert!(c.warnings[0].contains("x.stp:1:23"), "{}", c.warnings[0]);
    let r = run_program(&c.program, &Default::default()).expect("verifies");
    assert!(r.errors.is_empty());
    assert_eq!(r.output(), "42,-7\n");
}
