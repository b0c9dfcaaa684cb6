//! `netfilter.hook(H).pf(P)[.priority(N)]` and
//! `netfilter.pf(P).hook(H)[.priority(N)]` probe points (stap's
//! tapset-netfilter.cxx): a hook of the kernel's netfilter, named as stap
//! names them (`"NF_INET_LOCAL_IN"`, `"NFPROTO_IPV4"`, `"NF_IP_PRI_FILTER"`)
//! or by number. They become `STP_PROBE_NETFILTER` points (abi.h: netfilter
//! hooks) whose handlers have context `STP_CTX_NETFILTER`: `$hooknum`,
//! `$skb`, `$in`, `$out`, `$okfn` are the hook's arguments (the loader
//! types them from BTF, userspace/src/targetvars.rs) and `$verdict` the
//! verdict (helpers.h VERDICT / VERDICT_SET, lowered in
//! `passes/lower/assign.rs`).
use super::*;
use vm_spec::program::NfHook;

/// The context variables of a netfilter probe that are the hook's
/// arguments, in the ARG slots the module gives them (kmod/netfilter.c).
pub const NF_ARGS: &[&str] = &["hooknum", "skb", "in", "out", "okfn"];

/// stap's protocol families, by name: the kernel's `NFPROTO_*` number
/// and the family's number of hooks.
const FAMILIES: &[(&str, u32, u32)] = &[
    (
        "NFPROTO_IPV4",
        abi::STP_NFPROTO_IPV4,
        abi::STP_NF_INET_NUMHOOKS,
    ),
    (
        "NFPROTO_IPV6",
        abi::STP_NFPROTO_IPV6,
        abi::STP_NF_INET_NUMHOOKS,
    ),
    (
        "NFPROTO_ARP",
        abi::STP_NFPROTO_ARP,
        abi::STP_NF_ARP_NUMHOOKS,
    ),
    (
        "NFPROTO_BRIDGE",
        abi::STP_NFPROTO_BRIDGE,
        abi::STP_NF_INET_NUMHOOKS,
    ),
];

/// The hooks' names of a family (by `NFPROTO_*` number), each list in
/// hook-number order: stap's spellings (`NF_IP_*` for IPv4, `NF_IP6_*`
/// for IPv6, `NF_ARP_*`, `NF_BR_*`), and the kernel's `NF_INET_*`, which
/// stap takes for IPv4 and stapvm also for IPv6 (the same numbers).
fn hook_names(pf: u32) -> &'static [&'static [&'static str]] {
    const INET: &[&str] = &[
        "NF_INET_PRE_ROUTING",
        "NF_INET_LOCAL_IN",
        "NF_INET_FORWARD",
        "NF_INET_LOCAL_OUT",
        "NF_INET_POST_ROUTING",
    ];
    const IP: &[&str] = &[
        "NF_IP_PRE_ROUTING",
        "NF_IP_LOCAL_IN",
        "NF_IP_FORWARD",
        "NF_IP_LOCAL_OUT",
        "NF_IP_POST_ROUTING",
    ];
    const IP6: &[&str] = &[
        "NF_IP6_PRE_ROUTING",
        "NF_IP6_LOCAL_IN",
        "NF_IP6_FORWARD",
        "NF_IP6_LOCAL_OUT",
        "NF_IP6_POST_ROUTING",
    ];
    const ARP: &[&str] = &["NF_ARP_IN", "NF_ARP_OUT", "NF_ARP_FORWARD"];
    const BR: &[&str] = &[
        "NF_BR_PRE_ROUTING",
        "NF_BR_LOCAL_IN",
        "NF_BR_FORWARD",
        "NF_BR_LOCAL_OUT",
        "NF_BR_POST_ROUTING",
    ];
    match pf {
        abi::STP_NFPROTO_IPV4 => &[INET, IP],
        abi::STP_NFPROTO_IPV6 => &[INET, IP6],
        abi::STP_NFPROTO_ARP => &[ARP],
        _ => &[BR],
    }
}

/// stap's named priorities (the same values for `NF_IP_PRI_*` and
/// `NF_IP6_PRI_*`; `CONNTRACK_CONFIRM` is IPv4's only).
const PRIORITIES: &[(&str, i32)] = &[
    ("FIRST", i32::MIN),
    ("CONNTRACK_DEFRAG", -400),
    ("RAW", -300),
    ("SELINUX_FIRST", -225),
    ("CONNTRACK", -200),
    ("MANGLE", -150),
    ("NAT_DST", -100),
    ("FILTER", 0),
    ("SECURITY", 50),
    ("NAT_SRC", 100),
    ("SELINUX_LAST", 225),
    ("CONNTRACK_CONFIRM", i32::MAX),
    ("LAST", i32::MAX),
];

/// A component's argument as stap's netfilter builder reads it: the
/// string, or a number's decimal text (stapvm takes numbers too).
fn arg_text(c: &Component) -> Option<String> {
    match &c.arg {
        Some(Literal::Str(s, _)) => std::str::from_utf8(s).ok().map(str::to_string),
        Some(Literal::Num(n, _)) => Some(n.to_string()),
        None => None,
    }
}

/// The protocol family named `s` (stap's name or its number).
fn family(s: &str) -> Option<(u32, u32)> {
    FAMILIES
        .iter()
        .find(|(n, num, _)| *n == s || s.parse::<u32>().ok() == Some(*num))
        .map(|&(_, num, hooks)| (num, hooks))
}

/// The hook named `s` of family `pf` (a name of the family, or a number
/// below its count of hooks).
fn hook(s: &str, pf: u32, nhooks: u32) -> Option<u32> {
    if let Ok(n) = s.parse::<u32>() {
        return (n < nhooks).then_some(n);
    }
    hook_names(pf)
        .iter()
        .find_map(|names| names.iter().position(|n| *n == s))
        .map(|i| i as u32)
}

/// The priority named `s`: an s32 (stap's rule without -g), or one of
/// stap's names for the family.
fn priority(s: &str, pf: u32) -> Option<i32> {
    if let Ok(n) = s.trim().parse::<i32>() {
        return Some(n);
    }
    let prefix = match pf {
        abi::STP_NFPROTO_IPV4 => "NF_IP_PRI_",
        abi::STP_NFPROTO_IPV6 => "NF_IP6_PRI_",
        _ => return None,
    };
    let rest = s.strip_prefix(prefix)?;
    if pf == abi::STP_NFPROTO_IPV6 && rest == "CONNTRACK_CONFIRM" {
        return None;
    }
    PRIORITIES.iter().find(|(n, _)| *n == rest).map(|&(_, v)| v)
}

impl Resolver<'_> {
    /// Resolves `netfilter.hook(H).pf(P)[.priority(N)]` (either order of
    /// `hook` and `pf`); `None` after reporting an error (none for a
    /// mismatch of an optional point).
    pub(super) fn netfilter_point(
        &mut self,
        mut p: Point,
        c: &[Component],
        optional: bool,
    ) -> Option<Point> {
        let mismatch = |r: &mut Self, at: &Component| {
            if !optional {
                r.mismatch(c, at);
            }
            None
        };
        if c[0].arg.is_some() {
            return mismatch(self, &c[0]);
        }
        let (hc, pc) = match (c.get(1), c.get(2)) {
            (Some(a), Some(b)) if a.name == "hook" && b.name == "pf" => (a, b),
            (Some(a), Some(b)) if a.name == "pf" && b.name == "hook" => (b, a),
            (Some(a), Some(b)) if a.name == "hook" || a.name == "pf" => return mismatch(self, b),
            (Some(a), _) => return mismatch(self, a),
            (None, _) => return mismatch(self, &c[0]),
        };
        let prc = match c.get(3) {
            Some(x) if x.name == "priority" && x.arg.is_some() => Some(x),
            Some(x) => return mismatch(self, x),
            None => None,
        };
        if let Some(x) = c.get(4) {
            return mismatch(self, x);
        }
        let (Some(hs), Some(ps)) = (arg_text(hc), arg_text(pc)) else {
            return mismatch(self, if hc.arg.is_none() { hc } else { pc });
        };
        let fail = |r: &mut Self, msg: String, span: Span| {
            r.err(Diagnostic::semantic(msg, span));
            None
        };
        // stap's messages (tapset-netfilter.cxx), less its "need stap -g":
        // stapvm has no guru mode, and a value outside these lists could
        // not be registered.
        let Some((pf, nhooks)) = family(&ps) else {
            return fail(
                self,
                format!("unsupported netfilter protocol family \"{ps}\""),
                pc.span,
            );
        };
        let Some(hook) = hook(&hs, pf, nhooks) else {
            return fail(
                self,
                format!("unsupported netfilter hook \"{hs}\" for protocol family \"{pf}\""),
                hc.span,
            );
        };
        let priority = match prc {
            None => 0,
            Some(x) => {
                let text = arg_text(x).unwrap_or_default();
                match priority(&text, pf) {
                    Some(n) => n,
                    None => {
                        return fail(
                            self,
                            format!(
                                "unsupported netfilter priority \"{text}\" for protocol family \"{pf}\""
                            ),
                            x.span,
                        )
                    }
                }
            }
        };
        p.set_kind(abi::STP_PROBE_NETFILTER);
        p.netfilter = Some(NfHook { pf, hook, priority });
        Some(p)
    }
}

/// The netfilter tapset's aliases (compiler/src/tapset/kernel/netfilter.stp)
/// with their variables, as `stap -L` lists them: each alias point and its
/// variables' names and types (`true`: a string), sorted by name. An alias
/// of other aliases (`netfilter.ip.*`) has the variables of its first one.
pub fn alias_points() -> Vec<(String, Vec<(String, bool)>)> {
    const TEXT: &str = include_str!("../../tapset/kernel/netfilter.stp");
    const STRINGS: &[&str] = &[
        "format_ipaddr",
        "__nf_dev_name",
        "__nf_dev_mac(",
        "__nf_data_",
        "__netdev_mac",
    ];
    let mut out: Vec<(String, Vec<(String, bool)>)> = Vec::new();
    let mut refs: Vec<(String, String)> = Vec::new();
    let mut cur: Option<usize> = None;
    for line in TEXT.lines() {
        if let Some(rest) = line.strip_prefix("probe ") {
            let (name, rhs) = rest.split_once(" =").unwrap_or((rest, ""));
            let name = name.trim().to_string();
            if let Some(first) = rhs.split(',').next().map(str::trim) {
                if first.starts_with("netfilter.") && !first.contains('(') {
                    refs.push((name.clone(), first.to_string()));
                }
            }
            out.push((name, Vec::new()));
            cur = Some(out.len() - 1);
            continue;
        }
        if line.starts_with('}') {
            cur = None;
            continue;
        }
        let (Some(i), Some((var, rhs))) = (cur, line.trim().split_once(" = ")) else {
            continue;
        };
        if !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let is_str = rhs.starts_with('"') || STRINGS.iter().any(|f| rhs.contains(f));
        if !out[i].1.iter().any(|(v, _)| v == var) {
            out[i].1.push((var.to_string(), is_str));
        }
    }
    for (name, first) in refs {
        let vars = out
            .iter()
            .find(|(n, _)| *n == first)
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        if let Some(e) = out.iter_mut().find(|(n, _)| *n == name) {
            e.1 = vars;
        }
    }
    for (_, vars) in &mut out {
        vars.sort();
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers() {
        assert_eq!(family("NFPROTO_IPV6"), Some((10, 5)));
        assert_eq!(family("3"), Some((3, 3)));
        assert_eq!(family("NFPROTO_INET"), None);
        assert_eq!(hook("NF_INET_LOCAL_IN", 2, 5), Some(1));
        assert_eq!(hook("NF_IP_POST_ROUTING", 2, 5), Some(4));
        assert_eq!(hook("NF_IP6_FORWARD", 10, 5), Some(2));
        assert_eq!(hook("NF_IP6_FORWARD", 2, 5), None);
        assert_eq!(hook("NF_ARP_FORWARD", 3, 3), Some(2));
        assert_eq!(hook("3", 3, 3), None);
        assert_eq!(priority("-1", 2), Some(-1));
        assert_eq!(priority("NF_IP_PRI_FIRST", 2), Some(i32::MIN));
        assert_eq!(priority("NF_IP6_PRI_CONNTRACK_CONFIRM", 10), None);
        assert_eq!(priority("4294967296", 2), None);
        assert_eq!(priority("NF_IP_PRI_FILTER", 3), None);
    }

    #[test]
    fn alias_points_have_stap_variables() {
        let pts = alias_points();
        assert_eq!(pts.len(), 5 + 5 + 5 + 3 + 5);
        let vars = |name: &str| {
            pts.iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let v4 = vars("netfilter.ipv4.local_in");
        for (v, s) in [
            ("saddr", true),
            ("daddr", true),
            ("sport", false),
            ("dport", false),
            ("protocol", false),
            ("length", false),
            ("syn", false),
            ("nf_drop", false),
            ("indev_name", true),
            ("pf", true),
            ("family", false),
        ] {
            assert!(v4.contains(&(v.to_string(), s)), "{v} in {v4:?}");
        }
        assert_eq!(vars("netfilter.ip.forward"), vars("netfilter.ipv4.forward"));
        assert!(vars("netfilter.arp.in").contains(&("ar_sip".to_string(), true)));
        assert!(vars("netfilter.bridge.local_in").contains(&("br_mac".to_string(), true)));
    }
}
