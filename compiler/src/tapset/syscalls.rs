//! The syscall tapset: `syscall.NAME[.return]` (and `nd_syscall.`, the
//! same here), wildcards (`syscall.*`, `syscall.open*`) and
//! `syscall_any[.return]`, with the variables stap's aliases define.
//!
//! Probe points (x86-64, kernels >= 4.17 whose system calls go through the
//! `__x64_sys_NAME(struct pt_regs *)` wrappers):
//! - `syscall.NAME` stays as it is (`resolve` makes it a kprobe on the
//!   first of `__x64_sys_NAME`, `__se_sys_NAME`, `sys_NAME`);
//! - `syscall.GLOB` becomes `kernel.function("__x64_sys_GLOB")`: a pattern
//!   the loader expands on the running kernel, so one `.stpb` works on any
//!   kernel;
//! - `syscall_any` / `syscall_any.return` become the `raw_syscalls`
//!   tracepoints `sys_enter(regs, id)` / `sys_exit(regs, ret)`.
//!
//! Variables (only those the body mentions are computed): `name`,
//! `argstr` and the arguments at entry; `name`, `retval`, `retstr` at
//! return; `syscall_nr` for `syscall_any`. Arguments are read from the
//! user registers the system call saved (`__sc_regs`: the wrapper's
//! argument, or the tracepoint's) through `kernel_long`; in a `.return`
//! probe `__sc_regs` is `@entry(...)` (see `entry`). A probe declaration
//! whose body uses them is split into one probe per syscall point, each
//! with its own prologue, as stap's alias expansion does. A wildcard's
//! `name` and `argstr` are computed at run time from the system call
//! number (`orig_ax`) by generated functions (`__sc_name`,
//! `__sc_argstr`), from the table in `syscall_table.rs`.
use super::syscall_table::SYSCALLS;
use super::syscall_vars::SYSCALL_VARS;
use super::{names_in, tree, Gen};
use crate::ast::*;
use crate::diag::Diags;

/// How an argument is read and printed in `argstr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// A C `int`: sign-extended from 32 bits, `%d`.
    Int,
    /// A 32-bit unsigned value, `%u`.
    UInt,
    /// A `long`, `%d`.
    Long,
    /// An `unsigned long` / `size_t`, `%u`.
    ULong,
    /// A user pointer, `%p`.
    Ptr,
    /// A user string (`const char __user *`): the variable holds it
    /// quoted (`user_string_quoted`), `"NULL"` for 0.
    UStr,
    /// A file mode, `%#o`.
    Mode,
}

/// One argument of a system call.
#[derive(Debug, Clone, Copy)]
pub struct Arg {
    /// The kernel's parameter name (see `RENAMES` for stap's).
    pub name: &'static str,
    /// How it is read and printed.
    pub kind: ArgKind,
}

/// One x86-64 system call.
#[derive(Debug, Clone, Copy)]
pub struct Syscall {
    /// Its number (`__NR_name`).
    pub nr: i64,
    /// Its name.
    pub name: &'static str,
    /// Its prototype is known (else `args` is empty and `argstr` too).
    pub known: bool,
    /// Its arguments, in register order.
    pub args: &'static [Arg],
}

/// Variable names stap's tapset uses where they differ from the kernel's
/// parameter names: (syscall, kernel name, stap name).
const RENAMES: &[(&str, &str, &str)] = &[
    ("read", "buf", "buf_uaddr"),
    ("write", "buf", "buf_uaddr"),
    ("pread64", "buf", "buf_uaddr"),
    ("pwrite64", "buf", "buf_uaddr"),
    ("futex", "uaddr", "futex_uaddr"),
    ("futex", "utime", "utime_uaddr"),
    ("futex", "uaddr2", "uaddr2_uaddr"),
    ("connect", "arg1", "sockfd"),
    ("connect", "arg2", "serv_addr_uaddr"),
    ("connect", "arg3", "addrlen"),
    ("bind", "arg1", "sockfd"),
    ("bind", "arg2", "my_addr_uaddr"),
    ("bind", "arg3", "addrlen"),
    ("accept", "arg1", "sockfd"),
    ("accept", "arg2", "addr_uaddr"),
    ("accept", "arg3", "addrlen_uaddr"),
    ("accept4", "arg1", "sockfd"),
    ("accept4", "arg2", "addr_uaddr"),
    ("accept4", "arg3", "addrlen_uaddr"),
    ("accept4", "arg4", "flags"),
    ("wait4", "stat_addr", "status_uaddr"),
    ("wait4", "ru", "rusage_uaddr"),
    ("nanosleep", "rqtp", "req_uaddr"),
    ("nanosleep", "rmtp", "rem_uaddr"),
    ("clock_nanosleep", "rqtp", "req_uaddr"),
    ("clock_nanosleep", "rmtp", "rem_uaddr"),
    ("openat", "dfd", "dfd"),
    ("pread64", "pos", "offset"),
    ("pwrite64", "pos", "offset"),
];

/// Alias variables computed from the argument registers by an expression
/// rather than read as one argument: (syscall, variable, expression), `$i`
/// in the expression standing for the raw register of argument `i`. One
/// named like an argument replaces it (stap's type for it differs from
/// the argument's kind: quotactl's `special` is the pointer, its string is
/// `special_str`; utime's `filename` is the string, `filename_uaddr` the
/// pointer). execve's `args` is stap's `__get_argv` (`["a", "b"]`, bounded)
/// and `env_str` its `__count_envp` (`[/* N vars */]`).
const EXTRA_VARS: &[(&str, &str, &str)] = &[
    ("execve", "args", "__get_argv($1, 0)"),
    ("execve", "env_str", "__count_envp($2)"),
    ("execveat", "args", "__get_argv($2, 0)"),
    ("execveat", "env_str", "__count_envp($3)"),
    ("quotactl", "special", "$1"),
    ("quotactl", "special_str", "user_string_quoted($1)"),
    ("utime", "filename", "user_string_quoted($0)"),
    ("utime", "filename_uaddr", "$0"),
    ("utimes", "filename", "user_string_quoted($0)"),
    ("utimes", "filename_uaddr", "$0"),
    ("getrandom", "buf", "user_string_quoted($0)"),
    ("mount", "data", "user_string_quoted($4)"),
    ("seccomp", "uargs", "user_string_quoted($2)"),
    ("renameat", "oldname", "$1"),
    ("renameat", "oldname_str", "user_string_quoted($1)"),
    ("renameat", "newname", "$3"),
    ("renameat", "newname_str", "user_string_quoted($3)"),
    ("renameat2", "oldname", "$1"),
    ("renameat2", "oldname_str", "user_string_quoted($1)"),
    ("renameat2", "newname", "$3"),
    ("renameat2", "newname_str", "user_string_quoted($3)"),
    ("symlinkat", "oldname", "$0"),
    ("symlinkat", "oldname_str", "user_string_quoted($0)"),
    ("symlinkat", "newname", "$2"),
    ("symlinkat", "newname_str", "user_string_quoted($2)"),
    ("unlinkat", "pathname", "$1"),
    ("unlinkat", "pathname_str", "user_string_quoted($1)"),
    ("sethostname", "hostname", "user_string_quoted($0)"),
    ("setdomainname", "domainname", "user_string_quoted($0)"),
    ("pipe", "pipe0", "$0 ? user_int($0) : 0"),
    ("pipe", "pipe1", "$0 ? user_int($0 + 4) : 0"),
    ("pipe2", "pipe0", "$0 ? user_int($0) : 0"),
    ("pipe2", "pipe1", "$0 ? user_int($0 + 4) : 0"),
];

/// Variables stap's `.return` aliases define beyond `name`, `retval` and
/// `retstr`: (syscall, variable, expression), `$i` standing for the raw
/// register of argument `i` as the system call's entry saved it (the
/// user registers outlive the call) and `__sc_retval` for the return
/// value; the last column is the value when the entry was missed (no
/// registers). pipe's `pipe0`/`pipe1` are the two descriptors the call wrote,
/// wait4's `status_str` the decoded status (sysc_pipe.stp,
/// sysc_wait4.stp, sysc_epoll_create.stp, sysc_signalfd.stp).
const RETURN_VARS: &[(&str, &str, &str, &str)] = &[
    ("pipe", "fildes_uaddr", "$0", "0"),
    ("pipe", "pipe0", "$0 ? user_int($0) : 0", "0"),
    ("pipe", "pipe1", "$0 ? user_int($0 + 4) : 0", "0"),
    ("pipe2", "fildes_uaddr", "$0", "0"),
    ("pipe2", "pipe0", "$0 ? user_int($0) : 0", "0"),
    ("pipe2", "pipe1", "$0 ? user_int($0 + 4) : 0", "0"),
    ("wait4", "status_uaddr", "$1", "0"),
    (
        "wait4",
        "status_str",
        "__sc_retval <= 0 ? \"N/A\" : $1 == 0 ? \"NULL\" : _wait_status_str(user_int($1))",
        "\"N/A\"",
    ),
    ("epoll_create", "flags", "0", "0"),
    (
        "epoll_create1",
        "flags",
        "((($0) & 0xffffffff) ^ 0x80000000) - 0x80000000",
        "0",
    ),
    ("signalfd", "flags", "0", "0"),
    (
        "signalfd4",
        "flags",
        "((($3) & 0xffffffff) ^ 0x80000000) - 0x80000000",
        "0",
    ),
];

/// The `RETURN_VARS` of `sc` that `used` names: (variable, expression read
/// through `regs`, value without registers).
fn return_vars(
    sc: &Syscall,
    regs: &str,
    used: &[String],
) -> Vec<(&'static str, String, &'static str)> {
    RETURN_VARS
        .iter()
        .filter(|(s, v, _, _)| *s == sc.name && used.iter().any(|u| u == v))
        .map(|(_, v, e, missed)| {
            let mut out = e.to_string();
            for i in (0..ARG_OFFSETS.len()).rev() {
                out = out.replace(&format!("${i}"), &raw(regs, i));
            }
            (*v, out, *missed)
        })
        .collect()
}

/// The `EXTRA_VARS` of `sc`: (variable, expression read through `regs`).
fn extra_vars(sc: &Syscall, regs: &str) -> Vec<(&'static str, String)> {
    EXTRA_VARS
        .iter()
        .filter(|(s, _, _)| *s == sc.name)
        .map(|(_, v, e)| {
            let mut out = e.to_string();
            // Highest first: `$1` is no prefix of a later `$1x` (at most 6).
            for i in (0..sc.args.len().min(ARG_OFFSETS.len())).rev() {
                out = out.replace(&format!("${i}"), &raw(regs, i));
            }
            (*v, out)
        })
        .collect()
}

/// Whether `v` is an `EXTRA_VARS` variable of `sc`.
fn is_extra(sc: &Syscall, v: &str) -> bool {
    EXTRA_VARS.iter().any(|(s, x, _)| *s == sc.name && *x == v)
}

/// The `SYSCALL_VARS` rows of `sc` (the table is sorted by syscall).
fn table_vars(sc: &Syscall) -> &'static [(&'static str, &'static str, &'static str)] {
    let lo = SYSCALL_VARS.partition_point(|r| r.0 < sc.name);
    let hi = SYSCALL_VARS.partition_point(|r| r.0 <= sc.name);
    &SYSCALL_VARS[lo..hi]
}

/// Whether `v` is a variable the argument table, `EXTRA_VARS` or the
/// sockaddr decoding already defines for `sc` (those win over
/// `SYSCALL_VARS`).
fn defined_elsewhere(sc: &Syscall, v: &str) -> bool {
    sc.args
        .iter()
        .any(|a| var_name(sc, a) == v || (a.name == "name" && v == "name_str"))
        || is_extra(sc, v)
        || (sockaddr_of(sc).is_some() && SOCKADDR_NAMES.contains(&v))
}

/// `used` and the variables the `SYSCALL_VARS` definitions of the used
/// ones read (a decoded `flags_str` reads `flags`), transitively: a
/// definition only reads earlier ones, so one backward pass suffices.
fn with_deps(sc: &Syscall, used: &[String]) -> Vec<String> {
    let mut out = used.to_vec();
    for (_, v, e) in table_vars(sc).iter().rev() {
        if defined_elsewhere(sc, v) || !out.iter().any(|u| u == v) {
            continue;
        }
        for w in e.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if !w.is_empty() && !out.iter().any(|u| u == w) {
                out.push(w.to_string());
            }
        }
    }
    out
}

/// The `*_arg(N)` functions of `SYSCALL_VARS` expressions and the kind
/// they read argument N as (64-bit: a `long long` is one register). A
/// name that another ends with comes after it (`ulonglong_arg`,
/// `longlong_arg`, `ulong_arg` before `long_arg`).
const TABLE_ARG_FUNCS: [(&str, ArgKind); 7] = [
    ("ulonglong_arg", ArgKind::ULong),
    ("longlong_arg", ArgKind::Long),
    ("uint_arg", ArgKind::UInt),
    ("ulong_arg", ArgKind::ULong),
    ("int_arg", ArgKind::Int),
    ("long_arg", ArgKind::Long),
    ("pointer_arg", ArgKind::Ptr),
];

/// A `SYSCALL_VARS` expression with its `*_arg(N)` calls read through
/// `regs`: one scan, each call matched by the first of `TABLE_ARG_FUNCS`
/// that fits where it starts (so `ulong_arg(1)` is not `u` and a
/// `long_arg(1)`).
fn table_expr(e: &str, regs: &str) -> String {
    let b = e.as_bytes();
    let mut out = String::with_capacity(e.len() + 64);
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        match arg_call_at(&b[i..]) {
            Some((len, arg, kind)) => {
                // `i` and `copied` are at ASCII bytes: char boundaries.
                out.push_str(e.get(copied..i).unwrap_or(""));
                out.push('(');
                out.push_str(&value(regs, arg, kind));
                out.push(')');
                i += len;
                copied = i;
            }
            None => i += 1,
        }
    }
    out.push_str(e.get(copied..).unwrap_or(""));
    out
}

/// The `*_arg(N)` call (N in 1..=6) at the start of `b`: its length, the
/// 0-based argument and the kind it reads.
fn arg_call_at(b: &[u8]) -> Option<(usize, usize, ArgKind)> {
    for (f, kind) in TABLE_ARG_FUNCS {
        let f = f.as_bytes();
        if !b.starts_with(f) {
            continue;
        }
        if let [b'(', d @ b'1'..=b'6', b')', ..] = b[f.len()..] {
            return Some((f.len() + 3, usize::from(d - b'1'), kind));
        }
    }
    None
}

/// Socket address variables (stap's `@_af_inet_info_u` in syscalls.stpm,
/// used by sysc_connect.stp and sysc_bind.stp): (syscall, argument index
/// of the user sockaddr, of its length). The family, for AF_INET /
/// AF_INET6 the address and port, and for AF_INET6 the flow information
/// (twice: stap's scope_id prints sin6_flowinfo too), decoded by the
/// library's `_struct_sockaddr_u_*` functions. stap has no `uaddr_ipv6`:
/// an IPv6 address is in `uaddr_ip`.
const SOCKADDR_VARS: &[(&str, usize, usize)] = &[("connect", 1, 2), ("bind", 1, 2)];

/// The variables `SOCKADDR_VARS` defines.
const SOCKADDR_NAMES: [&str; 5] = [
    "uaddr_af",
    "uaddr_ip",
    "uaddr_ip_port",
    "uaddr_ipv6_flowinfo",
    "uaddr_ipv6_scope_id",
];

/// Byte offsets in x86-64 `struct pt_regs` of the argument registers
/// (di, si, dx, r10, r8, r9) and of `orig_ax` (the syscall number).
const ARG_OFFSETS: [u32; 6] = [112, 104, 96, 56, 72, 64];
const ORIG_AX: u32 = 120;

/// The argument indexes (address, length) of the user sockaddr whose
/// decoding `sc` defines as variables.
fn sockaddr_of(sc: &Syscall) -> Option<(usize, usize)> {
    SOCKADDR_VARS
        .iter()
        .find(|(n, _, _)| *n == sc.name)
        .map(|(_, a, l)| (*a, *l))
}

/// stap's names of x86-64 system calls that the table (the UAPI) names
/// otherwise: (stap's name, table name, kernel function after `sys_`).
const STAP_NAMES: &[(&str, &str, &str)] = &[
    ("pread", "pread64", "pread64"),
    ("pwrite", "pwrite64", "pwrite64"),
    ("umount", "umount2", "umount"),
];

/// The system call named `name` (by the table or by stap).
pub fn lookup(name: &str) -> Option<&'static Syscall> {
    /// `SYSCALLS` by name, made on the first lookup (a compile looks up
    /// every system call of a detailed script several times).
    static BY_NAME: std::sync::OnceLock<rustc_hash::FxHashMap<&'static str, &'static Syscall>> =
        std::sync::OnceLock::new();
    let name = STAP_NAMES
        .iter()
        .find(|(s, _, _)| *s == name)
        .map_or(name, |(_, t, _)| t);
    let by_name = BY_NAME.get_or_init(|| {
        let mut m = rustc_hash::FxHashMap::default();
        // The first row of a name wins, as a linear search would find it.
        for sc in SYSCALLS.iter().rev() {
            m.insert(sc.name, sc);
        }
        m
    });
    by_name.get(name).copied()
}

/// stap's variable name for argument `a` of `sc`. A parameter called
/// `name` (sethostname, the xattr calls, mq_open, acct, ...) would hide
/// the alias's `name`: it is `name_uaddr`, as stap's xattr aliases call it.
pub fn var_name(sc: &Syscall, a: &Arg) -> &'static str {
    let n = RENAMES
        .iter()
        .find(|(s, k, _)| *s == sc.name && *k == a.name)
        .map_or(a.name, |r| r.2);
    if n == "name" {
        "name_uaddr"
    } else {
        n
    }
}

/// The raw 64-bit register of argument `i` (0-based), read through `regs`.
fn raw(regs: &str, i: usize) -> String {
    format!("kernel_long({regs} + {})", ARG_OFFSETS[i])
}

/// The value of argument `i` of kind `k`, read through `regs`.
fn value(regs: &str, i: usize, k: ArgKind) -> String {
    let r = raw(regs, i);
    match k {
        ArgKind::Int => format!("((({r}) & 0xffffffff) ^ 0x80000000) - 0x80000000"),
        ArgKind::UInt | ArgKind::Mode => format!("({r}) & 0xffffffff"),
        ArgKind::Long | ArgKind::ULong | ArgKind::Ptr => r,
        ArgKind::UStr => format!("__sc_ustr({r})"),
    }
}

fn conv(k: ArgKind) -> &'static str {
    match k {
        ArgKind::Int | ArgKind::Long => "%d",
        ArgKind::UInt | ArgKind::ULong => "%u",
        ArgKind::Ptr => "%p",
        ArgKind::UStr => "%s",
        ArgKind::Mode => "%#o",
    }
}

/// The stap expression of `argstr` for `sc`, reading through `regs`:
/// stap's layout for open/openat (symbolic flags, the mode only with
/// O_CREAT), else each argument with its kind's conversion, `, `-joined.
pub fn argstr_expr(sc: &Syscall, regs: &str) -> String {
    let v = |i: usize| value(regs, i, sc.args[i].kind);
    match (sc.name, sc.args.len()) {
        ("open", 3) => format!(
            "(({f}) & 64) ? sprintf(\"%s, %s, %#o\", {p}, __sc_open_flags({f}), {m}) \
             : sprintf(\"%s, %s\", {p}, __sc_open_flags({f}))",
            p = v(0),
            f = v(1),
            m = v(2)
        ),
        ("openat", 4) => format!(
            "(({f}) & 64) ? sprintf(\"%s, %s, %s, %#o\", __sc_dfd({d}), {p}, __sc_open_flags({f}), {m}) \
             : sprintf(\"%s, %s, %s\", __sc_dfd({d}), {p}, __sc_open_flags({f}))",
            d = v(0),
            p = v(1),
            f = v(2),
            m = v(3)
        ),
        // sysc_connect.stp / sysc_bind.stp: the address in stap's pretty
        // form, the length as stap's uint.
        ("connect", 3) | ("bind", 3) => format!(
            "sprintf(\"%d, %s, %u\", {fd}, _struct_sockaddr_u({a}, {l}), {u})",
            fd = v(0),
            a = v(1),
            l = v(2),
            u = value(regs, 2, ArgKind::UInt)
        ),
        // sysc_execve.stp: the argument vector and the environment's size.
        ("execve", 3) => format!(
            "sprintf(\"%s, %s, %s\", {p}, __get_argv({a}, 0), __count_envp({e}))",
            p = v(0),
            a = raw(regs, 1),
            e = raw(regs, 2)
        ),
        (_, 0) => "\"\"".to_string(),
        _ => {
            let fmt: Vec<&str> = sc.args.iter().map(|a| conv(a.kind)).collect();
            let vals: Vec<String> = (0..sc.args.len()).map(v).collect();
            format!("sprintf(\"{}\", {})", fmt.join(", "), vals.join(", "))
        }
    }
}

/// The numbers of `SYSCALLS`, in table order (sorted: the keys of the
/// binary searches on `nr`).
fn numbers() -> Vec<i64> {
    SYSCALLS.iter().map(|sc| sc.nr).collect()
}

/// The generated tapset function `name` (`__sc_name(nr)`, stap's
/// `syscall_name(nr)`, or `__sc_argstr(nr, regs)`), as declarations made by
/// `g` with `span`; `None` for another name. Their binary searches on the
/// number are built as AST (`tree`) into `{ }` placeholders of the text.
pub(crate) fn generated_function(name: &str, g: &mut Gen, span: Span) -> Option<Vec<Item>> {
    if !matches!(name, "__sc_name" | "syscall_name" | "__sc_argstr") {
        return None;
    }
    let n = SYSCALLS.len();
    let keys = numbers();
    Some(match name {
        "__sc_name" => {
            let text =
                "function __sc_name:string(nr:long) { { }\nreturn sprintf(\"syscall_%d\", nr) }\n";
            g.items_patched(text, span, &mut |items| {
                let Some(body) = tree::function_body(items) else {
                    return false;
                };
                body[0] = tree::search("nr", &keys, 0, n, true, &mut |i| {
                    tree::return_str(SYSCALLS[i].name)
                });
                true
            })
        }
        "syscall_name" => g.items(
            "function syscall_name:string(nr:long) { return __sc_name(nr) }\n",
            span,
        ),
        "__sc_argstr" => {
            // Many system calls print alike: the number picks a shape,
            // the shape the sprintf (less code, and less text to parse).
            let mut shapes: Vec<String> = Vec::new();
            let mut of = Vec::with_capacity(n);
            for sc in SYSCALLS {
                let e = argstr_expr(sc, "regs");
                let k = shapes.iter().position(|x| *x == e).unwrap_or_else(|| {
                    shapes.push(e);
                    shapes.len() - 1
                });
                of.push(k);
            }
            // The shapes' `return`s are parsed from text in a block that
            // the search on `shape` then replaces.
            let mut text = String::from(
                "function __sc_argstr:string(nr:long, regs:long) { shape = -1\n{ }\n{ ",
            );
            for e in &shapes {
                text.push_str(&format!("return {e}\n"));
            }
            text.push_str("}\nreturn \"\" }\n");
            let shape_keys: Vec<i64> = (0..shapes.len() as i64).collect();
            g.items_patched(&text, span, &mut |items| {
                let Some(body) = tree::function_body(items) else {
                    return false;
                };
                if body.len() < 3 {
                    return false;
                }
                body[1] = tree::search("nr", &keys, 0, n, true, &mut |i| {
                    let first = keys.iter().position(|&k| k == keys[i]).unwrap_or(0);
                    tree::set_num("shape", of[first] as i64)
                });
                let mut leaves = tree::take_block(&mut body[2]);
                if leaves.len() != shapes.len() {
                    return false;
                }
                body[2] = tree::search("shape", &shape_keys, 0, shapes.len(), true, &mut |k| {
                    std::mem::replace(
                        &mut leaves[k],
                        Stmt {
                            kind: StmtKind::Null,
                            span,
                        },
                    )
                });
                true
            })
        }
        _ => return None,
    })
}

/// What a syscall probe point names.
#[derive(Debug, Clone, PartialEq)]
enum Which {
    /// `syscall.NAME`.
    Lit(String),
    /// `syscall.GLOB`.
    Wild(String),
    /// `syscall_any`.
    Any,
}

/// A syscall probe point.
#[derive(Debug, Clone)]
struct SysPoint {
    which: Which,
    ret: bool,
}

fn classify(pp: &ProbePoint) -> Option<SysPoint> {
    let c = &pp.components;
    let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
    if c.iter().any(|x| x.arg.is_some()) {
        return None;
    }
    let (which, rest) = match names.as_slice() {
        ["syscall" | "nd_syscall", n, rest @ ..] => {
            let w = if n.contains(['*', '?', '[']) {
                Which::Wild(n.to_string())
            } else {
                Which::Lit(n.to_string())
            };
            (w, rest)
        }
        ["syscall_any" | "nd_syscall_any", rest @ ..] => (Which::Any, rest),
        _ => return None,
    };
    let ret = match rest {
        [] => false,
        ["return"] => true,
        _ => return None,
    };
    Some(SysPoint { which, ret })
}

/// The point the probe is armed on (see the module comment).
fn armed_point(pp: &ProbePoint, sp: &SysPoint) -> ProbePoint {
    let span = pp.span();
    let comp = |name: &str, arg: Option<&str>| Component {
        name: name.to_string(),
        arg: arg.map(|a| Literal::Str(a.as_bytes().to_vec(), span)),
        span,
    };
    let mut q = pp.clone();
    match &sp.which {
        Which::Lit(n) => {
            if let Some((_, _, f)) = STAP_NAMES.iter().find(|(s, _, _)| s == n) {
                if let Some(c) = q.components.get_mut(1) {
                    c.name = f.to_string();
                }
            }
        }
        Which::Wild(pat) => {
            q.components = vec![
                comp("kernel", None),
                comp("function", Some(&format!("__x64_sys_{pat}"))),
            ];
            if sp.ret {
                q.components.push(comp("return", None));
            }
        }
        Which::Any => {
            let tp = if sp.ret { "sys_exit" } else { "sys_enter" };
            q.components = vec![comp("kernel", None), comp("trace", Some(tp))];
        }
    }
    q
}

/// The context-dependent tapset functions of a probe body.
const ARG_FUNCS: &[&str] = &[
    "int_arg",
    "uint_arg",
    "long_arg",
    "ulong_arg",
    "pointer_arg",
    "s32_arg",
    "u32_arg",
    "s64_arg",
    "u64_arg",
    // 64-bit: a long long is one register.
    "longlong_arg",
    "ulonglong_arg",
];

/// Where the probe body being rewritten runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// A syscall probe: arguments through `__sc_regs` (`direct`: through
    /// the entry's own argument, inside `@entry`); `ret` in `.return`.
    Syscall {
        /// A `.return` probe.
        ret: bool,
        /// Read the registers' address from ARG 0 directly.
        direct: bool,
    },
    /// Function entry (kprobe, tracepoint): arguments are ARG slots.
    Entry,
    /// A non-syscall `.return` probe: `returnval()` is `retval()`.
    Return,
    /// A USDT marker (`process(...).mark(...)`): `$argN` and `$arg_count`
    /// are its arguments (the helper UARG).
    Mark,
    /// `process.syscall` (`.return`): `$syscall` is the call's number,
    /// `$arg1` .. `$arg6` its arguments (ARG slots), `$return` its result.
    ProcSyscall {
        /// `.syscall.return`.
        ret: bool,
    },
    /// Anything else (begin, timers, mixed points).
    Other,
}

/// The other calls `replacement` rewrites (besides `ARG_FUNCS`).
const CONTEXT_FUNCS: &[&str] = &["returnval", "returnstr", "probefunc", "ppfunc"];

/// What a rewritten body needs from the prologue.
#[derive(Default)]
struct Needs {
    regs: bool,
    retval: bool,
}

/// Replaces the context-dependent calls of `body` for `ctx`.
fn rewrite_calls(body: &mut Stmt, ctx: Ctx, g: &mut Gen, needs: &mut Needs) {
    let mut work: Vec<&mut Stmt> = vec![body];
    while let Some(x) = work.pop() {
        let (es, ss) = x.children_mut();
        for e in es {
            rewrite_expr(e, ctx, g, needs);
        }
        work.extend(ss);
    }
}

/// `rewrite_calls` on one expression. Inside `@entry(...)` of a `.return`
/// probe the calls are those of the function's entry.
fn rewrite_expr(root: &mut Expr, ctx: Ctx, g: &mut Gen, needs: &mut Needs) {
    let mut work: Vec<&mut Expr> = vec![root];
    while let Some(e) = work.pop() {
        if let ExprKind::AtOp { op, args } = &mut e.kind {
            let inner = match ctx {
                Ctx::Syscall { ret: true, .. } => Some(Ctx::Syscall {
                    ret: false,
                    direct: true,
                }),
                Ctx::Return => Some(Ctx::Entry),
                _ => None,
            };
            if let (true, Some(c)) = (op == "@entry", inner) {
                for a in args.iter_mut() {
                    rewrite_expr(a, c, g, needs);
                }
                continue;
            }
        }
        if let Some(kind) = replacement(e, ctx, g, needs) {
            e.kind = kind;
        }
        e.push_children_mut(&mut work);
    }
}

/// What a context-dependent call `e` becomes in `ctx`, if it is one.
fn replacement(e: &Expr, ctx: Ctx, g: &mut Gen, needs: &mut Needs) -> Option<ExprKind> {
    // A marker's $argN (1..12) and $arg_count: UARG's slots; $$name and
    // $$provider from its pp(); $$parms each argument the marker has.
    if let (ExprKind::Target(name), Ctx::Mark) = (&e.kind, ctx) {
        let listing = match name.as_str() {
            "$$name" => Some("__usdt_pp_field(pp(), \").mark(\\\"\")".to_string()),
            "$$provider" => Some("__usdt_pp_field(pp(), \").provider(\\\"\")".to_string()),
            "$$parms" | "$$vars" => Some(
                (1..=vm_spec::abi::STP_MAX_UARGS)
                    .map(|i| {
                        let sep = if i == 1 { "" } else { " " };
                        format!(
                            "(__usdt_arg(0) >= {i} ? sprintf(\"{sep}arg{i}=%#x\", __usdt_arg({i})) : \"\")"
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(" . "),
            ),
            _ => None,
        };
        if let Some(text) = listing {
            return Some(g.expr(&text, e.span).kind);
        }
        let n = match name.trim_start_matches('$') {
            "arg_count" => Some(0),
            v => v
                .strip_prefix("arg")
                .and_then(|d| d.parse::<u32>().ok())
                .filter(|d| (1..=vm_spec::abi::STP_MAX_UARGS).contains(d)),
        };
        return n.map(|n| g.expr(&format!("__usdt_arg({n})"), e.span).kind);
    }
    if let (ExprKind::Target(name), Ctx::ProcSyscall { ret }) = (&e.kind, ctx) {
        let text = match name.as_str() {
            "$syscall" => "register(\"orig_ax\")".to_string(),
            v => {
                let n = v
                    .strip_prefix("$arg")
                    .and_then(|d| d.parse::<u32>().ok())
                    .filter(|d| (1..=6).contains(d))?;
                if ret {
                    return Some(ExprKind::Unsupported(format!(
                        "{v} in process.syscall.return (the arguments are gone at the return)"
                    )));
                }
                format!("__stp_arg({})", n - 1)
            }
        };
        return Some(g.expr(&text, e.span).kind);
    }
    let ExprKind::Call { name, args } = &e.kind else {
        return None;
    };
    let span = e.span;
    let lit = match args.first().map(|a| &a.kind) {
        Some(ExprKind::Num(n)) => Some(*n),
        _ => None,
    };
    let nargs = args.len();
    let unsupported = |what: String| Some(ExprKind::Unsupported(what));
    if ARG_FUNCS.contains(&name.as_str()) && nargs == 1 {
        let Some(n) = lit.filter(|n| (1..=6).contains(n)) else {
            return unsupported(format!(
                "{name}() with an argument other than a constant 1 to 6"
            ));
        };
        let i = (n - 1) as usize;
        let src = match ctx {
            Ctx::Syscall { direct: true, .. } => raw("__stp_arg(0)", i),
            // At a return whose entry was not seen (armed while the call
            // ran, its entry probe skipped), `@entry` gave no registers:
            // 0, as the return variables read then, not a read at 0.
            Ctx::Syscall { ret: true, .. } => {
                needs.regs = true;
                format!("(__sc_regs ? {} : 0)", raw("__sc_regs", i))
            }
            Ctx::Syscall { .. } => {
                needs.regs = true;
                raw("__sc_regs", i)
            }
            Ctx::Entry | Ctx::ProcSyscall { ret: false } => format!("__stp_arg({i})"),
            _ => return unsupported(format!("{name}() outside a function entry probe")),
        };
        let text = match name.as_str() {
            "int_arg" | "s32_arg" => format!("((({src}) & 0xffffffff) ^ 0x80000000) - 0x80000000"),
            "uint_arg" | "u32_arg" => format!("({src}) & 0xffffffff"),
            _ => src,
        };
        return Some(g.expr(&text, span).kind);
    }
    if (name == "probefunc" || name == "ppfunc") && nargs == 0 {
        // stap takes the name from the probe point (pp()), so in a
        // .return probe it is the probed function; addr() there is the
        // caller's return address: use the address at entry.
        return match ctx {
            Ctx::Return | Ctx::Syscall { ret: true, .. } => {
                Some(g.expr("symname(@entry(addr()))", span).kind)
            }
            _ => None,
        };
    }
    if name == "returnval" && nargs == 0 || name == "returnstr" && nargs == 1 {
        let rv = match ctx {
            Ctx::Syscall { ret: true, .. } => {
                needs.retval = true;
                "__sc_retval"
            }
            Ctx::Return | Ctx::ProcSyscall { ret: true } => "retval()",
            // Elsewhere stap reads the return-value register all the same
            // (rax; an error where the probe has no registers).
            _ => "register(\"rax\")",
        };
        let text = if name == "returnval" {
            rv.to_string()
        } else {
            match lit {
                Some(f) => format!("return_str({f}, {rv})"),
                None => return unsupported("returnstr() with a non-constant format".into()),
            }
        };
        return Some(g.expr(&text, span).kind);
    }
    None
}

/// The context of a probe with these (non-syscall) points.
fn other_ctx(points: &[ProbePoint]) -> Ctx {
    let kind = |pp: &ProbePoint| {
        let n: Vec<&str> = pp.components.iter().map(|c| c.name.as_str()).collect();
        let func = n.contains(&"function");
        if n.first() == Some(&"process") && n.contains(&"mark") {
            Ctx::Mark
        } else if n.first() == Some(&"process") && n.get(1) == Some(&"syscall") {
            Ctx::ProcSyscall {
                ret: n.get(2) == Some(&"return"),
            }
        } else if func && n.contains(&"return") {
            Ctx::Return
        } else if func || n.starts_with(&["kernel", "trace"]) {
            Ctx::Entry
        } else {
            Ctx::Other
        }
    };
    let mut it = points.iter().map(kind);
    match it.next() {
        Some(first) if it.all(|k| k == first) => first,
        _ => Ctx::Other,
    }
}

/// The prologue of one syscall probe as text (`prologue_parts`, one
/// per line).
#[cfg(test)]
fn prologue(sp: &SysPoint, used: &[String], needs: &Needs) -> String {
    prologue_parts(sp, used, needs).join("\n")
}

/// The prologue of one syscall probe: assignments of the alias variables
/// in `used` (and the internal ones `needs` asks for), each a statement
/// (list) of its own: many recur from probe to probe, and `Gen::stmts_of`
/// parses each text once.
fn prologue_parts(sp: &SysPoint, used: &[String], needs: &Needs) -> Vec<String> {
    let sc = match &sp.which {
        Which::Lit(n) => lookup(n),
        _ => None,
    };
    let used = match sc {
        Some(sc) if !sp.ret => with_deps(sc, used),
        _ => used.to_vec(),
    };
    let uses = |n: &str| used.iter().any(|u| u == n);
    // The `SYSCALL_VARS` rows to compute, in table order.
    let table: Vec<(&str, &str)> = match sc {
        Some(sc) if !sp.ret => table_vars(sc)
            .iter()
            .filter(|(_, v, _)| uses(v) && !defined_elsewhere(sc, v))
            .map(|(_, v, e)| (*v, *e))
            .collect(),
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    let mut regs = needs.regs;
    let mut nr_needed = false;
    let mut retval = needs.retval;
    let wild = !matches!(sp.which, Which::Lit(_));
    if !sp.ret {
        if uses("name") && wild {
            nr_needed = true;
        }
        if uses("argstr") {
            regs = true;
            nr_needed |= wild;
        }
        if uses("syscall_nr") {
            nr_needed = true;
        }
        if let Some(sc) = sc {
            if sc
                .args
                .iter()
                .any(|a| uses(var_name(sc, a)) || (a.name == "name" && uses("name_str")))
            {
                regs = true;
            }
            if sockaddr_of(sc).is_some() && SOCKADDR_NAMES.iter().any(|v| uses(v)) {
                regs = true;
            }
            if EXTRA_VARS.iter().any(|(s, v, _)| *s == sc.name && uses(v)) || !table.is_empty() {
                regs = true;
            }
        }
    } else {
        if uses("retval") || uses("retstr") {
            retval = true;
        }
        if (uses("name") && wild) || uses("syscall_nr") {
            nr_needed = true;
            regs = true;
        }
        if let Some(sc) = sc {
            let rv = return_vars(sc, "__sc_regs", &used);
            regs |= !rv.is_empty();
            retval |= rv.iter().any(|(_, e, _)| e.contains("__sc_retval"));
        }
    }
    if nr_needed && !matches!(sp.which, Which::Any) {
        regs = true;
    }
    // The user registers of the system call.
    if regs {
        out.push(match (&sp.which, sp.ret) {
            (Which::Any, _) | (_, false) => "__sc_regs = __stp_arg(0)".to_string(),
            (_, true) => "__sc_regs = @entry(__stp_arg(0))".to_string(),
        });
    }
    // A .return whose entry was missed has no registers: number -1.
    let nr = match (&sp.which, sp.ret) {
        (Which::Any, false) => "__stp_arg(1)".to_string(),
        (_, true) => format!("__sc_regs ? kernel_long(__sc_regs + {ORIG_AX}) : -1"),
        _ => format!("kernel_long(__sc_regs + {ORIG_AX})"),
    };
    if nr_needed {
        out.push(format!("__sc_nr = {nr}"));
    }
    if uses("syscall_nr") {
        match sc {
            Some(sc) => out.push(format!("syscall_nr = {}", sc.nr)),
            None => out.push("syscall_nr = __sc_nr".to_string()),
        }
    }
    if uses("name") {
        match &sp.which {
            Which::Lit(n) => out.push(format!("name = \"{n}\"")),
            _ => out.push("name = __sc_name(__sc_nr)".to_string()),
        }
    }
    if !sp.ret {
        if let Some(sc) = sc {
            for (i, a) in sc.args.iter().enumerate() {
                let v = var_name(sc, a);
                if a.name == "name" {
                    // `name_uaddr` the address, `name_str` the string
                    // (stap's xattr aliases).
                    if uses(v) {
                        out.push(format!("{v} = {}", raw("__sc_regs", i)));
                    }
                    if uses("name_str") {
                        out.push(format!(
                            "name_str = user_string_quoted({})",
                            raw("__sc_regs", i)
                        ));
                    }
                } else if uses(v) && !is_extra(sc, v) {
                    out.push(format!("{v} = {}", value("__sc_regs", i, a.kind)));
                }
            }
            for (v, e) in extra_vars(sc, "__sc_regs") {
                if uses(v) {
                    out.push(format!("{v} = {e}"));
                }
            }
            for (v, e) in &table {
                out.push(format!("{v} = {}", table_expr(e, "__sc_regs")));
            }
        }
        if let Some((a, l)) = sc.and_then(sockaddr_of) {
            if SOCKADDR_NAMES.iter().any(|v| uses(v)) {
                let addr = raw("__sc_regs", a);
                let len = value("__sc_regs", l, ArgKind::Int);
                out.push(format!(
                    "uaddr_af = _struct_sockaddr_u_sa_family({addr}, {len})\n\
                     if (substr(uaddr_af, 0, 7) == \"AF_INET\") {{\n\
                     uaddr_ip = _struct_sockaddr_u_ip_addr({addr}, {len})\n\
                     uaddr_ip_port = _struct_sockaddr_u_tcp_port({addr}, {len})\n\
                     if (uaddr_af == \"AF_INET6\") {{\n\
                     uaddr_ipv6_flowinfo = _struct_sockaddr_u_ipv6_flowinfo({addr}, {len})\n\
                     uaddr_ipv6_scope_id = _struct_sockaddr_u_ipv6_scope_id({addr}, {len}) }} }}"
                ));
            }
        }
        if uses("argstr") {
            match (&sp.which, sc) {
                (Which::Lit(_), Some(sc)) => {
                    out.push(format!("argstr = {}", argstr_expr(sc, "__sc_regs")))
                }
                (Which::Lit(_), None) => out.push("argstr = \"\"".to_string()),
                _ => out.push("argstr = __sc_argstr(__sc_nr, __sc_regs)".to_string()),
            }
        }
    } else {
        if retval {
            out.push(match sp.which {
                Which::Any => "__sc_retval = __stp_arg(1)".to_string(),
                _ => "__sc_retval = retval()".to_string(),
            });
        }
        if uses("retval") {
            out.push("retval = __sc_retval".to_string());
        }
        if uses("retstr") {
            out.push("retstr = return_str(1, __sc_retval)".to_string());
        }
        if let Some(sc) = sc {
            // A return whose entry was missed has no registers: 0.
            for (v, e, missed) in return_vars(sc, "__sc_regs", &used) {
                out.push(format!("{v} = __sc_regs ? ({e}) : {missed}"));
            }
        }
    }
    out
}

/// Rewrites the syscall probes of `s` (see the module comment), and the
/// context-dependent tapset calls of every probe body.
pub(crate) fn rewrite(s: &mut Script, _args: &[String], g: &mut Gen, _diags: &mut Diags) {
    let items = std::mem::take(&mut s.items);
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        let Item::Probe(mut p) = it else {
            out.push(it);
            continue;
        };
        let sys: Vec<Option<SysPoint>> = p.points.iter().map(classify).collect();
        if sys.iter().all(Option::is_none) {
            let ctx = other_ctx(&p.points);
            rewrite_calls(&mut p.body, ctx, g, &mut Needs::default());
            out.push(Item::Probe(p));
            continue;
        }
        let (mut vars, calls) = names_in(&mut p.body);
        // Membership only below: each name once.
        vars.sort_unstable();
        vars.dedup();
        let alias_vars = ["name", "argstr", "retval", "retstr", "syscall_nr"];
        let mut needed = vars.iter().any(|v| alias_vars.contains(&v.as_str()))
            || calls
                .iter()
                .any(|c| ARG_FUNCS.contains(&c.as_str()) || CONTEXT_FUNCS.contains(&c.as_str()));
        for sp in sys.iter().flatten() {
            if let Which::Lit(n) = &sp.which {
                if let Some(sc) = lookup(n) {
                    needed |= sc.args.iter().any(|a| {
                        vars.iter()
                            .any(|v| v == var_name(sc, a) || (a.name == "name" && v == "name_str"))
                    });
                }
                needed |= EXTRA_VARS
                    .iter()
                    .map(|(s, v, _)| (s, v))
                    .chain(RETURN_VARS.iter().map(|(s, v, _, _)| (s, v)))
                    .any(|(s, v)| s == n && vars.iter().any(|x| x == v));
                needed |= lookup(n).is_some_and(|sc| {
                    table_vars(sc)
                        .iter()
                        .any(|(_, v, _)| vars.iter().any(|x| x == v))
                });
                needed |= lookup(n).and_then(sockaddr_of).is_some()
                    && vars.iter().any(|x| SOCKADDR_NAMES.contains(&x.as_str()));
            }
        }
        if !needed {
            // No alias variable: one probe, points mapped.
            for (pp, sp) in p.points.iter_mut().zip(&sys) {
                if let Some(sp) = sp {
                    *pp = armed_point(pp, sp);
                }
            }
            out.push(Item::Probe(p));
            continue;
        }
        let others: Vec<ProbePoint> = p
            .points
            .iter()
            .zip(&sys)
            .filter(|(_, sp)| sp.is_none())
            .map(|(pp, _)| pp.clone())
            .collect();
        if !others.is_empty() {
            let mut body = g.fresh_copy(&p.body);
            rewrite_calls(&mut body, other_ctx(&others), g, &mut Needs::default());
            out.push(Item::Probe(ProbeDecl {
                span: p.span,
                points: others,
                body,
            }));
        }
        for (pp, sp) in p.points.iter().zip(&sys) {
            let Some(sp) = sp else { continue };
            // A system call x86-64 does not have (compat_*, 32-bit
            // only ones): stap's alias resolves to no point at all.
            if matches!(&sp.which, Which::Lit(n) if lookup(n).is_none()) {
                continue;
            }
            let mut body = g.fresh_copy(&p.body);
            let mut needs = Needs::default();
            rewrite_calls(
                &mut body,
                Ctx::Syscall {
                    ret: sp.ret,
                    direct: false,
                },
                g,
                &mut needs,
            );
            let (mut used, _) = names_in(&mut body);
            used.sort_unstable();
            used.dedup();
            let span = pp.span();
            let parts = prologue_parts(sp, &used, &needs);
            let mut stmts = g.stmts_of(&parts, span);
            stmts.push(body);
            out.push(Item::Probe(ProbeDecl {
                span: p.span,
                points: vec![armed_point(pp, sp)],
                body: Stmt {
                    kind: StmtKind::Block(stmts),
                    span: p.body.span,
                },
            }));
        }
    }
    s.items = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(n: &str) -> SysPoint {
        SysPoint {
            which: Which::Lit(n.to_string()),
            ret: false,
        }
    }

    #[test]
    fn return_variables_read_the_registers_saved_at_entry() {
        let ret = |n: &str| SysPoint {
            which: Which::Lit(n.to_string()),
            ret: true,
        };
        let used = ["pipe0".to_string(), "pipe1".to_string()];
        let text = prologue(&ret("pipe"), &used, &Needs::default());
        assert!(text.contains("__sc_regs = @entry(__stp_arg(0))"), "{text}");
        // fildes is argument 1 (rdi, pt_regs offset 112).
        assert!(
            text.contains("pipe1 = __sc_regs ? (kernel_long(__sc_regs + 112) ? user_int(kernel_long(__sc_regs + 112) + 4) : 0) : 0"),
            "{text}"
        );
        let used = ["status_str".to_string()];
        let text = prologue(&ret("wait4"), &used, &Needs::default());
        assert!(text.contains("__sc_retval = retval()"), "{text}");
        assert!(text.contains("_wait_status_str(user_int("), "{text}");
        assert!(text.ends_with(": \"N/A\""), "{text}");
        // Not at entry, and not for a call that has none.
        let text = prologue(&point("wait4"), &used, &Needs::default());
        assert!(!text.contains("status_str"), "{text}");
        let text = prologue(&ret("read"), &used, &Needs::default());
        assert!(!text.contains("status_str"), "{text}");
    }

    #[test]
    fn decoded_variables_read_their_register_and_call_stap_decoders() {
        let used = vec!["flags_str".to_string()];
        // open's flags are argument 2 (rsi, pt_regs offset 104).
        let text = prologue(&point("open"), &used, &Needs::default());
        assert!(
            text.contains("flags = (((kernel_long(__sc_regs + 104)"),
            "{text}"
        );
        assert!(
            text.contains("flags_str = _sys_open_flag_str(flags)"),
            "{text}"
        );
        assert!(!text.contains("filename"), "{text}");
        // openat's dfd (rdi, 112) decoded by _dfd_str.
        let used = vec!["dfd_str".to_string()];
        let text = prologue(&point("openat"), &used, &Needs::default());
        assert!(
            text.contains("dfd = (((kernel_long(__sc_regs + 112)"),
            "{text}"
        );
        assert!(text.contains("dfd_str = _dfd_str(dfd)"), "{text}");
        // nanosleep's req_str from its pointer (rdi).
        let used = vec!["req_str".to_string()];
        let text = prologue(&point("nanosleep"), &used, &Needs::default());
        assert!(
            text.contains("req_uaddr = kernel_long(__sc_regs + 112)"),
            "{text}"
        );
        assert!(
            text.contains("req_str = _struct_timespec_u(req_uaddr, 1)"),
            "{text}"
        );
        // socket's protocol_str reads family and protocol (rdi, rdx).
        let used = vec!["protocol_str".to_string()];
        let text = prologue(&point("socket"), &used, &Needs::default());
        assert!(
            text.contains("_sock_protocol_str(family, protocol)"),
            "{text}"
        );
        assert!(text.contains("__sc_regs + 96"), "{text}");
        assert!(!text.contains("type ="), "{text}");
    }

    #[test]
    fn table_is_sorted_and_arg_functions_are_rewritten() {
        assert!(SYSCALL_VARS.windows(2).all(|w| w[0].0 <= w[1].0));
        assert_eq!(
            table_expr("f(ulonglong_arg(3), long_arg(3))", "r"),
            "f((kernel_long(r + 96)), (kernel_long(r + 96)))"
        );
        assert_eq!(
            table_expr("uint_arg(1)", "r"),
            "((kernel_long(r + 112)) & 0xffffffff)"
        );
    }
}
