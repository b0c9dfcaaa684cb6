//! Fuzz target: the two verifiers on arbitrary bytes. The C verifier
//! (`core::verify_image`, built with ASan under cargo fuzz, see
//! vm-spec/build.rs) must never crash or read outside the image; the Rust
//! verifier (`vm_spec::verify`, the compiler's last pass) must give the
//! same verdict, code, place and message; and an image they accept must
//! decode cleanly for the reference VM (every section and index in range).
#![no_main]
use libfuzzer_sys::fuzz_target;
use vm_spec::core::verify_image;
use vm_spec::refvm::RefProgram;

fuzz_target!(|data: &[u8]| {
    let c = verify_image(data);
    let r = vm_spec::verify::verify_image(data);
    assert_eq!(c, r, "C (left) and Rust (right) verifiers disagree");
    if c.is_ok() {
        if let Err(e) = RefProgram::from_image(data) {
            panic!("verified image does not decode: {e}");
        }
    }
});
