//! The whole user-space output path on real records: the compiler's
//! program and source locations, the C VM (run in user space by the test
//! kit's `HostSession`), the ring records it writes, and the CLI's text
//! (`stapvm::output`). Here rather than in the stapvm package, so that the
//! product does not depend on the test kit, not even for its tests.
use stapvm::output::Printer;
use stapvm::ring::Batch;
use vm_spec::abi;
use vm_testkit::host::HostSession;
use vm_testkit::HostEnv;

fn run_begin(src: &str) -> (String, String) {
    let c = compiler::compile("x.stp", src, &compiler::Options::default())
        .unwrap_or_else(|f| panic!("{}", f.rendered));
    let mut host = HostSession::from_program(&c.program).unwrap();
    let env = HostEnv {
        pid: 42,
        execname: "stapvm".into(),
        ..Default::default()
    };
    host.run_probes_of_kind(abi::STP_PROBE_BEGIN, &env);
    let mut batch = Batch::new();
    for (t, r) in host.take_raw_records().iter().enumerate() {
        batch.push(0, t as u64, r);
    }
    let (mut out, mut err) = (Vec::new(), Vec::new());
    Printer::new(&c.program, &mut out, &mut err).print_batch(&batch);
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn printf_output() {
    let (out, err) = run_begin(
        "probe begin { printf(\"%s (%d) %5s|%-3d|%x\\n\", execname(), pid(), \"ab\", 7, 255) }",
    );
    assert_eq!(out, "stapvm (42)    ab|7  |ff\n");
    assert_eq!(err, "");
}

#[test]
fn division_by_zero_names_the_operator() {
    let src = "global d\nprobe begin {\n  printf(\"a\\n\")\n  x = 10 / d\n  printf(\"b\\n\")\n}\n";
    let (out, err) = run_begin(src);
    assert_eq!(out, "a\n");
    assert_eq!(
        err,
        "ERROR: division by 0 near operator '/' at x.stp:4:10\n"
    );
}
