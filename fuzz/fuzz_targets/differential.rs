//! Fuzz target: the differential test driven by libFuzzer. The first 8
//! bytes are a generator seed (`vm_testkit::gen`); the program it makes runs
//! on the C core and on the reference VM, which must agree run by run
//! (`vm_testkit::diff::check_case`). libFuzzer's coverage of the C core
//! steers the seeds towards new paths.
#![no_main]
use libfuzzer_sys::fuzz_target;
use vm_testkit::diff::check_case;
use vm_testkit::gen::generate;

fuzz_target!(|data: &[u8]| {
    let mut seed = [0u8; 8];
    for (d, s) in seed.iter_mut().zip(data) {
        *d = *s;
    }
    if let Err(m) = check_case(&generate(u64::from_le_bytes(seed))) {
        panic!("{m}");
    }
});
