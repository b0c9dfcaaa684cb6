//! Fuzz target: the whole compiler front end on arbitrary source text
//! (preprocess, parse, probe aliases, resolve, types, lower), then the
//! kernel's verifier (the C core, ASan under cargo fuzz) on the image of
//! what compiled. The compiler must never panic, whatever the text, and a
//! program it accepts must verify (a refusal is a compiler bug: the
//! compiler emitted code the module would refuse). Seeded with every corpus
//! script (docs/testing.md).
#![no_main]
use libfuzzer_sys::fuzz_target;
use vm_spec::program::Program;

/// The stand-in image of a compiled program (`StandIns::Named`, as the
/// test kit builds them).
fn image(p: &Program) -> Vec<u8> {
    vm_spec::image::build_stand_in(p, vm_spec::image::StandIns::Named)
        .expect("the image of a compiled program builds")
}

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    let opts = compiler::Options {
        args: vec!["arg1".into(), "2".into()],
        ..Default::default()
    };
    if let Ok(c) = compiler::compile("fuzz.stp", &src, &opts) {
        let img = image(&c.program);
        if let Err(e) = vm_spec::core::verify_image(&img) {
            // Probe symbols come from the script: a name the module's
            // symbol rule refuses is the loader's business (it resolves
            // names against kallsyms first), not a compiler bug.
            if e.name != "BAD_PROBE" {
                panic!(
                    "compiled program refused by the verifier: {} ({}) at {}",
                    e.message, e.name, e.at
                );
            }
        }
    }
});
