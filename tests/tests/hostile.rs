//! The hostile images of the guest case `hostile-images`, checked against
//! the user-space build of the C verifier (the code stapvm.ko runs on LOAD):
//! every one is refused with the expected error, every valid one accepted.
//! The guest case then checks the same images through the real ioctl.
use stapvm_tests::hostile::{hostile, valid_images};
use vm_spec::core::verify_image;

/// Refused by the module glue (kmod/main.c) rather than the core verifier,
/// so the user-space verifier may accept them.
const GLUE_ONLY: &[&str] = &["oversized", "ring-pages-not-pow2", "probe-symbol-too-long"];

#[test]
fn valid_images_verify() {
    for (name, img) in valid_images() {
        if let Err(e) = verify_image(&img) {
            panic!("valid image {name} refused: {} {}", e.name, e.message);
        }
    }
}

#[test]
fn hostile_images_are_refused_with_the_expected_error() {
    let mut bad = Vec::new();
    for h in hostile() {
        let name = h.name;
        match verify_image(&h.image) {
            Err(e) if e.code == h.code && e.message.contains(h.fragment) => {}
            Err(e) => bad.push(format!(
                "{name}: got {} ({}), want {} with {:?}",
                e.name,
                e.message,
                vm_spec::tables::VERIFY_ERRORS[h.code as usize].name,
                h.fragment
            )),
            Ok(_) if GLUE_ONLY.contains(&name) => {}
            Ok(_) => bad.push(format!("{name}: accepted")),
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
