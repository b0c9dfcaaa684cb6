//! Shared helpers of the compiler's integration tests: handlers in the
//! disassembler's compact form (`vm_spec::disasm::compact`), `verify` (the
//! compiler's verifier pass, i.e. the Rust verifier `vm_spec::verify`) and
//! `image` (the image checked by the C verifier, the code stapvm.ko runs
//! on LOAD).
#![allow(dead_code)]
use compiler::{compile, Options};
use vm_spec::program::{Handler, Program};
use vm_spec::tables::OPCODES;

/// Compiles or panics with the rendered diagnostics.
pub fn build(src: &str) -> compiler::Compiled {
    match compile("x.stp", src, &Options::default()) {
        Ok(c) => c,
        Err(f) => panic!("{src}\n{}", f.rendered),
    }
}

/// The rendered failure of `src`.
pub fn fail(src: &str) -> String {
    match compile("x.stp", src, &Options::default()) {
        Ok(_) => panic!("compiled: {src}"),
        Err(f) => f.rendered,
    }
}

/// One handler as assembly lines (`vm_spec::disasm::compact`): `LDI r0, 5`,
/// `JZ r1, ->7`, `PRINTF r0, s0, fmt0`.
pub fn disasm(h: &Handler) -> Vec<String> {
    h.code
        .iter()
        .enumerate()
        .map(|(pc, i)| vm_spec::disasm::compact(i, pc))
        .collect()
}

/// Opcode names only.
pub fn names(h: &Handler) -> Vec<&'static str> {
    h.code.iter().map(|i| OPCODES[i.op as usize].name).collect()
}

/// Checks `p` with the compiler's verifier pass (`compiler::verify`: the
/// Rust verifier, the module's rules and codes); `Err` names the code and
/// the problem, with the handlers disassembled.
pub fn verify(p: &Program) -> Result<(), String> {
    compiler::verify::run(p).map_err(|e| {
        let code: Vec<Vec<String>> = p.handlers.iter().map(disasm).collect();
        format!("{e}\n{code:#?}")
    })
}

/// Builds the kernel image with dummy symbols (the first candidate of each
/// probe target), as the loader would, and runs the C verifier (the code
/// stapvm.ko runs on LOAD) on it; panics if it refuses, or if the Rust
/// verifier's verdict differs.
pub fn image(p: &Program) -> Vec<u8> {
    let img = image_unverified(p);
    let c = vm_spec::core::verify_image(&img);
    assert_eq!(
        c,
        vm_spec::verify::verify_image(&img),
        "the C (left) and Rust (right) verifiers disagree"
    );
    if let Err(e) = c {
        panic!(
            "C verifier: {} ({}) at {}\n{:#?}",
            e.message,
            e.name,
            e.at,
            p.handlers.iter().map(disasm).collect::<Vec<_>>()
        );
    }
    img
}

/// The image without the verifier.
pub fn image_unverified(p: &Program) -> Vec<u8> {
    use vm_spec::program::ProbeTarget;
    let syms: Vec<Option<(String, u32)>> = p
        .probes
        .iter()
        .map(|pr| match &pr.target {
            ProbeTarget::None => None,
            // A pattern (`vfs_*`, `m:f*`): the loader expands it; any
            // function stands in for its matches.
            ProbeTarget::Symbol { name, .. } if name.contains(['*', '?']) => {
                Some(("vfs_read".into(), 0))
            }
            ProbeTarget::Symbol { name, offset } => Some((name.clone(), *offset)),
            ProbeTarget::FirstOf(v) => v.first().map(|s| (s.clone(), 0)),
        })
        .collect();
    vm_spec::image::build(p, &syms).expect("image")
}

/// Compiles `src` and runs its begin probes, then its end probes, on the C
/// core in user space (`HostSession`, the code stapvm.ko runs). Returns the
/// output, then `at_exit(program, session)` (what stapvm prints at exit,
/// e.g. the arrays), then `ERROR: <message>` of the first run-time error.
pub fn run_begin_end(
    src: &str,
    at_exit: impl Fn(&Program, &vm_spec::core::HostSession) -> String,
) -> String {
    use vm_spec::abi::{STP_PROBE_BEGIN, STP_PROBE_END};
    let prog = build(src).program;
    let mut s = vm_spec::core::HostSession::from_program(&prog).expect("verifies");
    let env = vm_spec::core::HostEnv::default();
    let mut errs = s.run_probes_of_kind(STP_PROBE_BEGIN, &env);
    errs.extend(s.run_probes_of_kind(STP_PROBE_END, &env));
    let mut out = String::from_utf8_lossy(&s.output()).into_owned();
    out.push_str(&at_exit(&prog, &s));
    if let Some(e) = errs.first() {
        out.push_str(&format!("ERROR: {}\n", e.message));
    }
    out
}
