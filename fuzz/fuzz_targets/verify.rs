//! Fuzz target: the verifier on arbitrary bytes. The C verifier
//! (`core::verify_image`, built with ASan under cargo fuzz, see
//! vm-spec/build.rs) must never crash or read outside the image, and an
//! image it accepts must decode cleanly for the reference VM (every
//! section and index in range, checked independently in Rust). Each
//! input is tried as it is and resealed (`image::seal`: its header's
//! checksum made right), so that mutations reach the checks past the
//! checksum.
#![no_main]
use libfuzzer_sys::fuzz_target;
use vm_spec::core::verify_image;
use vm_refvm::vm::RefProgram;

fuzz_target!(|data: &[u8]| {
    let mut sealed = data.to_vec();
    vm_spec::image::seal(&mut sealed);
    for image in [data, &sealed[..]] {
        if verify_image(image).is_ok() {
            if let Err(e) = RefProgram::from_image(image) {
                panic!("verified image does not decode: {e}");
            }
        }
    }
});
