//! Fuzz target: the VM on mutated code. The first two bytes pick a
//! generated program (`vm_testkit::gen`), the third a starting instruction;
//! every following 8 bytes overwrite one instruction (op, a, b, c, imm),
//! wrapping around the code. If the result verifies, every handler runs on
//! the C core (ASan-checked) and on the reference VM: neither may crash,
//! both terminate by fuel, and they must agree; a reference-VM
//! `VerifierHole` means the verifier accepted code that reads an
//! unwritten register or leaves its tables (a verifier bug).
#![no_main]
use libfuzzer_sys::fuzz_target;
use vm_testkit::diff::check_case;
use vm_testkit::gen::generate;
use vm_spec::program::Insn;

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let mut case = generate(u64::from(u16::from_le_bytes([data[0], data[1]])));
    let total: usize = case.program.handlers.iter().map(|h| h.code.len()).sum();
    if total == 0 {
        return;
    }
    let mut at = usize::from(data[2]) % total;
    for chunk in data[3..].chunks_exact(8) {
        let insn = Insn {
            op: chunk[0],
            a: chunk[1],
            b: chunk[2],
            c: chunk[3],
            imm: i32::from_le_bytes([chunk[4], chunk[5], chunk[6], chunk[7]]),
        };
        let mut k = at;
        for h in case.program.handlers.iter_mut() {
            if k < h.code.len() {
                h.code[k] = insn;
                break;
            }
            k -= h.code.len();
        }
        at = (at + 1) % total;
    }
    // Every probe handler once, in order (functions run only when called).
    case.runs = (0..case.program.handlers.len() as u32)
        .filter(|&h| {
            case.program.handlers[h as usize].ctx != vm_spec::abi::STP_CTX_FUNCTION as u8
        })
        .collect();
    // Each run on one of the simulated CPUs (statistics merge over them).
    case.run_cpus = (0..case.runs.len() as u32)
        .map(|k| i64::from(k % case.cpus.max(1)))
        .collect();
    match check_case(&case) {
        Ok(_) | Err(vm_testkit::diff::Mismatch::Rejected { .. }) => {}
        Err(m) => panic!("{m}"),
    }
});
