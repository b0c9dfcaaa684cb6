//! The C core's PRETTY instruction (kmod/core/vm_pretty.c) in user space,
//! with hand-made type nodes (abi.h `struct stp_pretty_node`) over the
//! simulated kernel memory of `HostEnv`: stap's `$var$` / `$var$$` text
//! (tapsets.cxx, dwarf_pretty_print), the 32-value limit, faults as
//! "ERROR", a missing node as "?", the fuel it charges, and the verifier's
//! rules on the instruction.
mod common;
use common::*;
use vm_spec::abi::*;
use vm_spec::program::*;
use vm_testkit::host::{HostSession, RuntimeError};
use vm_testkit::HostEnv;

const BASE: u64 = 0xffff_8880_0000_1000;

fn node(name: u32, offset: u32, kind: u32, size: u8) -> PrettyNode {
    PrettyNode {
        name,
        offset,
        first: 0,
        count: 0,
        kind: kind as u8,
        size,
        bit_off: 0,
        bit_size: 0,
    }
}

fn parent(name: u32, offset: u32, kind: u32, first: u32, count: u16) -> PrettyNode {
    PrettyNode {
        first,
        count,
        ..node(name, offset, kind, 0)
    }
}

/// `printf("%s\n", PRETTY(v, node, imm))` in a begin probe, with `nodes`
/// and the member names `names` (string ids 0..).
fn prog(v: i64, node: i64, imm: i32, nodes: Vec<PrettyNode>, names: &[&str]) -> Program {
    let mut p = begin(
        2,
        1,
        vec![
            i(STP_OP_LDK, 0, 0, 0, 0),
            i(STP_OP_LDK, 1, 0, 0, 1),
            i(STP_OP_PRETTY, 0, 0, 1, imm),
            i(STP_OP_PRINTF, 0, 0, 0, 0),
            RET,
        ],
    );
    p.konsts = vec![v, node];
    p.formats = vec![Format {
        text: "%s\n".into(),
        args: vec![ArgKind::Str],
    }];
    p.strings = names.iter().map(|n| n.as_bytes().to_vec()).collect();
    p.pretty = nodes;
    p
}

fn run(p: &Program, env: &HostEnv) -> (String, Result<(), RuntimeError>) {
    let mut s = HostSession::from_program(p).expect("program verifies");
    let r = s.run_handler(0, env);
    (String::from_utf8_lossy(&s.output()).into_owned(), r)
}

const NAMES: &[&str] = &["a", "b", "c", "name", "inner", "arr", "comm", "x", "u", "p"];

/// struct S { int a; unsigned b:3; char c; char *name; struct { long x; }
/// inner; int arr[2]; char comm[8]; union { int u; }; void *p; } at BASE.
fn s_nodes() -> Vec<PrettyNode> {
    let mut b = node(1, 4, STP_PK_UNSIGNED, 4);
    b.bit_size = 3;
    vec![
        node(7, 0, STP_PK_SIGNED, 8),                           // 0 inner.x
        node(STP_PRETTY_NAME_NONE, 0, STP_PK_SIGNED, 4),        // 1 arr[0]
        node(8, 0, STP_PK_SIGNED, 4),                           // 2 u
        node(0, 0, STP_PK_SIGNED, 4),                           // 3 a
        b,                                                      // 4 b
        node(2, 8, STP_PK_CHAR, 1),                             // 5 c
        node(3, 16, STP_PK_STRING, 0),                          // 6 name
        parent(4, 24, STP_PK_STRUCT, 0, 1),                     // 7 inner
        parent(5, 32, STP_PK_ARRAY, 1, 0),                      // 8 arr
        node(6, 40, STP_PK_CHARS, 0),                           // 9 comm
        parent(STP_PRETTY_NAME_UNION, 48, STP_PK_STRUCT, 2, 1), // 10
        node(9, 56, STP_PK_POINTER, 0),                         // 11 p
        parent(STP_PRETTY_NAME_NONE, 0, STP_PK_STRUCT, 3, 9),   // 12 root
    ]
}

fn s_env() -> HostEnv {
    let mut m = vec![0u8; 0x200];
    m[0..4].copy_from_slice(&(-5i32).to_le_bytes());
    m[4] = 0xf8 | 5; // b = 5 under other bits
    m[8] = b'A';
    m[16..24].copy_from_slice(&(BASE + 0x100).to_le_bytes());
    m[24..32].copy_from_slice(&7i64.to_le_bytes());
    m[32..36].copy_from_slice(&1i32.to_le_bytes());
    m[36..40].copy_from_slice(&2i32.to_le_bytes());
    m[40..45].copy_from_slice(b"bash\0");
    m[48..52].copy_from_slice(&9i32.to_le_bytes());
    m[56..64].copy_from_slice(&0xffff_8880_0000_2000u64.to_le_bytes());
    m[0x100..0x104].copy_from_slice(b"h\"i\0");
    HostEnv {
        memory: vec![(BASE, m)],
        ..Default::default()
    }
}

#[test]
fn struct_one_level_and_deep() {
    let env = s_env();
    let (o, r) = run(&prog(BASE as i64, 12, 0, s_nodes(), NAMES), &env);
    r.unwrap();
    assert_eq!(
        o,
        "{.a=-5, .b=5, .c='A', .name=\"h\\\"i\", .inner={...}, .arr=[...], .comm=[...], \
         <union>={...}, .p=0xffff888000002000}\n"
    );
    let (o, r) = run(&prog(BASE as i64, 12, 1, s_nodes(), NAMES), &env);
    r.unwrap();
    assert_eq!(
        o,
        "{.a=-5, .b=5, .c='A', .name=\"h\\\"i\", .inner={.x=7}, .arr=[1, ...], \
         .comm=\"bash\", <union>={.u=9}, .p=0xffff888000002000}\n"
    );
}

#[test]
fn top_values_print_as_they_are() {
    let env = s_env();
    let one = |v: i64, n: PrettyNode| run(&prog(v, 0, 0, vec![n], NAMES), &env).0;
    assert_eq!(one(-3, node(0, 0, STP_PK_SIGNED, 4)), "-3\n");
    assert_eq!(
        one(-1, node(0, 0, STP_PK_UNSIGNED, 8)),
        "18446744073709551615\n"
    );
    assert_eq!(one(10, node(0, 0, STP_PK_CHAR, 1)), "'\\n'\n");
    assert_eq!(one(0x1234, node(0, 0, STP_PK_POINTER, 0)), "0x1234\n");
    assert_eq!(
        one(0x1234, node(0, 0, STP_PK_FUNC, 0)),
        "<function>:0x1234\n"
    );
    // char * and char[] at the top: the string at the value.
    assert_eq!(
        one((BASE + 40) as i64, node(0, 0, STP_PK_STRING, 0)),
        "\"bash\"\n"
    );
    assert_eq!(
        one((BASE + 40) as i64, node(0, 0, STP_PK_CHARS, 0)),
        "\"bash\"\n"
    );
    assert_eq!(one(1, node(0, 0, STP_PK_UNKNOWN, 0)), "?\n");
    // An array at the top: its first element, read at the value.
    let arr = vec![
        node(STP_PRETTY_NAME_NONE, 0, STP_PK_SIGNED, 4),
        parent(0, 0, STP_PK_ARRAY, 0, 0),
    ];
    let (o, r) = run(&prog((BASE + 32) as i64, 1, 0, arr, NAMES), &env);
    r.unwrap();
    assert_eq!(o, "[1, ...]\n");
}

#[test]
fn no_node_is_a_question_mark() {
    // The stand-in image: no PRETTY nodes at all, the constant left at 0.
    let (o, r) = run(&prog(BASE as i64, 0, 0, Vec::new(), &[]), &s_env());
    r.unwrap();
    assert_eq!(o, "?\n");
    let (o, _) = run(&prog(BASE as i64, -1, 1, s_nodes(), NAMES), &s_env());
    assert_eq!(o, "?\n");
}

#[test]
fn a_fault_anywhere_is_error() {
    // The struct itself unmapped, then a char * member to nowhere.
    let (o, r) = run(&prog(0x10, 12, 0, s_nodes(), NAMES), &s_env());
    r.unwrap();
    assert_eq!(o, "ERROR\n");
    let mut env = s_env();
    env.memory[0].1[16..24].copy_from_slice(&0u64.to_le_bytes());
    let (o, r) = run(&prog(BASE as i64, 12, 0, s_nodes(), NAMES), &env);
    r.unwrap();
    assert_eq!(o, "ERROR\n");
}

#[test]
fn thirty_two_values_then_dots() {
    // 40 int members: stap's sprintf stops at 32 arguments.
    let mut nodes: Vec<PrettyNode> = (0..40).map(|k| node(0, 4 * k, STP_PK_SIGNED, 4)).collect();
    nodes.push(parent(STP_PRETTY_NAME_NONE, 0, STP_PK_STRUCT, 0, 40));
    let (o, r) = run(&prog(BASE as i64, 40, 0, nodes, &["m"]), &s_env());
    r.unwrap();
    let o = o.trim_end();
    assert!(o.starts_with("{.m=-5, .m=253, .m=65, .m=0, "), "{o}");
    assert!(o.ends_with(", .m=0, ...}"), "{o}");
    assert_eq!(o.matches(".m=").count(), 32, "{o}");
}

#[test]
fn output_is_cut_at_maxstringlen() {
    let mut p = prog(BASE as i64, 12, 1, s_nodes(), NAMES);
    p.limits[STP_LIM_MAXSTRINGLEN as usize] = 32;
    let (o, r) = run(&p, &s_env());
    r.unwrap();
    // 31 bytes: MAXSTRINGLEN counts the NUL.
    assert_eq!(o, "{.a=-5, .b=5, .c='A', .name=\"h\\\n");
}

#[test]
fn each_node_costs_fuel() {
    // 13 nodes printed ($$: the root, 9 members, 3 nested values).
    let mut p = prog(BASE as i64, 12, 1, s_nodes(), NAMES);
    p.limits[STP_LIM_MAXACTION as usize] = 12;
    let (_, r) = run(&p, &s_env());
    assert_eq!(r.unwrap_err().code, STP_RTE_MAXACTION);
    p.limits[STP_LIM_MAXACTION as usize] = 13;
    let (o, r) = run(&p, &s_env());
    r.unwrap();
    assert!(o.starts_with("{.a=-5"), "{o}");
}

#[test]
fn the_verifier_guards_pretty() {
    use vm_spec::core::verify_image;
    let code = |p: &Program| verify_image(&build(p)).err().map(|e| e.code);
    assert_eq!(code(&prog(0, 12, 1, s_nodes(), NAMES)), None);
    // imm is 0 or 1.
    assert_eq!(
        code(&prog(0, 12, 2, s_nodes(), NAMES)),
        Some(STP_VERR_BAD_OPERAND)
    );
    // The two scratch string registers stay free.
    let mut p = prog(0, 12, 0, s_nodes(), NAMES);
    p.handlers[0].nsregs = (STP_MAX_SREGS - 1) as u8;
    assert_eq!(code(&p), Some(STP_VERR_BAD_REGISTER));
    // Nodes: children after the parent, a name past the strings, a size
    // of 3, a bitfield past its bytes, an unknown kind.
    let bad = |f: &dyn Fn(&mut Vec<PrettyNode>)| {
        let mut n = s_nodes();
        f(&mut n);
        code(&prog(0, 12, 0, n, NAMES))
    };
    assert_eq!(bad(&|n| n[7].first = 12), Some(STP_VERR_BAD_PRETTY));
    assert_eq!(bad(&|n| n[8].first = 8), Some(STP_VERR_BAD_PRETTY));
    assert_eq!(bad(&|n| n[3].name = 100), Some(STP_VERR_BAD_PRETTY));
    assert_eq!(bad(&|n| n[3].size = 3), Some(STP_VERR_BAD_PRETTY));
    assert_eq!(bad(&|n| n[4].bit_off = 30), Some(STP_VERR_BAD_PRETTY));
    assert_eq!(bad(&|n| n[5].bit_size = 1), Some(STP_VERR_BAD_PRETTY));
    assert_eq!(bad(&|n| n[3].kind = 99), Some(STP_VERR_BAD_PRETTY));
    assert_eq!(bad(&|n| n[12].count = 0), Some(STP_VERR_BAD_PRETTY));
    assert_eq!(bad(&|n| n[6].first = 1), Some(STP_VERR_BAD_PRETTY));
}
