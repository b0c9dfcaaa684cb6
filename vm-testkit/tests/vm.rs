//! The C interpreter (vm.c) through `HostSession`: arithmetic, control
//! flow, fuel, strings, globals, printf records, exit and helpers.
mod common;
use common::*;
use vm_spec::abi::*;
use vm_spec::program::*;
use vm_spec::records::{OwnedArg, Record};
use vm_testkit::host::HostSession;
use vm_testkit::host::RuntimeError;
use vm_testkit::HostEnv;

/// Runs handler 0 of `p` once in a default environment.
fn run(p: &Program) -> (HostSession, Result<(), RuntimeError>) {
    run_env(p, &HostEnv::default())
}

fn run_env(p: &Program, env: &HostEnv) -> (HostSession, Result<(), RuntimeError>) {
    let mut s = HostSession::from_program(p).expect("program verifies");
    let r = s.run_handler(0, env);
    assert!(s.bad_records().is_empty());
    (s, r)
}

/// r[1] := x, r[2] := y (via konsts), r[0] := r[1] op r[2], global 0 := r[0].
fn binop(op: stp_opcode, x: i64, y: i64) -> Result<i64, RuntimeError> {
    let mut p = with_globals(
        begin(
            3,
            0,
            vec![
                i(STP_OP_LDK, 1, 0, 0, 0),
                i(STP_OP_LDK, 2, 0, 0, 1),
                i(op, 0, 1, 2, 0),
                i(STP_OP_STG, 0, 0, 0, 0),
                RET,
            ],
        ),
        1,
    );
    p.konsts = vec![x, y];
    let (s, r) = run(&p);
    r.map(|_| s.globals()[0])
}

#[test]
fn arithmetic_wraps_and_divides() {
    assert_eq!(binop(STP_OP_ADD, 2, 3), Ok(5));
    assert_eq!(binop(STP_OP_ADD, i64::MAX, 1), Ok(i64::MIN));
    assert_eq!(binop(STP_OP_SUB, i64::MIN, 1), Ok(i64::MAX));
    assert_eq!(binop(STP_OP_MUL, i64::MAX, 2), Ok(-2));
    assert_eq!(binop(STP_OP_DIV, -7, 2), Ok(-3));
    assert_eq!(binop(STP_OP_MOD, -7, 2), Ok(-1));
    assert_eq!(binop(STP_OP_DIV, i64::MIN, -1), Ok(i64::MIN));
    assert_eq!(binop(STP_OP_MOD, i64::MIN, -1), Ok(0));
    assert_eq!(binop(STP_OP_DIV, 7, -1), Ok(-7));
    assert_eq!(binop(STP_OP_AND, 0b1100, 0b1010), Ok(0b1000));
    assert_eq!(binop(STP_OP_OR, 0b1100, 0b1010), Ok(0b1110));
    assert_eq!(binop(STP_OP_XOR, 0b1100, 0b1010), Ok(0b0110));
    assert_eq!(binop(STP_OP_SHL, 1, 65), Ok(2));
    assert_eq!(binop(STP_OP_SHR, -16, 2), Ok(-4));
    assert_eq!(binop(STP_OP_SHR, -1, 63), Ok(-1));
    for op in [STP_OP_DIV, STP_OP_MOD] {
        let e = binop(op, 5, 0).unwrap_err();
        assert_eq!(e.name, "DIVZERO");
        assert_eq!(e.pc, 2);
        assert_eq!(e.message, "division by 0");
    }
}

#[test]
fn comparisons_are_signed() {
    let cases = [
        (STP_OP_EQ, 3, 3, 1),
        (STP_OP_EQ, 3, 4, 0),
        (STP_OP_NE, 3, 4, 1),
        (STP_OP_LT, -1, 1, 1),
        (STP_OP_LT, 1, -1, 0),
        (STP_OP_LE, 2, 2, 1),
        (STP_OP_GT, i64::MAX, i64::MIN, 1),
        (STP_OP_GE, i64::MIN, i64::MAX, 0),
        (STP_OP_GE, 5, 5, 1),
    ];
    for (op, x, y, want) in cases {
        assert_eq!(binop(op, x, y), Ok(want), "op {op} {x} {y}");
    }
}

#[test]
fn unary_and_immediates() {
    let p = with_globals(
        begin(
            2,
            0,
            vec![
                i(STP_OP_LDI, 0, 0, 0, -5),
                i(STP_OP_NEG, 1, 0, 0, 0),
                i(STP_OP_STG, 1, 0, 0, 0),
                i(STP_OP_NOT, 1, 0, 0, 0),
                i(STP_OP_STG, 1, 0, 0, 1),
                i(STP_OP_LNOT, 1, 0, 0, 0),
                i(STP_OP_STG, 1, 0, 0, 2),
                i(STP_OP_ADDI, 1, 0, 0, 7),
                i(STP_OP_STG, 1, 0, 0, 3),
                i(STP_OP_MOV, 1, 0, 0, 0),
                i(STP_OP_STG, 1, 0, 0, 4),
                RET,
            ],
        ),
        5,
    );
    let (s, r) = run(&p);
    r.unwrap();
    assert_eq!(s.globals(), vec![5, 4, 0, 2, -5]);
}

#[test]
fn jumps_and_loops() {
    // sum = 0; for (n = 10; n; n--) sum += n;  global0 := sum
    let p = with_globals(
        begin(
            2,
            0,
            vec![
                i(STP_OP_LDI, 0, 0, 0, 0),
                i(STP_OP_LDI, 1, 0, 0, 10),
                i(STP_OP_JZ, 1, 0, 0, 3), // pc 2: exit the loop
                i(STP_OP_ADD, 0, 0, 1, 0),
                i(STP_OP_ADDI, 1, 1, 0, -1),
                i(STP_OP_LOOP, 0, 0, 0, -4),
                i(STP_OP_STG, 0, 0, 0, 0),
                i(STP_OP_JNZ, 0, 0, 0, 1),
                i(STP_OP_STG, 1, 0, 0, 0), // skipped
                RET,
            ],
        ),
        1,
    );
    let (s, r) = run(&p);
    r.unwrap();
    assert_eq!(s.globals(), vec![55]);
}

#[test]
fn loop_without_end_runs_out_of_fuel() {
    let mut p = begin(
        0,
        0,
        vec![i(STP_OP_NOP, 0, 0, 0, 0), i(STP_OP_LOOP, 0, 0, 0, -2), RET],
    );
    p.limits[STP_LIM_MAXACTION as usize] = 500;
    let (s, r) = run(&p);
    let e = r.unwrap_err();
    assert_eq!(e.name, "MAXACTION");
    assert_eq!((e.handler, e.pc), (0, 1));
    assert_eq!(e.message, "MAXACTION exceeded");
    match s.records().as_slice() {
        [Record::Error {
            code, handler, pc, ..
        }] => {
            assert_eq!(u32::from(*code), STP_RTE_MAXACTION);
            assert_eq!((*handler, *pc), (0, 1));
        }
        other => panic!("records {other:?}"),
    }
}

fn str_prog(maxlen: u32, strings: &[&str], code: Vec<Insn>, nregs: u8) -> Program {
    let mut p = with_globals(begin(nregs, 4, code), 4);
    p.limits[STP_LIM_MAXSTRINGLEN as usize] = maxlen;
    p.strings = strings.iter().map(|s| s.as_bytes().to_vec()).collect();
    p.formats = vec![Format {
        text: "%s|%s|%s\n".into(),
        args: vec![ArgKind::Str; 3],
    }];
    p
}

fn printed_strings(s: &HostSession) -> Vec<Vec<u8>> {
    s.records()
        .into_iter()
        .flat_map(|r| match r {
            Record::Printf { args, .. } => args,
            _ => vec![],
        })
        .map(|a| match a {
            OwnedArg::Str(s) => s,
            OwnedArg::Int(v) => v.to_string().into_bytes(),
        })
        .collect()
}

#[test]
fn strings_concat_compare_and_truncate() {
    let p = str_prog(
        16,
        &["abcdefghij", "0123456789", "abd"],
        vec![
            i(STP_OP_SLDK, 0, 0, 0, 0),
            i(STP_OP_SLDK, 1, 0, 0, 1),
            i(STP_OP_SCAT, 2, 0, 1, 0), // cut at 15 (MAXSTRINGLEN 16 counts the NUL)
            i(STP_OP_SLEN, 0, 2, 0, 0),
            i(STP_OP_STG, 0, 0, 0, 0),
            i(STP_OP_SCMP, 0, 0, 1, 0), // "abc.." vs "012.." = 1
            i(STP_OP_STG, 0, 0, 0, 1),
            i(STP_OP_SLDK, 3, 0, 0, 2),
            i(STP_OP_SCMP, 0, 0, 3, 0), // "abcdefghij" vs "abd" = -1
            i(STP_OP_STG, 0, 0, 0, 2),
            i(STP_OP_SMOV, 1, 0, 0, 0),
            i(STP_OP_SCMP, 0, 0, 1, 0), // equal = 0
            i(STP_OP_STG, 0, 0, 0, 3),
            i(STP_OP_PRINTF, 0, 0, 0, 0),
            RET,
        ],
        1,
    );
    let (s, r) = run(&p);
    r.unwrap();
    assert_eq!(s.globals(), vec![15, 1, -1, 0]);
    assert_eq!(
        printed_strings(&s),
        vec![
            b"abcdefghij".to_vec(),
            b"abcdefghij".to_vec(),
            b"abcdefghij01234".to_vec()
        ]
    );
    assert_eq!(s.output(), b"abcdefghij|abcdefghij|abcdefghij01234\n");
}

#[test]
fn concat_into_an_operand_register() {
    let p = str_prog(
        16,
        &["abc", "xyz", "0123456789"],
        vec![
            i(STP_OP_SLDK, 0, 0, 0, 0),
            i(STP_OP_SLDK, 1, 0, 0, 1),
            i(STP_OP_SCAT, 1, 0, 1, 0), // s1 = "abc" . "xyz" (a == c)
            i(STP_OP_SCAT, 0, 0, 0, 0), // s0 = "abcabc" (a == b == c)
            i(STP_OP_SLDK, 2, 0, 0, 2),
            i(STP_OP_SCAT, 2, 2, 2, 0), // cut at 15
            i(STP_OP_PRINTF, 0, 0, 0, 0),
            RET,
        ],
        0,
    );
    let (s, r) = run(&p);
    r.unwrap();
    assert_eq!(
        printed_strings(&s),
        vec![
            b"abcabc".to_vec(),
            b"abcxyz".to_vec(),
            b"012345678901234".to_vec()
        ]
    );
}

/// MAXSTRINGLEN counts the NUL, as in stap: a constant of MAXSTRINGLEN - 1
/// bytes is accepted and kept whole, one of MAXSTRINGLEN bytes is refused,
/// and SPRINTF, SREPL and SCAT stop at MAXSTRINGLEN - 1 bytes.
#[test]
fn strings_hold_maxstringlen_minus_one_bytes() {
    let full = "abcdefghijklmno"; // 15 bytes
    let p = str_prog(
        16,
        &[full, "o", "xyz", "%s"],
        vec![
            i(STP_OP_SLDK, 0, 0, 0, 0),
            i(STP_OP_SLEN, 0, 0, 0, 0),
            i(STP_OP_STG, 0, 0, 0, 0),
            // SREPL s1 := replace(s0, "o", "xyz"): cut at 15.
            i(STP_OP_SLDK, 2, 0, 0, 1),
            i(STP_OP_SLDK, 3, 0, 0, 2),
            i(STP_OP_SREPL, 1, 0, 2, 0),
            i(STP_OP_SLEN, 0, 1, 0, 0),
            i(STP_OP_STG, 0, 0, 0, 1),
            // SCAT s2 := s0 . s0: cut at 15.
            i(STP_OP_SCAT, 2, 0, 0, 0),
            i(STP_OP_SLEN, 0, 2, 0, 0),
            i(STP_OP_STG, 0, 0, 0, 2),
            i(STP_OP_PRINTF, 0, 0, 0, 0),
            RET,
        ],
        1,
    );
    let (s, r) = run(&p);
    r.unwrap();
    assert_eq!(s.globals(), vec![15, 15, 15, 0]);
    assert_eq!(
        printed_strings(&s),
        vec![
            full.as_bytes().to_vec(),
            b"abcdefghijklmnx".to_vec(),
            full.as_bytes().to_vec()
        ]
    );
    // One byte more is refused by the verifier.
    let mut bad = p.clone();
    bad.strings[0].push(b'p');
    let err = HostSession::new(&build(&bad)).err().expect("refused");
    assert_eq!(err.code, STP_VERR_BAD_STRING, "{err:?}");
}

#[test]
fn globals_load_store_and_atomic_add() {
    let p = with_globals(
        begin(
            2,
            0,
            vec![
                i(STP_OP_LDG, 0, 0, 0, 0),
                i(STP_OP_ADDI, 0, 0, 0, 1),
                i(STP_OP_STG, 0, 0, 0, 0),
                i(STP_OP_LDI, 1, 0, 0, 10),
                i(STP_OP_GADD, 0, 1, 0, 1),
                i(STP_OP_STG, 0, 0, 0, 2),
                RET,
            ],
        ),
        3,
    );
    let mut s = HostSession::from_program(&p).unwrap();
    assert!(s.set_global(1, 5));
    for _ in 0..3 {
        s.run_handler(0, &HostEnv::default()).unwrap();
    }
    assert_eq!(s.globals(), vec![3, 35, 35]);
}

#[test]
fn printf_record_bytes() {
    let mut p = begin(
        2,
        1,
        vec![
            i(STP_OP_LDI, 0, 0, 0, -2),
            i(STP_OP_LDI, 1, 0, 0, 0x41),
            i(STP_OP_SLDK, 0, 0, 0, 0),
            i(STP_OP_PRINTF, 0, 0, 0, 0),
            RET,
        ],
    );
    p.strings = vec![b"hello".to_vec()];
    p.formats = vec![Format {
        text: "%d %s %c\n".into(),
        args: vec![ArgKind::Int, ArgKind::Str, ArgKind::Int],
    }];
    let (mut s, r) = run(&p);
    r.unwrap();
    assert_eq!(s.output(), b"-2 hello A\n");
    let bytes = s.ring_mut().bytes()[..48].to_vec();
    let mut want = Vec::new();
    want.extend_from_slice(&48u32.to_le_bytes());
    want.extend_from_slice(&(STP_REC_PRINTF as u16).to_le_bytes());
    want.extend_from_slice(&0u16.to_le_bytes());
    let time_ns = s.records()[0].time_ns();
    want.extend_from_slice(&time_ns.to_le_bytes());
    want.extend_from_slice(&(-2i64).to_le_bytes());
    want.extend_from_slice(&5u32.to_le_bytes());
    want.extend_from_slice(b"hello\0\0\0\0\0\0\0");
    want.extend_from_slice(&0x41i64.to_le_bytes());
    assert_eq!(bytes, want);
}

#[test]
fn exit_records_and_continues_the_handler() {
    let p = with_globals(
        begin(
            1,
            0,
            vec![
                i(STP_OP_EXIT, 0, 0, 0, 0),
                i(STP_OP_LDI, 0, 0, 0, 9),
                i(STP_OP_STG, 0, 0, 0, 0),
                RET,
            ],
        ),
        1,
    );
    let (s, r) = run(&p);
    r.unwrap();
    assert!(s.exit_requested());
    assert_eq!(s.globals(), vec![9]);
    assert!(matches!(s.records().as_slice(), [Record::Exit { .. }]));
}

fn helper_prog(ctx: stp_ctx, code: Vec<Insn>) -> Program {
    let mut p = program(vec![handler(ctx, 4, 2, code)]);
    p.formats = vec![
        Format {
            text: "%d\n".into(),
            args: vec![ArgKind::Int],
        },
        Format {
            text: "%s\n".into(),
            args: vec![ArgKind::Str],
        },
    ];
    p
}

fn call_i(h: stp_helper) -> Vec<Insn> {
    vec![
        i(STP_OP_CALLI, 0, 0, 0, h as i32),
        i(STP_OP_PRINTF, 0, 0, 0, 0),
    ]
}

#[test]
fn identity_helpers_read_the_environment() {
    let env = HostEnv {
        pid: 11,
        tid: 12,
        ppid: 13,
        uid: 14,
        euid: 15,
        gid: 16,
        cpu: 3,
        jiffies: 77,
        wall_ns: 1_700_000_000_000_000_000,
        execname: "bash".into(),
        ..Default::default()
    };
    let mut code = Vec::new();
    for h in [
        STP_HLP_PID,
        STP_HLP_TID,
        STP_HLP_PPID,
        STP_HLP_UID,
        STP_HLP_EUID,
        STP_HLP_GID,
        STP_HLP_CPU,
        STP_HLP_JIFFIES,
        STP_HLP_GETTIMEOFDAY_NS,
    ] {
        code.extend(call_i(h));
    }
    code.push(i(STP_OP_CALLS, 0, 0, 0, STP_HLP_EXECNAME as i32));
    code.push(i(STP_OP_PRINTF, 0, 0, 0, 1));
    code.push(i(STP_OP_CALLI, 0, 0, 0, STP_HLP_LOCAL_CLOCK_NS as i32));
    code.push(RET);
    let (s, r) = run_env(&helper_prog(STP_CTX_TIMER, code), &env);
    r.unwrap();
    assert_eq!(
        String::from_utf8(s.output()).unwrap(),
        "11\n12\n13\n14\n15\n16\n3\n77\n1700000000000000000\nbash\n"
    );
}

#[test]
fn probe_context_helpers() {
    let env = HostEnv {
        retval: -22,
        args: [1, 2, 3, 4, 5, 6],
        ..Default::default()
    };
    let (s, r) = run_env(
        &helper_prog(STP_CTX_KRETPROBE, {
            let mut c = call_i(STP_HLP_RETVAL);
            c.push(RET);
            c
        }),
        &env,
    );
    r.unwrap();
    assert_eq!(s.output(), b"-22\n");
    let code = vec![
        i(STP_OP_LDI, 1, 0, 0, 2),
        i(STP_OP_CALLI, 0, 1, 0, STP_HLP_ARG as i32),
        i(STP_OP_PRINTF, 0, 0, 0, 0),
        i(STP_OP_LDI, 1, 0, 0, 7),
        i(STP_OP_CALLI, 0, 1, 0, STP_HLP_ARG as i32),
        i(STP_OP_PRINTF, 0, 0, 0, 0),
        i(STP_OP_LDI, 1, 0, 0, -1),
        i(STP_OP_CALLI, 0, 1, 0, STP_HLP_ARG as i32),
        i(STP_OP_PRINTF, 0, 0, 0, 0),
        RET,
    ];
    let (s, r) = run_env(&helper_prog(STP_CTX_KPROBE, code), &env);
    r.unwrap();
    assert_eq!(s.output(), b"3\n0\n0\n");
}

fn mem_prog(h: stp_helper, addr: i64) -> Program {
    let res_str = matches!(h, STP_HLP_KERNEL_STRING | STP_HLP_USER_STRING);
    let mut p = helper_prog(
        STP_CTX_KPROBE,
        vec![
            i(STP_OP_LDK, 1, 0, 0, 0),
            i(
                if res_str { STP_OP_CALLS } else { STP_OP_CALLI },
                0,
                1,
                0,
                h as i32,
            ),
            i(STP_OP_PRINTF, 0, 0, 0, if res_str { 1 } else { 0 }),
            RET,
        ],
    );
    p.konsts = vec![addr];
    p
}

#[test]
fn memory_helpers_read_and_fault() {
    let base: u64 = 0xffff_8880_0000_1000;
    let mut page = vec![b'x'; 8192];
    page[..6].copy_from_slice(b"hello\0");
    let env = HostEnv {
        memory: vec![
            (base, page),
            (base + 0x3000 - 3, b"abc".to_vec()), // last bytes of a page
            (0x7000, 0x1122334455667788u64.to_le_bytes().to_vec()),
        ],
        ..Default::default()
    };
    let out = |h, addr: u64| {
        let (s, r) = run_env(&mem_prog(h, addr as i64), &env);
        (s.output(), r)
    };
    assert_eq!(
        out(STP_HLP_KERNEL_STRING, base),
        (b"hello\n".to_vec(), Ok(()))
    );
    assert_eq!(
        out(STP_HLP_USER_STRING, base + 2),
        (b"llo\n".to_vec(), Ok(()))
    );
    // No NUL in the first MAXSTRINGLEN - 1 (511) bytes: cut there, across
    // the page end.
    let (o, r) = out(STP_HLP_KERNEL_STRING, base + 4000);
    r.unwrap();
    assert_eq!(o.len(), 511 + 1);
    assert_eq!(
        out(STP_HLP_KERNEL_LONG, 0x7000),
        (b"1234605616436508552\n".to_vec(), Ok(()))
    );
    // Faults: unmapped address, and a string running into an unmapped page.
    let (o, r) = out(STP_HLP_USER_STRING, 0x10);
    assert!(o.is_empty());
    let e = r.unwrap_err();
    assert_eq!((e.name, e.addr, e.pc), ("USTRFAULT", 0x10, 1));
    assert_eq!(
        e.message,
        "user string copy fault -14 at 0x10 [man error::fault]"
    );
    let e = out(STP_HLP_KERNEL_STRING, base + 0x3000 - 3).1.unwrap_err();
    assert_eq!((e.name, e.addr), ("KSTRFAULT", base + 0x3000));
    let e = out(STP_HLP_KERNEL_LONG, 0xdead0000).1.unwrap_err();
    assert_eq!((e.name, e.addr), ("KFAULT", 0xdead0000));
    assert_eq!(e.message, "kernel read fault at 0xdead0000");
    // The error is also a record.
    let (s, _) = run_env(&mem_prog(STP_HLP_KERNEL_LONG, 0xdead0000), &env);
    assert!(matches!(
        s.records().as_slice(),
        [Record::Error {
            addr: 0xdead0000,
            pc: 1,
            ..
        }]
    ));
}

#[test]
fn begin_and_end_probes_run_in_order() {
    let mut p = with_globals(
        program(vec![
            handler(
                STP_CTX_BEGIN,
                1,
                0,
                vec![i(STP_OP_LDI, 0, 0, 0, 1), i(STP_OP_STG, 0, 0, 0, 0), RET],
            ),
            handler(
                STP_CTX_END,
                1,
                0,
                vec![i(STP_OP_LDG, 0, 0, 0, 0), i(STP_OP_PRINTF, 0, 0, 0, 0), RET],
            ),
            handler(
                STP_CTX_BEGIN,
                1,
                0,
                vec![i(STP_OP_LDI, 0, 0, 0, 0), i(STP_OP_DIV, 0, 0, 0, 0), RET],
            ),
        ]),
        1,
    );
    p.formats = vec![Format {
        text: "g=%d\n".into(),
        args: vec![ArgKind::Int],
    }];
    let mut s = HostSession::from_program(&p).unwrap();
    let env = HostEnv::default();
    let errs = s.run_probes_of_kind(STP_PROBE_BEGIN, &env);
    assert_eq!(errs.len(), 1);
    assert_eq!((errs[0].name, errs[0].handler), ("DIVZERO", 2));
    assert!(s.run_probes_of_kind(STP_PROBE_END, &env).is_empty());
    assert_eq!(s.output(), b"g=1\n");
    assert_eq!(s.records().len(), 2);
    assert!(s.run_handler(7, &env).is_err());
}

#[test]
fn full_ring_drops_and_the_handler_goes_on() {
    let mut p = with_globals(
        begin(
            1,
            1,
            vec![
                i(STP_OP_LDI, 0, 0, 0, 0),
                i(STP_OP_SLDK, 0, 0, 0, 0),
                i(STP_OP_PRINTF, 0, 0, 0, 0), // pc 2
                i(STP_OP_ADDI, 0, 0, 0, 1),
                i(STP_OP_STG, 0, 0, 0, 0),
                i(STP_OP_LOOP, 0, 0, 0, -4),
                RET,
            ],
        ),
        1,
    );
    p.limits[STP_LIM_RING_PAGES as usize] = 4; // 16 KiB
    p.limits[STP_LIM_MAXACTION as usize] = 1000;
    p.strings = vec![vec![b'z'; 100]];
    p.formats = vec![Format {
        text: "%s".into(),
        args: vec![ArgKind::Str],
    }];
    let mut s = HostSession::from_program(&p).unwrap();
    // Stop draining: the VM fills the ring within one run.
    let e = s.run_handler(0, &HostEnv::default()).unwrap_err();
    assert_eq!(e.name, "MAXACTION");
    assert_eq!(s.globals(), vec![1001]);
    let printed = s
        .records()
        .iter()
        .filter(|r| matches!(r, Record::Printf { .. }))
        .count() as u64;
    // 120-byte records: 136 fit in 16 KiB, the rest are dropped; the
    // 32-byte error record still fits in the last 64 bytes.
    assert_eq!(printed, 16384 / 120);
    assert_eq!(s.dropped(), 1001 - printed);
    assert!(matches!(
        s.records().last(),
        Some(Record::Error { pc: 5, .. })
    ));
}

/// Random handlers: whatever the verifier accepts must run without a
/// verifier-bug error (BADOP) and leave only decodable records; under
/// ASan/UBSan builds of the core this also checks every unchecked access.
#[test]
fn verified_random_programs_run_safely() {
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let mut next = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let mut accepted = 0;
    for _ in 0..4000 {
        let len = 2 + next(12) as usize;
        let mut code: Vec<Insn> = (0..len - 1)
            .map(|pc| {
                let op = next(STP_OP__COUNT as u64) as u8;
                let imm = match op as u32 {
                    STP_OP_JMP | STP_OP_JZ | STP_OP_JNZ => next((len - pc - 1) as u64) as i32,
                    STP_OP_LOOP => -(1 + next(pc as u64 + 1) as i32),
                    STP_OP_CALLI | STP_OP_CALLS => next(STP_HLP__COUNT as u64) as i32,
                    STP_OP_LDI | STP_OP_ADDI => next(1 << 20) as i32 - (1 << 19),
                    STP_OP_LDK | STP_OP_SLDK | STP_OP_LDG | STP_OP_STG | STP_OP_GADD
                    | STP_OP_PRINTF => next(2) as i32,
                    _ => 0,
                };
                let info = &vm_spec::tables::OPCODES[op as usize];
                let mut opnd = |k: vm_spec::tables::Operand| match k {
                    vm_spec::tables::Operand::NO => 0,
                    _ => next(3) as u8,
                };
                let (a, b, c) = (opnd(info.a), opnd(info.b), opnd(info.c));
                Insn { op, a, b, c, imm }
            })
            .collect();
        code.push(RET);
        // A prologue writes every register most of the time.
        let mut pro = Vec::new();
        for r in 0..3u8 {
            if next(8) != 0 {
                pro.push(i(STP_OP_LDI, r, 0, 0, r as i32 - 1));
            }
            if next(8) != 0 {
                pro.push(i(STP_OP_SLDK, r, 0, 0, (r % 2) as i32));
            }
        }
        pro.append(&mut code);
        let code = pro;
        // The contexts whose probes need no descriptor fields but a
        // symbol or a period (procfs contexts need a file: abi.h).
        let ctx = next(u64::from(STP_CTX_KRETPROBE) + 1) as stp_ctx;
        let mut p = with_globals(program(vec![handler(ctx, 3, 3, code)]), 2);
        p.limits[STP_LIM_MAXACTION as usize] = 50;
        p.limits[STP_LIM_MAXSTRINGLEN as usize] = 16;
        p.konsts = vec![i64::MIN, -1];
        p.strings = vec![b"abcdefghijkl".to_vec(), b"xyz".to_vec()];
        p.formats = vec![
            Format {
                text: "%d %s".into(),
                args: vec![ArgKind::Int, ArgKind::Str],
            },
            Format {
                text: "%s".into(),
                args: vec![ArgKind::Str],
            },
        ];
        // One statistic, with everything the statistic instructions need.
        p.stats = vec![Stat {
            name: "st".into(),
            ..st(Hist::Log, true, 0)
        }];
        let Ok(mut s) = HostSession::from_program(&p) else {
            continue;
        };
        accepted += 1;
        let env = HostEnv {
            memory: vec![(0, b"zero page\0".to_vec())],
            execname: "a-very-long-name-longer-than-16".into(),
            ..Default::default()
        };
        for _ in 0..3 {
            if let Err(e) = s.run_handler(0, &env) {
                assert_ne!(
                    e.name, "BADOP",
                    "verifier let through {:?}",
                    p.handlers[0].code
                );
            }
        }
        assert!(s.bad_records().is_empty());
    }
    assert!(accepted > 500, "only {accepted} random programs verified");
}

/// fact(n) = n <= 1 ? 1 : n * fact(n - 1), as function handler 1.
fn fact_prog(n: i32) -> Program {
    let mut p = with_globals(
        begin(
            2,
            0,
            vec![
                i(STP_OP_LDI, 1, 0, 0, n),
                i(STP_OP_FCALLI, 0, 1, 0, 1),
                i(STP_OP_STG, 0, 0, 0, 0),
                RET,
            ],
        ),
        1,
    );
    add_function(
        &mut p,
        4,
        0,
        (1, 0, STP_RET_LONG),
        vec![
            i(STP_OP_LDI, 1, 0, 0, 1),
            i(STP_OP_GT, 2, 0, 1, 0),
            i(STP_OP_JNZ, 2, 0, 0, 1),
            i(STP_OP_RETI, 1, 0, 0, 0),
            i(STP_OP_ADDI, 3, 0, 0, -1),
            i(STP_OP_FCALLI, 3, 3, 0, 1),
            i(STP_OP_MUL, 0, 0, 3, 0),
            i(STP_OP_RETI, 0, 0, 0, 0),
        ],
    );
    p
}

#[test]
fn recursive_functions_return_values_and_hit_maxnesting() {
    let (s, r) = run(&fact_prog(5));
    assert_eq!(r, Ok(()));
    assert_eq!(s.globals()[0], 120);
    // MAXNESTING 10: fact(10) makes 10 frames, fact(11) one too many.
    let (s, r) = run(&fact_prog(10));
    assert_eq!(r, Ok(()));
    assert_eq!(s.globals()[0], 3_628_800);
    let (_, r) = run(&fact_prog(11));
    let e = r.unwrap_err();
    assert_eq!(e.name, "MAXNESTING");
    assert_eq!(e.message, "MAXNESTING exceeded");
    assert_eq!(
        (e.handler, e.pc),
        (1, 5),
        "the failing call, in the function"
    );
}

#[test]
fn calls_charge_fuel() {
    let mut p = fact_prog(5);
    p.limits[STP_LIM_MAXACTION as usize] = 3;
    let (_, r) = run(&p);
    assert_eq!(r.unwrap_err().name, "MAXACTION");
}

#[test]
fn string_functions_return_strings() {
    // greet(s) = "<" . s . ">" ; begin prints greet("x") twice (frames reused).
    let mut p = begin(
        0,
        2,
        vec![
            i(STP_OP_SLDK, 1, 0, 0, 0),
            i(STP_OP_FCALLS, 0, 0, 1, 1),
            i(STP_OP_FCALLS, 1, 0, 0, 1),
            i(STP_OP_PRINTF, 0, 0, 1, 0),
            RET,
        ],
    );
    p.strings = vec![b"x".to_vec(), b"<".to_vec(), b">".to_vec()];
    p.formats.push(Format {
        text: "%s\n".into(),
        args: vec![ArgKind::Str],
    });
    add_function(
        &mut p,
        0,
        3,
        (0, 1, STP_RET_STR),
        vec![
            i(STP_OP_SLDK, 1, 0, 0, 1),
            i(STP_OP_SCAT, 1, 1, 0, 0),
            i(STP_OP_SLDK, 2, 0, 0, 2),
            i(STP_OP_SCAT, 1, 1, 2, 0),
            i(STP_OP_RETS, 1, 0, 0, 0),
        ],
    );
    let (s, r) = run(&p);
    assert_eq!(r, Ok(()));
    assert_eq!(String::from_utf8_lossy(&s.output()), "<<x>>\n");
}

/// Runs `code` (string constants `strs`, one "%s|%d\n" printf of s0, r0).
fn str_op(
    nregs: u8,
    nsregs: u8,
    strs: &[&str],
    code: Vec<Insn>,
) -> (String, Result<(), RuntimeError>) {
    let mut c = code;
    c.push(i(STP_OP_PRINTF, 0, 0, 0, 0));
    c.push(RET);
    let mut p = begin(nregs, nsregs, c);
    p.strings = strs.iter().map(|s| s.as_bytes().to_vec()).collect();
    p.formats.push(Format {
        text: "%s|%d\n".into(),
        args: vec![ArgKind::Str, ArgKind::Int],
    });
    p.formats.push(Format {
        text: "[%5s:%x]".into(),
        args: vec![ArgKind::Str, ArgKind::Int],
    });
    let (s, r) = run(&p);
    (String::from_utf8_lossy(&s.output()).into_owned(), r)
}

#[test]
fn string_instructions() {
    // SPRINTF with the format's text in the image.
    let (out, _) = str_op(
        2,
        2,
        &["ab"],
        vec![
            i(STP_OP_SLDK, 1, 0, 0, 0),
            i(STP_OP_LDI, 0, 0, 0, 255),
            i(STP_OP_SPRINTF, 0, 0, 1, 1),
        ],
    );
    assert_eq!(out, "[   ab:ff]|255\n");
    // SSUB: substr("Hello World!", 2, 5), and out-of-range starts.
    let sub = |start: i32, len: i32| {
        str_op(
            3,
            1,
            &["Hello World!"],
            vec![
                i(STP_OP_SLDK, 0, 0, 0, 0),
                i(STP_OP_LDI, 1, 0, 0, start),
                i(STP_OP_LDI, 2, 0, 0, len),
                i(STP_OP_SSUB, 0, 0, 1, 0),
                i(STP_OP_LDI, 0, 0, 0, 0),
            ],
        )
        .0
    };
    assert_eq!(sub(2, 5), "llo W|0\n");
    assert_eq!(sub(11, 100), "!|0\n");
    assert_eq!(sub(12, 1), "|0\n");
    assert_eq!(sub(-1, 10), "|0\n");
    assert_eq!(sub(0, 0), "|0\n");
    // SFIND and STOL.
    let find = |h: &str, n: &str| {
        str_op(
            1,
            2,
            &[h, n],
            vec![
                i(STP_OP_SLDK, 0, 0, 0, 0),
                i(STP_OP_SLDK, 1, 0, 0, 1),
                i(STP_OP_SFIND, 0, 0, 1, 0),
            ],
        )
        .0
    };
    assert_eq!(find("abcfoobad", "foo"), "abcfoobad|3\n");
    assert_eq!(find("foo", "abcfoobad"), "foo|-1\n");
    assert_eq!(find("", ""), "|0\n");
    let tol = |t: &str, base: i32| {
        str_op(
            2,
            1,
            &[t],
            vec![
                i(STP_OP_SLDK, 0, 0, 0, 0),
                i(STP_OP_LDI, 1, 0, 0, base),
                i(STP_OP_STOL, 0, 0, 1, 0),
            ],
        )
        .0
    };
    assert_eq!(tol("123x", 10), "123x|123\n");
    assert_eq!(tol("-0x1f", 16), "-0x1f|-31\n");
    assert_eq!(tol("0x1f", 0), "0x1f|31\n");
    assert_eq!(tol("017", 0), "017|15\n");
    assert_eq!(tol("zz", 36), "zz|1295\n");
    // SREPL, STEXT, SCHAR.
    let (out, _) = str_op(
        1,
        4,
        &["hello system tap", "system", "pointer"],
        vec![
            i(STP_OP_SLDK, 1, 0, 0, 0),
            i(STP_OP_SLDK, 2, 0, 0, 1),
            i(STP_OP_SLDK, 3, 0, 0, 2),
            i(STP_OP_SREPL, 0, 1, 2, 0),
            i(STP_OP_LDI, 0, 0, 0, 1),
            i(STP_OP_SCHAR, 0, 0, 0, 0),
        ],
    );
    assert_eq!(out, "hello pointer tap|101\n");
    let (out, _) = str_op(
        1,
        2,
        &["a\n\"\u{7}\u{19}"],
        vec![
            i(STP_OP_SLDK, 1, 0, 0, 0),
            i(STP_OP_STEXT, 0, 1, 0, 0),
            i(STP_OP_LDI, 0, 0, 0, 99),
            i(STP_OP_SCHAR, 0, 1, 0, 0),
        ],
    );
    assert_eq!(out, "a\\n\\\"\\a\\031|0\n");
}

#[test]
fn error_ends_the_run_with_its_message() {
    let mut p = begin(
        0,
        1,
        vec![i(STP_OP_SLDK, 0, 0, 0, 0), i(STP_OP_ERROR, 0, 0, 0, 0), RET],
    );
    p.strings = vec![b"it broke".to_vec()];
    let (s, r) = run(&p);
    let e = r.unwrap_err();
    assert_eq!(e.name, "USER");
    assert_eq!(e.message, "it broke");
    assert_eq!(e.pc, 1);
    match s.records().as_slice() {
        [Record::Error { msg, addr: 8, .. }] => assert_eq!(msg, b"it broke"),
        other => panic!("records {other:?}"),
    }
}

/// SPRINTF cuts its result at the first NUL, as stap's C strings end there:
/// `sprintf("%c", 0)` is "", `sprintf("a%cb", 0)` is "a"; a non-zero `%c`
/// is kept.
#[test]
fn sprintf_cuts_at_the_first_nul() {
    let case = |text: &str, c: i32| {
        let mut p = begin(
            2,
            1,
            vec![
                i(STP_OP_LDI, 1, 0, 0, c),
                i(STP_OP_SPRINTF, 0, 1, 0, 1),
                i(STP_OP_SLEN, 0, 0, 0, 0),
                i(STP_OP_PRINTF, 0, 0, 0, 0),
                RET,
            ],
        );
        p.formats.push(Format {
            text: "%s|%d\n".into(),
            args: vec![ArgKind::Str, ArgKind::Int],
        });
        p.formats.push(Format {
            text: text.into(),
            args: vec![ArgKind::Int],
        });
        let (s, r) = run(&p);
        assert_eq!(r, Ok(()));
        String::from_utf8_lossy(&s.output()).into_owned()
    };
    assert_eq!(case("%c", 0), "|0\n");
    assert_eq!(case("a%cb", 0), "a|1\n");
    assert_eq!(case("a%5cb", 0), "a    |5\n");
    assert_eq!(case("a%cb", 0x41), "aAb|3\n");
    assert_eq!(case("%c", 256), "|0\n");
}

#[test]
fn verdict_is_accept_until_set_to_drop_or_accept_only() {
    // $verdict (helpers.h VERDICT, VERDICT_SET) in a netfilter handler:
    // print it, set it to `v`, print what VERDICT_SET returned.
    let prog = |v: i32| {
        let mut p = helper_prog(
            STP_CTX_NETFILTER,
            vec![
                i(STP_OP_CALLI, 0, 0, 0, STP_HLP_VERDICT as i32),
                i(STP_OP_PRINTF, 0, 0, 0, 0),
                i(STP_OP_LDI, 1, 0, 0, v),
                i(STP_OP_CALLI, 0, 1, 0, STP_HLP_VERDICT_SET as i32),
                i(STP_OP_PRINTF, 0, 0, 0, 0),
                RET,
            ],
        );
        let mut q = probe(STP_PROBE_NETFILTER, 0);
        q.period_ns = 0;
        q.netfilter = Some(NfHook {
            pf: STP_NFPROTO_IPV4,
            hook: 1,
            priority: 0,
        });
        p.probes = vec![q];
        p
    };
    let env = HostEnv::default();
    for v in [STP_NF_DROP, STP_NF_ACCEPT] {
        let (s, r) = run_env(&prog(v as i32), &env);
        r.unwrap();
        assert_eq!(s.output(), format!("1\n{v}\n").as_bytes());
        assert_eq!(s.verdict(), i64::from(v));
    }
    // NF_STOLEN, NF_QUEUE, NF_REPEAT, an errno-carrying drop, -1: an error
    // at VERDICT_SET, and the packet is accepted.
    for v in [2, 3, 4, (1 << 16), -1] {
        let (s, r) = run_env(&prog(v), &env);
        let e = r.unwrap_err();
        assert_eq!(e.code, STP_RTE_VERDICT, "{v}");
        assert_eq!(e.addr, v as i64 as u64, "{v}");
        assert!(
            e.message.contains(&format!("netfilter verdict {v} is not")),
            "{}",
            e.message
        );
        assert_eq!(s.output(), b"1\n");
        assert_eq!(s.verdict(), i64::from(STP_NF_ACCEPT));
    }
}
