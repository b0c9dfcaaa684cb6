//! STEXTN, STOK and STHISTS (opcodes.h): what the verifier refuses, and
//! hand-built programs run on the C core and the reference VM
//! (`vm_testkit::diff::check_case`), which must agree record for record,
//! with the output stap gives.
mod common;
use common::*;
use vm_spec::abi::*;
use vm_spec::core::verify_image;
use vm_spec::program::*;
use vm_testkit::gen::Case;
use vm_testkit::host::HostSession;
use vm_testkit::HostEnv;

const RET: Insn = Insn {
    op: STP_OP_RET as u8,
    a: 0,
    b: 0,
    c: 0,
    imm: 0,
};

/// The verifier's verdict: the error's name and message, or "OK".
fn verdict(p: &Program) -> (String, String) {
    let img = build(p);
    match verify_image(&img) {
        Ok(_) => ("OK".into(), String::new()),
        Err(e) => (e.name.to_string(), e.message),
    }
}

#[test]
fn verifier_rules() {
    let mut p = begin(2, 1, vec![i(STP_OP_STEXTN, 0, 0, 0, 0), RET]);
    p.handlers[0].code.insert(0, i(STP_OP_LDI, 1, 0, 0, 0));
    p.handlers[0].code.insert(0, i(STP_OP_LDI, 0, 0, 0, 0));
    p.handlers[0].code.insert(0, i(STP_OP_SLDK, 0, 0, 0, 0));
    p.strings.push(b"x".to_vec());
    let (name, msg) = verdict(&p);
    assert_eq!(name, "BAD_REGISTER");
    assert!(msg.contains("STEXTN writes s0, its operand"), "{msg}");
    // The pair r[c], r[c+1] must be inside the file.
    let mut q = p.clone();
    q.handlers[0].code[3] = i(STP_OP_STEXTN, 0, 0, 1, 0);
    q.handlers[0].nsregs = 2;
    q.handlers[0].code[3].a = 1;
    assert_ne!(verdict(&q).0, "OK");
    // STOK may write one of its operands.
    let mut t = begin(
        0,
        1,
        vec![i(STP_OP_SLDK, 0, 0, 0, 0), i(STP_OP_STOK, 0, 0, 0, 0), RET],
    );
    t.strings.push(b"a,b".to_vec());
    assert_eq!(verdict(&t).0, "OK");
    // STHISTS needs a statistic with a histogram.
    let mut h = begin(0, 1, vec![i(STP_OP_STHISTS, 0, 0, 0, 0), RET]);
    h.stats.push(st(Hist::None, false, 0));
    let (name, msg) = verdict(&h);
    assert_eq!(name, "BAD_STAT", "{msg}");
    h.stats[0].hist = Hist::Log;
    assert_eq!(verdict(&h).0, "OK");
}

/// Runs handler 0 twice (the tokenizer keeps its state) on the C core,
/// checks the reference VM agrees, returns the PRINTF output.
fn run_twice(p: &Program) -> String {
    let case = Case {
        seed: 0,
        program: p.clone(),
        env: HostEnv::default(),
        runs: vec![0, 0],
        cpus: 1,
        run_cpus: vec![0, 0],
    };
    if let Err(m) = vm_testkit::diff::check_case(&case) {
        panic!("C core and reference VM differ: {m}");
    }
    let mut s = HostSession::from_program(p).expect("verifies");
    for _ in 0..2 {
        s.run_handler(0, &HostEnv::default()).expect("runs");
    }
    String::from_utf8_lossy(&s.output()).into_owned()
}

/// s0 := str 0, s1 := str 1, code, then printf("%s|", s0..s2).
fn strs(strings: &[&[u8]], code: Vec<Insn>) -> Program {
    let mut all = vec![i(STP_OP_SLDK, 0, 0, 0, 0), i(STP_OP_SLDK, 1, 0, 0, 1)];
    all.extend(code);
    all.push(i(STP_OP_PRINTF, 0, 0, 0, 0));
    all.push(RET);
    let mut p = begin(4, 4, all);
    p.strings = strings.iter().map(|s| s.to_vec()).collect();
    p.formats.push(Format {
        text: "%s|%s|%s\n".into(),
        args: vec![ArgKind::Str; 3],
    });
    p
}

#[test]
fn stok_aliases_and_state_across_runs() {
    // s2 := tokenize(s0, s1) = "x"; s0 := tokenize("", s1) = "y" (the
    // state carries on; writing its input); s1 := tokenize("", s1) = ""
    // (none left; writing its delimiters). The second run starts over.
    let mut p = strs(
        &[b"x,,y", b","],
        vec![
            i(STP_OP_SLDK, 3, 0, 0, 2),
            i(STP_OP_STOK, 2, 0, 1, 0),
            i(STP_OP_SMOV, 0, 3, 0, 0),
            i(STP_OP_STOK, 0, 0, 1, 0),
            i(STP_OP_STOK, 1, 3, 1, 0),
        ],
    );
    p.strings.push(Vec::new());
    assert_eq!(run_twice(&p), "y||x\ny||x\n");
}

#[test]
fn stextn_budgets_quotes_and_utf8() {
    let cases: &[(&[u8], i32, i32, &str)] = &[
        (b"1234567890", 10, 1, "\"12345\"..."),
        (b"1234567890", 0, 1, "\"1234567890\""),
        (b"\n\nXYZZY\x19", 10, 1, "\"\\n\\nX\"..."),
        (b"\n\nXYZZY\x19", 12, 0, "\\n\\nXYZZY"),
        (b"\xe2\x82\xac'\"", 0, 0, "\\u20AC'\\\""),
        (b"\xf0\x9f\x98\x80", 0, 1, "\"\\U0001F600\""),
        (b"\xe2\x82", 0, 0, "\\342\\202"),
        (b"\x7f", -5, 0, "\\177"),
    ];
    for &(s, len, quoted, want) in cases {
        let mut p = strs(
            &[s, b""],
            vec![
                i(STP_OP_LDI, 0, 0, 0, len),
                i(STP_OP_LDI, 1, 0, 0, quoted),
                i(STP_OP_STEXTN, 2, 0, 0, 0),
                i(STP_OP_STEXT, 1, 0, 0, 0),
            ],
        );
        p.formats[0].text = "%s|%s\n".into();
        p.formats[0].args = vec![ArgKind::Str; 2];
        p.handlers[0].code.insert(5, i(STP_OP_SMOV, 0, 2, 0, 0));
        let out = run_twice(&p);
        let line = out.lines().next().unwrap_or_default().to_string();
        assert_eq!(
            line.split('|').next(),
            Some(want),
            "{s:?} len {len} quoted {quoted}"
        );
    }
}
