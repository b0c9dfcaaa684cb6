//! Shared helpers of the compiler's integration tests: handlers in the
//! disassembler's compact form (`vm_spec::disasm::compact`), `verify` (the
//! compiler's verifier pass: the C verifier built for user space, the code
//! stapvm.ko runs on LOAD), `image` (the verified stand-in image),
//! `run_begin_end` (run.rs: a script run on the C core in user
//! space as stapvm runs it) and `syscall_env` (syscall.rs: the registers
//! of a syscall entry).
#![allow(dead_code)]
pub mod aliases;
mod run;
mod syscall;
// Not every test uses both.
#[allow(unused_imports)]
pub use run::*;
#[allow(unused_imports)]
pub use syscall::*;

use compiler::{compile, Options};
use vm_spec::program::{Handler, Program};
use vm_spec::tables::OPCODES;

/// Compiles or panics with the rendered diagnostics.
pub fn build(src: &str) -> compiler::Compiled {
    build_with(src, &Options::default())
}

/// Compiles with `opts` (`-D` defines, script arguments) or panics with
/// the rendered diagnostics.
pub fn build_with(src: &str, opts: &Options) -> compiler::Compiled {
    match compile("x.stp", src, opts) {
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

/// The first `semantic error` line of the failure of `src` (warnings such
/// as "never-assigned local" come first, as in stap), or "" if none.
pub fn first_semantic_error(src: &str) -> String {
    fail(src)
        .lines()
        .find(|l| l.starts_with("semantic error"))
        .unwrap_or("")
        .to_string()
}

/// The first line of a rendered failure that names an error (the
/// summaries of `scripts` and `runok`), if any.
pub fn first_error_line(rendered: &str) -> Option<&str> {
    rendered.lines().find(|l| l.contains("error"))
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

/// The format (`Program::formats` index) of each PRINTF of `h`, in order.
pub fn printf_formats(h: &Handler) -> Vec<usize> {
    h.code
        .iter()
        .filter(|i| u32::from(i.op) == vm_spec::abi::STP_OP_PRINTF)
        .map(|i| i.imm as usize)
        .collect()
}

/// Checks `p` with the compiler's verifier pass (`compiler::verify`: the
/// module's verifier on the stand-in image); `Err` names the code and the
/// problem, with the handlers disassembled.
pub fn verify(p: &Program) -> Result<(), String> {
    compiler::verify::run(p).map_err(|e| {
        let code: Vec<Vec<String>> = p.handlers.iter().map(disasm).collect();
        format!("{e}\n{code:#?}")
    })
}

/// Checks `p` with the verifier pass; panics, naming the script, if it
/// refuses it.
pub fn check(p: &Program) {
    verify(p).unwrap_or_else(|e| panic!("{}\n{e}", p.source));
}

/// The stand-in image of `p` (`vm_spec::image::build_stand_in`), verified
/// by the C verifier; panics if it refuses.
pub fn image(p: &Program) -> Vec<u8> {
    let img = image_unverified(p);
    if let Err(e) = vm_spec::core::verify_image(&img) {
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

/// The stand-in image without the verifier.
pub fn image_unverified(p: &Program) -> Vec<u8> {
    vm_spec::image::build_stand_in(p, vm_spec::image::StandIns::Named).expect("image")
}
