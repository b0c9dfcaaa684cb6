//! Associative arrays in the C core: the verifier's map rules (one
//! negative case per rule) and the VM's map instructions (insert,
//! overwrite, delete, in, overflow, wrap, foreach sorted by every column
//! and the value in both directions, limit, nested iterators, MOPR).
mod common;
use common::*;
use vm_spec::abi::*;
use vm_spec::core::verify_image;
use vm_spec::maps::Val;
use vm_spec::program::*;
use vm_spec::tables::imm_pack;
use vm_testkit::host::HostSession;
use vm_testkit::HostEnv;

/// A map of `keys` (true = string) and long or string values.
fn map(keys: &[bool], value: MapValue, capacity: u32, wrap: bool) -> MapDecl {
    MapDecl {
        name: "m".into(),
        keys: key_kinds(keys),
        value,
        capacity,
        sized: capacity != 2048,
        wrap,
        print_at_exit: false,
        stat: 0,
    }
}

fn prog(maps: Vec<MapDecl>, nregs: u8, nsregs: u8, code: Vec<Insn>) -> Program {
    let mut p = begin(nregs, nsregs, code);
    p.maps = maps;
    p.strings = vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()];
    p
}

/// The verifier's verdict.
fn verr(p: &Program) -> String {
    let img = build(p);
    match verify_image(&img) {
        Ok(_) => "OK".into(),
        Err(e) => format!("{} {}", e.name, e.message),
    }
}

fn mop(map: i32, op: stp_opcode) -> i32 {
    imm_pack(map as u16, op as u16)
}

#[test]
fn verifier_map_rules() {
    let li = || map(&[false], MapValue::Long, 16, false);
    // A valid long map access.
    let ok = prog(
        vec![li()],
        2,
        1,
        vec![i(STP_OP_LDI, 0, 0, 0, 1), i(STP_OP_MGET, 1, 0, 0, 0), RET],
    );
    assert_eq!(verr(&ok), "OK");
    // Map id out of range.
    let p = prog(
        vec![li()],
        2,
        1,
        vec![i(STP_OP_LDI, 0, 0, 0, 1), i(STP_OP_MGET, 1, 0, 0, 1), RET],
    );
    assert!(verr(&p).starts_with("BAD_INDEX"), "{}", verr(&p));
    // Key run: the map has one long key, r1 is not written.
    let p = prog(
        vec![li()],
        2,
        1,
        vec![i(STP_OP_LDI, 0, 0, 0, 1), i(STP_OP_MGET, 0, 1, 0, 0), RET],
    );
    assert!(verr(&p).starts_with("UNINIT_REGISTER"), "{}", verr(&p));
    // Key run past the register file.
    let p = prog(
        vec![li()],
        2,
        1,
        vec![i(STP_OP_LDI, 0, 0, 0, 1), i(STP_OP_MGET, 0, 2, 0, 0), RET],
    );
    assert!(verr(&p).starts_with("BAD_REGISTER"), "{}", verr(&p));
    // A string run on a map without string keys must be 0.
    let p = prog(
        vec![li()],
        2,
        2,
        vec![i(STP_OP_LDI, 0, 0, 0, 1), i(STP_OP_MGET, 1, 0, 1, 0), RET],
    );
    assert!(verr(&p).starts_with("BAD_OPERAND"), "{}", verr(&p));
    // Value kind: MGETS on a long map, MSET on a string map.
    let p = prog(
        vec![li()],
        2,
        1,
        vec![i(STP_OP_LDI, 0, 0, 0, 1), i(STP_OP_MGETS, 0, 0, 0, 0), RET],
    );
    assert!(verr(&p).starts_with("BAD_MAP"), "{}", verr(&p));
    let p = prog(
        vec![map(&[false], MapValue::Str, 16, false)],
        2,
        1,
        vec![i(STP_OP_LDI, 0, 0, 0, 1), i(STP_OP_MSET, 0, 0, 0, 0), RET],
    );
    assert!(verr(&p).starts_with("BAD_MAP"), "{}", verr(&p));
    // MOPR with an operation that is not arithmetic.
    let p = prog(
        vec![li()],
        2,
        1,
        vec![
            i(STP_OP_LDI, 0, 0, 0, 1),
            i(STP_OP_MOPR, 0, 0, 0, mop(0, STP_OP_EQ)),
            RET,
        ],
    );
    assert!(verr(&p).starts_with("BAD_MAP"), "{}", verr(&p));
    // MOPR reads its value register.
    let p = prog(
        vec![li()],
        2,
        1,
        vec![
            i(STP_OP_LDI, 0, 0, 0, 1),
            i(STP_OP_MOPR, 1, 0, 0, mop(0, STP_OP_ADD)),
            RET,
        ],
    );
    assert!(verr(&p).starts_with("UNINIT_REGISTER"), "{}", verr(&p));
    // MNEXT before MITER; an iterator past STP_MAX_ITERS; a bad order.
    let p = prog(vec![li()], 3, 1, vec![i(STP_OP_MNEXT, 0, 1, 0, 0), RET]);
    assert!(verr(&p).starts_with("UNINIT_REGISTER"), "{}", verr(&p));
    let p = prog(
        vec![li()],
        3,
        1,
        vec![
            i(STP_OP_LDI, 0, 0, 0, 1),
            i(STP_OP_MITER, 0, 0, 0, imm_pack(0, 8)),
            RET,
        ],
    );
    assert!(verr(&p).starts_with("BAD_MAP"), "{}", verr(&p));
    let p = prog(
        vec![li()],
        3,
        1,
        vec![i(STP_OP_LDI, 0, 0, 0, 1), i(STP_OP_MITER, 0, 0, 2, 0), RET],
    );
    assert!(verr(&p).starts_with("BAD_MAP"), "{}", verr(&p));
    // Descriptors: no keys, too many, a stray kind bit, no capacity, a
    // statistics value (not yet), too much memory.
    for (m, want) in [
        (map(&[], MapValue::Long, 16, false), "BAD_MAP"),
        (map(&[false; 10], MapValue::Long, 16, false), "BAD_MAP"),
        (map(&[false], MapValue::Long, 0, false), "BAD_MAP"),
        (
            map(&[true; 9], MapValue::Str, STP_MAX_MAP_ENTRIES, false),
            "TOO_MANY",
        ),
    ] {
        let p = prog(vec![m], 1, 1, vec![RET]);
        assert!(verr(&p).starts_with(want), "{}", verr(&p));
    }
    let mut img = build(&prog(vec![li()], 1, 1, vec![RET]));
    let (off, _) = section(&img, STP_SEC_MAPS);
    img[off + 1] = STP_MAPV_STAT as u8;
    vm_spec::image::seal(&mut img);
    assert!(verify_image(&img).unwrap_err().name == "BAD_MAP");
    let mut img = build(&prog(vec![li()], 1, 1, vec![RET]));
    put16(&mut img, off + 4, 2);
    vm_spec::image::seal(&mut img);
    assert!(verify_image(&img).unwrap_err().name == "BAD_MAP");
}

fn run(p: &Program) -> (HostSession, String, Option<String>) {
    let mut s = HostSession::from_program(p).expect("verifies");
    let r = s.run_handler(0, &HostEnv::default());
    let out = String::from_utf8_lossy(&s.output()).into_owned();
    (s, out, r.err().map(|e| e.message))
}

#[test]
fn insert_overwrite_delete_in_mopr() {
    let m = map(&[false, true], MapValue::Long, 4, false);
    // r0 = key, s0 = key, r1 = value, r2 = result
    let code = vec![
        i(STP_OP_LDI, 0, 0, 0, 7),
        i(STP_OP_SLDK, 0, 0, 0, 0),
        i(STP_OP_LDI, 1, 0, 0, 5),
        i(STP_OP_MSET, 1, 0, 0, 0),
        i(STP_OP_LDI, 1, 0, 0, 6),
        i(STP_OP_MSET, 1, 0, 0, 0), // overwrite: 6
        i(STP_OP_LDI, 1, 0, 0, 3),
        i(STP_OP_MOPR, 1, 0, 0, mop(0, STP_OP_MUL)), // 18
        i(STP_OP_MHAS, 2, 0, 0, 0),
        i(STP_OP_LDI, 0, 0, 0, 8),
        i(STP_OP_MGET, 3, 0, 0, 0), // absent: 0
        i(STP_OP_MHAS, 4, 0, 0, 0), // 0
        i(STP_OP_LDI, 0, 0, 0, 7),
        i(STP_OP_LDI, 5, 0, 0, 0),
        i(STP_OP_MOPR, 5, 0, 0, mop(0, STP_OP_DIV)), // division by 0
        RET,
    ];
    let (s, _, err) = run(&prog(vec![m.clone()], 6, 1, code));
    assert_eq!(err.as_deref(), Some("division by 0"));
    let e = s.map_entries(0, &m).unwrap();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].keys, vec![Val::Int(7), Val::Str(b"a".to_vec())]);
    assert_eq!(e[0].value, Val::Int(18));
    // Delete, clear.
    let code = vec![
        i(STP_OP_LDI, 0, 0, 0, 1),
        i(STP_OP_SLDK, 0, 0, 0, 1),
        i(STP_OP_MSET, 0, 0, 0, 0),
        i(STP_OP_LDI, 0, 0, 0, 2),
        i(STP_OP_MSET, 0, 0, 0, 0),
        i(STP_OP_MDEL, 0, 0, 0, 0),
        i(STP_OP_MHAS, 1, 0, 0, 0),
        RET,
    ];
    let (s, _, err) = run(&prog(vec![m.clone()], 2, 1, code));
    assert_eq!(err, None);
    assert_eq!(s.map_entries(0, &m).unwrap().len(), 1);
}

#[test]
fn overflow_and_wrap() {
    let code = |n: i32| {
        vec![
            i(STP_OP_LDI, 0, 0, 0, 0),
            i(STP_OP_MSET, 0, 0, 0, 0),
            i(STP_OP_ADDI, 0, 0, 0, 1),
            i(STP_OP_LDI, 1, 0, 0, n),
            i(STP_OP_LT, 2, 0, 1, 0),
            i(STP_OP_JZ, 2, 0, 0, 1),
            i(STP_OP_LOOP, 0, 0, 0, -6),
            RET,
        ]
    };
    let m = map(&[false], MapValue::Long, 3, false);
    let (_, _, err) = run(&prog(vec![m], 3, 1, code(4)));
    assert_eq!(err.as_deref(), Some("Array overflow, check size limit (3)"));
    let mut m = map(&[false], MapValue::Long, 3, false);
    m.sized = false;
    let (_, _, err) = run(&prog(vec![m], 3, 1, code(4)));
    assert_eq!(err.as_deref(), Some("Array overflow, check MAXMAPENTRIES"));
    let m = map(&[false], MapValue::Long, 3, true);
    let (s, _, err) = run(&prog(vec![m.clone()], 3, 1, code(10)));
    assert_eq!(err, None);
    let mut keys: Vec<Val> = s
        .map_entries(0, &m)
        .unwrap()
        .into_iter()
        .map(|e| e.keys[0].clone())
        .collect();
    keys.sort();
    assert_eq!(keys, vec![Val::Int(7), Val::Int(8), Val::Int(9)]);
}

/// Fills a (long, string) -> long map with 4 entries, then iterates it
/// with `sort` and `limit`, printing "key,key=value " per entry (nested:
/// an inner iterator over the first entry only each time).
fn iterate(sort: u8, limit: i32, nested: bool) -> String {
    let m = map(&[false, true], MapValue::Long, 16, false);
    let mut p = prog(vec![m], 8, 4, Vec::new());
    p.formats = vec![
        Format {
            text: "%d%s=%d ".into(),
            args: vec![ArgKind::Int, ArgKind::Str, ArgKind::Int],
        },
        Format {
            text: "<%d>".into(),
            args: vec![ArgKind::Int],
        },
    ];
    let mut c = Vec::new();
    for (k, s, v) in [(3, 2, 10), (1, 1, 30), (2, 0, 20), (4, 0, 20)] {
        c.push(i(STP_OP_LDI, 0, 0, 0, k));
        c.push(i(STP_OP_SLDK, 0, 0, 0, s));
        c.push(i(STP_OP_LDI, 1, 0, 0, v));
        c.push(i(STP_OP_MSET, 1, 0, 0, 0));
    }
    c.push(i(STP_OP_LDI, 2, 0, 0, limit));
    c.push(i(STP_OP_MITER, 0, 2, sort, 0));
    let top = c.len();
    c.push(i(STP_OP_MNEXT, 3, 4, 1, 0)); // r4 key, s1 key
    let jz = c.len();
    c.push(i(STP_OP_JZ, 3, 0, 0, 0));
    c.push(i(STP_OP_MGET, 5, 4, 1, 0));
    c.push(i(STP_OP_SMOV, 2, 1, 0, 0));
    c.push(i(STP_OP_MOV, 6, 4, 0, 0));
    c.push(i(STP_OP_PRINTF, 0, 5, 2, 0)); // r5 r6? no: runs r5.., s2..
    if nested {
        c.push(i(STP_OP_LDI, 7, 0, 0, 1));
        c.push(i(STP_OP_MITER, 0, 7, 0x8f, imm_pack(0, 1)));
        c.push(i(STP_OP_MNEXT, 7, 4, 3, imm_pack(0, 1)));
        c.push(i(STP_OP_PRINTF, 0, 4, 0, 1));
    }
    let back = top as i32 - (c.len() as i32 + 1);
    c.push(i(STP_OP_LOOP, 0, 0, 0, back));
    let end = c.len();
    c[jz].imm = (end - jz - 1) as i32;
    c.push(RET);
    p.handlers[0].code = c;
    p.handlers[0].locs = vec![SrcLoc::default(); p.handlers[0].code.len()];
    let (_, out, err) = run(&p);
    assert_eq!(err, None);
    out
}

#[test]
fn foreach_sorted_limited_nested() {
    // printf "%d%s=%d": r5 (value) printed as the key slot, s2 the string
    // key, r6 the long key: "<value><skey>=<lkey>".
    let all = i32::MAX;
    assert_eq!(iterate(0, all, false), "10c=3 30b=1 20a=2 20a=4 ");
    assert_eq!(iterate(15, all, false), "10c=3 20a=2 20a=4 30b=1 ");
    assert_eq!(iterate(15 | 0x80, all, false), "30b=1 20a=2 20a=4 10c=3 ");
    assert_eq!(iterate(1, all, false), "30b=1 20a=2 10c=3 20a=4 ");
    assert_eq!(iterate(1 | 0x80, 2, false), "20a=4 10c=3 ");
    assert_eq!(iterate(2, all, false), "20a=2 20a=4 30b=1 10c=3 ");
    assert_eq!(iterate(2 | 0x80, 1, false), "10c=3 ");
    assert_eq!(iterate(0, 0, false), "");
    assert_eq!(iterate(0, -5, false), "");
    assert_eq!(iterate(1, 2, true), "30b=1 <1>20a=2 <1>");
}
