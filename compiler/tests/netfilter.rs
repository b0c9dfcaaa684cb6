//! Netfilter hooks (abi.h: netfilter hooks): `netfilter.hook(H).pf(P)`
//! in both orders with `.priority(N)`, by stap's names or by number, as
//! the descriptors the compiler writes; the aliases of the kernel tapset
//! (`netfilter.ipv4.*` ...) and their variables; `$verdict` lowered to the
//! VERDICT helpers, and the refusals: constants other than NF_DROP and
//! NF_ACCEPT, operators other than `=`, unknown context variables, names
//! and numbers stap does not take.
mod common;
use common::{build, first_semantic_error};
use vm_spec::abi;
use vm_spec::program::NfHook;

/// The hooks of the netfilter probes of `src`, and their handlers' context.
fn hooks(src: &str) -> Vec<(NfHook, u8)> {
    let c = build(src);
    c.program
        .probes
        .iter()
        .filter_map(|p| {
            p.netfilter
                .map(|h| (h, c.program.handlers[p.handler as usize].ctx))
        })
        .collect()
}

fn hook(pf: u32, hook: u32, priority: i32) -> (NfHook, u8) {
    (NfHook { pf, hook, priority }, abi::STP_CTX_NETFILTER as u8)
}

#[test]
fn hook_points_by_name_and_number() {
    assert_eq!(
        hooks(
            "probe netfilter.hook(\"NF_INET_PRE_ROUTING\").pf(\"NFPROTO_IPV4\").priority(\"-1\") { }
             probe netfilter.pf(\"NFPROTO_IPV6\").hook(\"NF_IP6_LOCAL_OUT\") { }
             probe netfilter.hook(\"NF_IP_FORWARD\").pf(\"NFPROTO_IPV4\").priority(\"NF_IP_PRI_FIRST\") { }
             probe netfilter.hook(2).pf(3).priority(-7) { }
             probe netfilter.hook(\"NF_BR_POST_ROUTING\").pf(\"NFPROTO_BRIDGE\") { }"
        ),
        [
            hook(2, 0, -1),
            hook(10, 3, 0),
            hook(2, 2, i32::MIN),
            hook(3, 2, -7),
            hook(7, 4, 0),
        ]
    );
    let p = build("probe netfilter.hook(\"NF_INET_LOCAL_IN\").pf(\"NFPROTO_IPV4\") { }").program;
    assert_eq!(u32::from(p.probes[0].kind), abi::STP_PROBE_NETFILTER);
    assert_eq!(p.probes[0].period_ns, 0);
}

#[test]
fn names_stap_does_not_take_are_refused() {
    for (src, want) in [
        (
            "netfilter.hook(\"NF_INET_LOCAL_IN\").pf(\"NFPROTO_INET\")",
            "unsupported netfilter protocol family \"NFPROTO_INET\"",
        ),
        (
            "netfilter.hook(\"NF_IP6_LOCAL_IN\").pf(\"NFPROTO_IPV4\")",
            "unsupported netfilter hook \"NF_IP6_LOCAL_IN\"",
        ),
        (
            "netfilter.hook(3).pf(\"NFPROTO_ARP\")",
            "unsupported netfilter hook \"3\"",
        ),
        (
            "netfilter.hook(\"NF_INET_LOCAL_IN\").pf(\"NFPROTO_IPV4\").priority(\"4294967296\")",
            "unsupported netfilter priority \"4294967296\"",
        ),
        (
            "netfilter.hook(\"NF_INET_LOCAL_IN\").pf(\"NFPROTO_IPV4\").priority(\"NF_IP6_PRI_RAW\")",
            "unsupported netfilter priority",
        ),
        ("netfilter.hook(\"NF_INET_LOCAL_IN\")", "probe point mismatch"),
    ] {
        let e = first_semantic_error(&format!("probe {src} {{ }}"));
        assert!(e.contains(want), "{src}: {e}");
    }
}

#[test]
fn verdict_is_read_and_set_through_its_helpers() {
    let p = build(
        "probe netfilter.ipv4.local_in { if (dport == 53) $verdict = nf_drop
         else if ($verdict == nf_accept) $verdict = 1 }",
    )
    .program;
    let h = &p.handlers[p.probes[0].handler as usize];
    let calls = |id: u32| {
        h.code
            .iter()
            .filter(|i| u32::from(i.op) == abi::STP_OP_CALLI && i.imm == id as i32)
            .count()
    };
    assert_eq!(calls(abi::STP_HLP_VERDICT_SET), 2);
    assert_eq!(calls(abi::STP_HLP_VERDICT), 1);
    // a probe's $skb chain reads ARG (slot relocated by the loader)
    let p = build("probe netfilter.ipv4.local_in { printf(\"%d\\n\", $skb->len) }").program;
    assert!(p
        .target_vars
        .iter()
        .any(|tv| tv.name == "skb" && tv.site == vm_spec::program::TargetSite::Netfilter));
}

#[test]
fn verdict_refusals() {
    let base = "probe netfilter.hook(\"NF_INET_LOCAL_IN\").pf(\"NFPROTO_IPV4\")";
    for (body, want) in [
        (
            "$verdict = 2",
            "netfilter verdict 2 (NF_STOLEN) is not allowed",
        ),
        (
            "$verdict = 3",
            "netfilter verdict 3 (NF_QUEUE) is not allowed",
        ),
        (
            "$verdict = 4",
            "netfilter verdict 4 (NF_REPEAT) is not allowed",
        ),
        ("$verdict = -1", "netfilter verdict -1 is not allowed"),
        (
            "$verdict += 1",
            "the netfilter verdict can only be assigned",
        ),
        ("$verdict++", "the netfilter verdict can only be assigned"),
        ("$skb = 0", "write to target variable not permitted"),
        (
            "printf(\"%d\", $state)",
            "unsupported context variable $state",
        ),
    ] {
        let e = first_semantic_error(&format!("{base} {{ {body} }}"));
        assert!(e.contains(want), "{body}: {e}");
    }
    let e = first_semantic_error(
        "probe kernel.function(\"vfs_read\"), \
         netfilter.hook(\"NF_INET_LOCAL_IN\").pf(\"NFPROTO_IPV4\") { $verdict = 0 }",
    );
    assert!(e.contains("$verdict is not available in this probe"), "{e}");
}

#[test]
fn alias_variables() {
    // each alias variable the script reads is assigned; the others elided
    let src = "probe netfilter.ipv4.local_in, netfilter.ipv6.post_routing {
        printf(\"%s %s %s %d %d %d %d %s %d\\n\", pf, saddr, daddr, sport, dport, protocol,
               length, indev_name, syn)
    }
    probe netfilter.arp.in { printf(\"%s %s %d\\n\", ar_sip, ar_tha, ar_op) }
    probe netfilter.bridge.local_in { printf(\"%s %d\\n\", br_mac, br_cost) }
    probe netfilter.ip.forward { printf(\"%d %d\\n\", nf_drop, nf_accept) }";
    let p = build(src).program;
    let nf: Vec<(u32, u32)> = p
        .probes
        .iter()
        .filter_map(|q| q.netfilter.map(|h| (h.pf, h.hook)))
        .collect();
    assert_eq!(nf, [(2, 1), (10, 4), (3, 0), (7, 1), (2, 2), (10, 2)]);
}
