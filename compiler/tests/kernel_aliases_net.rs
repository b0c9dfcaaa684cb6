//! The networking kernel tapset aliases (compiler/src/tapset/kernel/
//! netdev.stp, tcp.stp, mib.stp, socket.stp): the points each alias arms,
//! the variables computed, the files added for their functions alone, and
//! the table helpers' values on the C core in user space.
mod common;
use common::aliases::{points, vars};
use common::{run_begin_end, RunOptions};
use vm_spec::program::Program;

/// The program of `src`, or a panic with the rendered diagnostics.
fn build(src: &str) -> Program {
    common::build(src).program
}

/// The probe displays only.
fn displays(p: &Program) -> Vec<String> {
    points(p).into_iter().map(|x| x.0).collect()
}

/// The output of a begin-only script run on the C core.
fn output(src: &str) -> String {
    let r = run_begin_end(src, &RunOptions::default());
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    r.output()
}

#[test]
fn netdev_aliases_arm_the_dev_c_functions() {
    let p = build(
        "probe netdev.change_mtu, netdev.open, netdev.close, netdev.set_promiscuity, \
         netdev.ioctl, netdev.register, netdev.unregister, netdev.rx { print(1) }",
    );
    let syms: Vec<String> = points(&p).into_iter().map(|x| x.1).collect();
    assert_eq!(
        syms,
        [
            "dev_set_mtu_ext",
            "netif_set_mtu_ext",
            "dev_open",
            "dev_close",
            "dev_set_promiscuity",
            "dev_ioctl",
            "register_netdevice",
            "unregister_netdev",
            "netif_rx"
        ]
    );
    // Only what the script reads: new_mtu is $new_mtu, nothing of $dev.
    let p = build("probe netdev.change_mtu { print(new_mtu) }");
    assert_eq!(vars(&p), ["$new_mtu"]);
    let p = build("probe netdev.change_mtu { printf(\"%s %d\\n\", dev_name, old_mtu) }");
    let v = vars(&p);
    assert!(v.contains(&"$dev->mtu".to_string()), "{v:?}");
    assert!(v.contains(&"@cast(net_device)->name".to_string()), "{v:?}");
    // netdev.* covers every alias (the optional ones too; change_mtu has
    // two points, dev_set_mtu_ext and 7.x's netif_set_mtu_ext).
    let p = build("probe netdev.* { print(1) }");
    assert_eq!(p.probes.len(), 15, "{:?}", displays(&p));
}

#[test]
fn tcp_and_udp_aliases() {
    let p = build("probe tcp.setsockopt, tcp.receive { print(name) }");
    let syms: Vec<String> = points(&p).into_iter().map(|x| x.1).collect();
    assert_eq!(
        syms,
        [
            "tcp_setsockopt",
            "ipv6_setsockopt",
            "tcp_v4_rcv",
            "tcp_v6_rcv"
        ]
    );
    // recvmsg's size is $len alone; sport needs inet_sport.
    let p = build("probe tcp.recvmsg { print(size) }");
    assert_eq!(vars(&p), ["$len"]);
    let p = build("probe tcp.recvmsg.return { printf(\"%d %d\\n\", size, sport) }");
    let v = vars(&p);
    assert!(
        v.contains(&"@cast(inet_sock)->inet_sport".to_string()),
        "{v:?}"
    );
    assert!(v.contains(&"$sk".to_string()), "{v:?}");
    // udp.* and tcp.*.return.
    let p = build("probe udp.* { print(name) }");
    let syms: Vec<String> = points(&p).into_iter().map(|x| x.1).collect();
    assert_eq!(syms, ["udp_sendmsg", "udp_recvmsg", "udp_disconnect"]);
    let p = build("probe tcp.*.return { print(name) }");
    assert!(
        displays(&p)
            .iter()
            .all(|d| d.trim_end_matches('?').ends_with(".return")),
        "{:?}",
        displays(&p)
    );
}

#[test]
fn helpers_come_without_their_family() {
    // A kernel.function probe calling tcp.stp's functions gets them (and
    // the __ip_sock_* they call), not the tcp aliases.
    let p = build(
        "probe kernel.function(\"tcp_sendmsg\") { printf(\"%d %s %d\\n\", \
         inet_get_local_port($sk), inet_get_ip_source($sk), tcp_get_info_rto($sk)) }",
    );
    assert_eq!(p.probes.len(), 1);
    let v = vars(&p);
    assert!(
        v.contains(&"@cast(inet_connection_sock)->icsk_rto".to_string()),
        "{v:?}"
    );
    assert!(
        v.contains(&"@cast(sock)->__sk_common->skc_num".to_string()),
        "{v:?}"
    );
    // mib.stp calls tcp.stp's helpers: both files come.
    build("probe begin { print(ipmib_get_proto(0) + tcpmib_local_port(0)) }");
    // A script's own filter wins over the default (no duplicate).
    let p = build(
        "function tcpmib_filter_key:long(sk:long, op:long) { return 7 }\n\
         probe tcpmib.ActiveOpens { print(op) }",
    );
    assert_eq!(points(&p)[0].1, "tcp_connect");
}

#[test]
fn mib_aliases_count_into_their_globals() {
    let p = build("probe ipmib.OutRequests, tcpmib.OutRsts, linuxmib.DelayedACKs { }");
    let syms: Vec<String> = points(&p).into_iter().map(|x| x.1).collect();
    assert_eq!(
        syms,
        [
            "ip_output",
            "ip_mc_output",
            "tcp_v4_send_reset",
            "tcp_send_active_reset",
            "tcp_send_ack",
            "tcp_delack_timer_handler",
            // The .return, and its entry probe for @entry($sk).
            "tcp_delack_timer_handler",
            "tcp_delack_timer_handler"
        ]
    );
    let g: Vec<&str> = p.globals.iter().map(|g| g.name.as_str()).collect();
    for want in ["OutRequests", "OutRsts", "DelayedACKs"] {
        assert!(g.contains(&want), "{want} in {g:?}");
    }
    let p = build("probe ipmib.*, tcpmib.*, linuxmib.* { }");
    assert!(p.probes.len() >= 25, "{:?}", displays(&p));
}

#[test]
fn socket_aliases() {
    let p = build("probe socket.sendmsg, socket.create, socket.close { print(name) }");
    let syms: Vec<String> = points(&p).into_iter().map(|x| x.1).collect();
    assert_eq!(syms, ["sock_sendmsg", "__sock_create", "__sock_release"]);
    let p = build("probe socket.sendmsg { print(size) }");
    assert_eq!(vars(&p), ["$msg->msg_iter->count"]);
    // socket.send: the sendmsg and write_iter returns and the old ones.
    let p = build("probe socket.send { print(size) }");
    let d = displays(&p);
    assert!(
        d.contains(&"kernel.function(\"sock_sendmsg\").return".to_string())
            && d.contains(&"kernel.function(\"sock_write_iter\").return?".to_string()),
        "{d:?}"
    );
}

#[test]
fn table_helpers() {
    let out = output(
        "probe begin { printf(\"%s %s %s %s\\n\", tcp_sockstate_str(1), tcp_sockstate_str(10), \
         tcp_sockstate_str(13), tcp_sockstate_str(0))\n\
         printf(\"%s %s %s\\n\", tcp_sockopt_str(1), tcp_sockopt_str(13), tcp_sockopt_str(15))\n\
         printf(\"%s %s %s %s\\n\", tcp_ipv6_sockopt_str(26), tcp_ipv6_sockopt_str(42), \
         tcp_ipv6_sockopt_str(75), tcp_ipv6_sockopt_str(12)) }",
    );
    assert_eq!(
        out,
        "TCP_ESTABLISHED TCP_LISTEN UNDEF UNDEF\n\
         TCP_NODELAY TCP_CONGESTION UNDEF_SOCKOPT(15)\n\
         IPV6_V6ONLY MCAST_JOIN_GROUP IPV6_TRANSPARENT UNDEF_SOCKOPT(12)\n"
    );
    let out = output(
        "probe begin { printf(\"%s %s %s %d %d %d\\n\", sock_prot_num2str(6), \
         sock_prot_num2str(17), sock_prot_num2str(61), sock_prot_str2num(\"UDPLite\"), \
         sock_prot_str2num(\"TCP\"), sock_prot_str2num(\"nope\"))\n\
         printf(\"%s %s %d %d\\n\", sock_fam_num2str(10), sock_fam_num2str(21), \
         sock_fam_str2num(\"NETLINK\"), sock_fam_str2num(\"\"))\n\
         printf(\"%s %d %s %d %d\\n\", sock_state_num2str(3), sock_state_str2num(\"FREE\"), \
         sock_type_num2str(2), sock_type_str2num(\"PACKET\"), sock_type_str2num(\"x\"))\n\
         printf(\"[%s] [%s] [%s] [%s]\\n\", sock_flags_num2str(13), sock_flags_num2str(0), \
         msg_flags_num2str(0x41), msg_flags_num2str(0x8000)) }",
    );
    assert_eq!(
        out,
        "TCP UDP UNDEF 136 6 -1\n\
         INET6 UNDEF 16 -1\n\
         CONNECTED 0 DGRAM 10 -1\n\
         [ASYNC_NOSPACE|NOSPACE|PASSCRED] [] [OOB|DONTWAIT] [MORE]\n"
    );
    let out = output(
        "probe begin { printf(\"%d %d %d %d %d %d\\n\", _ehostunreach(), _enetunreach(), \
         _net_rx_drop(), _rtn_local(), _rtn_multicast(), ipmib_filter_key(0, 1, 0)) }",
    );
    assert_eq!(out, "113 101 1 2 5 0\n");
}
