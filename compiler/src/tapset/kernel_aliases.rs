//! The kernel tapset aliases stap builds on DWARF (`vfs.*`, `netdev.*`,
//! `signal.send`, `kprocess.*`), rebuilt on what every BTF kernel has:
//! functions whose parameters BTF names, stable tracepoints (their
//! arguments named by `__bpf_trace_NAME`), `@cast` member chains and the
//! syscall tapset. Run before alias expansion: when a probe point of the
//! script starts with one of these families and the script defines no
//! alias of that family itself, the definitions are added as ordinary
//! `probe NAME = POINT { prologue }` aliases.
//!
//! Only the alias variables the script mentions are assigned (stap elides
//! the others), so a script reading `bytes_read` does not also pay for,
//! or depend on BTF having, `dev` or `ino`. Each variable's expression is
//! self-contained. Variables stap has and these do not (`devname`,
//! `si_code` ...) are plain unset locals; docs/tapset.md lists what each
//! alias defines.
use super::{names_in, Gen};
use crate::ast::*;

/// A list of alias variables as (name, expression).
type Vars = &'static [(&'static str, &'static str)];

/// One alias: its name, the point it expands to, and its variables (in
/// lists that aliases share).
struct Alias {
    name: &'static str,
    point: &'static str,
    vars: &'static [Vars],
}

/// What `vfs.read`/`vfs.write` and their `.return`s all define (a
/// `.return` reads `$param` as it was at entry).
const VFS_COMMON: &[(&str, &str)] = &[
    ("file", "$file"),
    ("pos", "$pos"),
    ("buf", "$buf"),
    (
        "dev",
        "@cast($file, \"file\", \"kernel\")->f_inode->i_sb->s_dev",
    ),
    ("ino", "@cast($file, \"file\", \"kernel\")->f_inode->i_ino"),
];

/// What the `.return`s add.
const VFS_RETURN: &[(&str, &str)] = &[
    ("ret", "$return"),
    ("retstr", "sprintf(\"%d\", $return)"),
    ("error", "$return < 0 ? $return : 0"),
    ("error_str", "$return < 0 ? errno_str(-$return) : \"\""),
];

/// `vfs.read` / `vfs.write` at entry.
macro_rules! vfs_entry {
    ($name:literal, $func:literal, $bytes:literal) => {
        Alias {
            name: $name,
            point: concat!("kernel.function(\"", $func, "\")"),
            vars: &[
                &[
                    ("name", concat!("\"", $name, "\"")),
                    ($bytes, "$count"),
                    ("argstr", "sprintf(\"%d, %d, %p\", $count, $pos, $buf)"),
                ],
                VFS_COMMON,
            ],
        }
    };
}

/// `vfs.read.return` / `vfs.write.return`.
macro_rules! vfs_return {
    ($name:literal, $func:literal, $bytes:literal, $done:literal) => {
        Alias {
            name: concat!($name, ".return"),
            point: concat!("kernel.function(\"", $func, "\").return"),
            vars: &[
                &[
                    ("name", concat!("\"", $name, "\"")),
                    ($bytes, "$count"),
                    ($done, "$return > 0 ? $return : 0"),
                ],
                VFS_COMMON,
                VFS_RETURN,
            ],
        }
    };
}

/// `netdev.transmit` / `netdev.receive`: the packet at the `net_dev_queue`
/// and `netif_receive_skb` tracepoints (stap probes the functions around
/// them, whose names and inlining change between kernels).
macro_rules! netdev {
    ($name:literal, $tp:literal) => {
        Alias {
            name: $name,
            point: concat!("kernel.trace(\"", $tp, "\")"),
            vars: &[&[
                ("name", concat!("\"", $name, "\"")),
                ("dev_name", "kernel_string($skb->dev->name)"),
                ("length", "$skb->len"),
                ("protocol", "$skb->protocol"),
                ("truesize", "$skb->truesize"),
            ]],
        }
    };
}

/// Every alias, by family (the first component of its name).
const ALIASES: &[(&str, &[Alias])] = &[
    (
        "vfs",
        &[
            vfs_entry!("vfs.read", "vfs_read", "bytes_to_read"),
            vfs_return!("vfs.read", "vfs_read", "bytes_to_read", "bytes_read"),
            vfs_entry!("vfs.write", "vfs_write", "bytes_to_write"),
            vfs_return!("vfs.write", "vfs_write", "bytes_to_write", "bytes_written"),
        ],
    ),
    (
        "netdev",
        &[
            netdev!("netdev.transmit", "net_dev_queue"),
            netdev!("netdev.receive", "netif_receive_skb"),
        ],
    ),
    (
        "signal",
        // The `signal_generate` tracepoint: every signal about to be
        // queued (or ignored), in the sender's context.
        &[Alias {
            name: "signal.send",
            point: "kernel.trace(\"signal_generate\")",
            vars: &[&[
                ("name", "\"signal.send\""),
                ("sig", "$sig"),
                ("sig_name", "_signal_name($sig)"),
                ("task", "$task"),
                ("sig_pid", "task_pid($task)"),
                ("pid_name", "task_execname($task)"),
                ("shared", "$group"),
            ]],
        }],
    ),
    (
        "kprocess",
        &[
            // `sched_process_fork`, in the parent, once the child exists.
            Alias {
                name: "kprocess.create",
                point: "kernel.trace(\"sched_process_fork\")",
                vars: &[&[
                    ("task", "$child"),
                    ("new_pid", "task_pid($child)"),
                    ("new_tid", "task_tid($child)"),
                ]],
            },
            // An exec attempt, in the old program: the syscalls (stap's
            // `filename` here is the path, unquoted).
            Alias {
                name: "kprocess.exec",
                point: "syscall.execve",
                vars: &[&[("filename", "user_string(pointer_arg(1), \"\")")]],
            },
            Alias {
                name: "kprocess.exec",
                point: "syscall.execveat",
                vars: &[&[("filename", "user_string(pointer_arg(2), \"\")")]],
            },
        ],
    ),
];

/// Adds the aliases of the families `s` probes and does not define.
pub(crate) fn add(s: &mut Script) {
    let mut used_families: Vec<&str> = Vec::new();
    let mut own_families: Vec<String> = Vec::new();
    for it in &s.items {
        let points: Vec<&ProbePoint> = match it {
            Item::Probe(p) => p.points.iter().collect(),
            Item::Alias(a) => {
                for n in &a.names {
                    if let Some(c) = n.components.first() {
                        own_families.push(c.name.clone());
                    }
                }
                a.points.iter().collect()
            }
            _ => continue,
        };
        for pp in points {
            let Some(first) = pp.components.first() else {
                continue;
            };
            for (family, _) in ALIASES {
                if crate::glob::fnmatch(first.name.as_bytes(), family.as_bytes())
                    && !used_families.contains(family)
                {
                    used_families.push(family);
                }
            }
        }
    }
    used_families.retain(|f| !own_families.iter().any(|o| o == f));
    if used_families.is_empty() {
        return;
    }
    // The variables the script mentions anywhere.
    let mut used: Vec<String> = Vec::new();
    for it in &mut s.items {
        let body = match it {
            Item::Probe(p) => &mut p.body,
            Item::Alias(a) => &mut a.body,
            _ => continue,
        };
        used.extend(names_in(body).0);
    }
    let mut text = String::new();
    for (family, aliases) in ALIASES {
        if !used_families.contains(family) {
            continue;
        }
        for a in *aliases {
            text.push_str(&format!("probe {} = {} {{\n", a.name, a.point));
            for (v, e) in a.vars.iter().copied().flatten() {
                if used.iter().any(|u| u == v) {
                    text.push_str(&format!("\t{v} = {e}\n"));
                }
            }
            text.push_str("}\n");
        }
    }
    let span = s
        .items
        .first()
        .map(item_span)
        .unwrap_or(Span { lo: 0, hi: 0 });
    let mut g = Gen {
        next: s.nexprs,
        errors: Vec::new(),
    };
    let items = g.items(&text, span);
    s.nexprs = g.next;
    s.items.extend(items);
}

fn item_span(it: &Item) -> Span {
    match it {
        Item::Probe(p) => p.span,
        Item::Alias(a) => a.span,
        _ => Span { lo: 0, hi: 0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_alias_text_parses() {
        for (_, aliases) in ALIASES {
            for a in *aliases {
                let mut text = format!("probe {} = {} {{\n", a.name, a.point);
                for (v, e) in a.vars.iter().copied().flatten() {
                    text.push_str(&format!("\t{v} = {e}\n"));
                }
                text.push_str("}\n");
                let tokens = crate::parse::lexer::lex(&text, &[]);
                let mut d = crate::diag::Diags::default();
                let script = crate::parse::parse(&tokens, &mut d);
                assert!(!d.has_errors(), "{text}: {:?}", d.list);
                assert!(
                    matches!(script.items.as_slice(), [Item::Alias(_)]),
                    "{text}"
                );
            }
        }
    }
}
