//! stap's socket address variables beyond connect's IPv4 ones: bind has
//! them too (sysc_bind.stp's `@_af_inet_info_u`), and AF_INET6 gives
//! `uaddr_ipv6_flowinfo` / `uaddr_ipv6_scope_id` (aux_syscalls.stp's
//! SA_IPV6_FLOWINFO / SA_IPV6_SCOPE_ID, the latter printing sin6_flowinfo
//! as stap does). Run on the C core in user space with the sockaddr in the
//! `HostEnv`'s user memory.
mod common;
use common::*;
use vm_testkit::HostEnv;

/// The entry of `__x64_sys_NAME(3, USER, len)` (syscall number `nr`) with
/// `sa` at `USER`.
fn env(nr: i64, sa: &[u8], len: i64) -> HostEnv {
    syscall_env(nr, [3, USER as i64, len, 0, 0, 0], sa)
}

/// Checks `src` with the verifier and fires its handler 0 in `env`,
/// which must not fail; the output.
fn run(src: &str, env: &HostEnv) -> String {
    let opts = RunOptions {
        env: env.clone(),
        fire: vec![0],
        check: true,
        ..Default::default()
    };
    run_begin_end(src, &opts).ok()
}

/// A sockaddr_in6: port, flowinfo (the 4 bytes as in memory), address,
/// scope id.
fn sin6(port: u16, flow: [u8; 4], addr: [u8; 16], scope: u32) -> Vec<u8> {
    let mut sa = vec![10, 0];
    sa.extend(port.to_be_bytes());
    sa.extend(flow);
    sa.extend(addr);
    sa.extend(scope.to_le_bytes());
    sa
}

const ALL: &str = "printf(\"%s|%s|%s|%s|%s\\n\", uaddr_af, uaddr_ip, uaddr_ip_port, \
                   uaddr_ipv6_flowinfo, uaddr_ipv6_scope_id)";

#[test]
fn connect_has_the_ipv6_flowinfo_variables() {
    let src = format!("probe syscall.connect {{ {ALL} }}");
    // ::1 port 443, flowinfo bytes 00 00 00 00, scope id 7 (never shown).
    let mut lo = [0u8; 16];
    lo[15] = 1;
    assert_eq!(
        run(&src, &env(42, &sin6(443, [0; 4], lo, 7), 28)),
        "AF_INET6|0000:0000:0000:0000:0000:0000:0000:0001|443|0|0\n"
    );
    // fe80::1234:abcd port 8080; flowinfo bytes 12 34 56 78 are the
    // network-order 0x12345678 that stap prints as the host's int
    // (0x78563412), both variables; a high byte makes it negative.
    let addr = [
        0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0xab, 0xcd,
    ];
    assert_eq!(
        run(
            &src,
            &env(42, &sin6(8080, [0x12, 0x34, 0x56, 0x78], addr, 2), 28)
        ),
        "AF_INET6|fe80:0000:0000:0000:0000:0000:1234:abcd|8080|2018915346|2018915346\n"
    );
    assert_eq!(
        run(&src, &env(42, &sin6(1, [0, 0, 0, 0x80], addr, 0), 28)),
        "AF_INET6|fe80:0000:0000:0000:0000:0000:1234:abcd|1|-2147483648|-2147483648\n"
    );
    // AF_INET leaves them empty.
    let mut sa = vec![2, 0, 0, 80, 10, 0, 0, 1];
    sa.extend([0u8; 8]);
    assert_eq!(run(&src, &env(42, &sa, 16)), "AF_INET|10.0.0.1|80||\n");
}

#[test]
fn bind_has_the_socket_address_variables() {
    let src = format!(
        "probe syscall.bind {{ printf(\"%d %d \", sockfd, addrlen); {ALL}; \
         printf(\"%x\\n\", my_addr_uaddr) }}"
    );
    let mut sa = vec![2, 0, 0x1f, 0x90, 0, 0, 0, 0];
    sa.extend([0u8; 8]);
    assert_eq!(
        run(&src, &env(49, &sa, 16)),
        "3 16 AF_INET|0.0.0.0|8080||\n20000\n"
    );
    let any6 = sin6(53, [0; 4], [0; 16], 0);
    assert_eq!(
        run(&src, &env(49, &any6, 28)),
        "3 28 AF_INET6|0000:0000:0000:0000:0000:0000:0000:0000|53|0|0\n20000\n"
    );
    // An unreadable address.
    let mut e = env(49, &[], 16);
    e.memory.truncate(1);
    assert_eq!(run(&src, &e), "3 16 {...}||||\n20000\n");
}

#[test]
fn uaddr_ipv6_is_no_tapset_variable() {
    // stap's tapset has no `uaddr_ipv6` (the IPv6 address is uaddr_ip):
    // it is a plain local of the probe, as in stap.
    let out = run(
        "probe syscall.connect { uaddr_ipv6 = \"mine\"; println(uaddr_ipv6) }",
        &env(42, &[], 0),
    );
    assert_eq!(out, "mine\n");
}

#[test]
fn connect_and_bind_argstr_print_stap_pretty_sockaddr() {
    // sysc_connect.stp: sprintf("%d, %s, %u", sockfd,
    // _struct_sockaddr_u(serv_addr_uaddr, addrlen), addrlen).
    let src = "probe syscall.connect, syscall.bind { println(argstr) }";
    let mut sa = vec![2, 0, 0x1f, 0x90, 127, 0, 0, 1];
    sa.extend([0u8; 8]);
    assert_eq!(
        run(src, &env(42, &sa, 16)),
        "3, {AF_INET, 127.0.0.1, 8080}, 16\n"
    );
    let mut lo = [0u8; 16];
    lo[15] = 1;
    assert_eq!(
        run(src, &env(49, &sin6(443, [0; 4], lo, 0), 28)),
        "3, {AF_INET6, 0000:0000:0000:0000:0000:0000:0000:0001, 443}, 28\n"
    );
    // AF_UNIX: a path (cut at the length), an abstract name (its bytes
    // and the NUL past them, as _stp_text_str prints them).
    let mut un = vec![1, 0];
    un.extend(b"/run/x.sock\0");
    assert_eq!(
        run(src, &env(42, &un, 14)),
        "3, {AF_UNIX, \"/run/x.sock\"}, 14\n"
    );
    assert_eq!(run(src, &env(42, &un, 8)), "3, {AF_UNIX, \"/run/x\"}, 8\n");
    let mut ab = vec![1, 0, 0];
    ab.extend(b"a\"b\n\x01");
    assert_eq!(
        run(src, &env(42, &ab, 8)),
        "3, {AF_UNIX, \"\\000a\\\"b\\n\\001\\0\"}, 8\n"
    );
    // AF_NETLINK: pid, groups; AF_PACKET: its fields as stap's casts print
    // them (protocol in network order read as the host's u16).
    let mut nl = vec![16, 0, 0, 0];
    nl.extend(1234u32.to_le_bytes());
    nl.extend(0x11u32.to_le_bytes());
    assert_eq!(
        run(src, &env(49, &nl, 12)),
        "3, {AF_NETLINK, pid=1234, groups=00000011}, 12\n"
    );
    let mut pk = vec![17, 0, 0x08, 0x00];
    pk.extend(2i32.to_le_bytes());
    pk.extend([1, 0, 4, 6]);
    pk.extend([0xaa, 0xbb, 0xcc, 0, 0, 0, 0, 0]);
    assert_eq!(
        run(src, &env(49, &pk, 20)),
        "3, {AF_PACKET, proto=8, ind=2, hatype=1, pkttype=4, halen=6, addr=0xccbbaa}, 20\n"
    );
    // NULL, unreadable, unknown.
    let mut e = env(42, &[], 16);
    e.memory.truncate(1);
    assert_eq!(run(src, &e), "3, {...}, 16\n");
    assert_eq!(
        run(src, &env(42, &[9, 0, 1, 2], 4)),
        "3, {unknown sockaddr with sa=9, salen=4}, 4\n"
    );
}
