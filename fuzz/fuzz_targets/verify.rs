//! Fuzz target: the C verifier (`verify_image`, built with ASan under
//! cargo fuzz, see vm-spec/build.rs) on arbitrary bytes. It must never
//! crash or read outside the image, and an image it accepts must decode
//! cleanly for the reference VM (every section and index in range).
#![no_main]
use libfuzzer_sys::fuzz_target;
use vm_spec::core::verify_image;
use vm_spec::refvm::RefProgram;

fuzz_target!(|data: &[u8]| {
    if verify_image(data).is_ok() {
        if let Err(e) = RefProgram::from_image(data) {
            panic!("verified image does not decode: {e}");
        }
    }
});
