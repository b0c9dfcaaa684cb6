//! Fuzz target: the whole compiler front end on arbitrary source text
//! (preprocess, parse, probe aliases, resolve, types, lower), then the
//! kernel's verifier (the C core, ASan under cargo fuzz) on the image of
//! what compiled. The compiler must never panic, whatever the text, and a
//! program it accepts must verify (a refusal is a compiler bug: the
//! compiler emitted code the module would refuse). Seeded with every corpus
//! script (docs/testing.md).
#![no_main]
use libfuzzer_sys::fuzz_target;
use vm_spec::program::{ProbeTarget, Program};

/// The image the loader would build, each probe target resolved to a
/// stand-in symbol (a pattern to `vfs_read`), as compiler/tests do.
fn image(p: &Program) -> Vec<u8> {
    let syms: Vec<Option<(String, u32)>> = p
        .probes
        .iter()
        .map(|pr| match &pr.target {
            ProbeTarget::None => None,
            ProbeTarget::Symbol { name, .. } if name.contains(['*', '?']) => {
                Some(("vfs_read".into(), 0))
            }
            ProbeTarget::Symbol { name, offset } => Some((name.clone(), *offset)),
            ProbeTarget::FirstOf(v) => v.first().map(|s| (s.clone(), 0)),
        })
        .collect();
    vm_spec::image::build(p, &syms).expect("the image of a compiled program builds")
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
