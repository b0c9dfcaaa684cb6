//! The hostile images of the guest case `hostile-images`, checked against
//! the user-space build of the C verifier (the code stapvm.ko runs on LOAD,
//! and the compiler's last pass): every hand-written attack is refused
//! with the expected error, every valid image is accepted, the seeded
//! mutations reach many kinds of refusal, and every verifier error code an
//! image can cause has an attack. The guest case then checks the same
//! images, and the mutations' recorded verdicts, through the ioctl.
use stapvm_tests::hostile::{
    corpus_mutations, errno_name, hostile, mutations, stpb_image, valid_images,
};
use vm_spec::core::verify_image;
use vm_spec::tables::VERIFY_ERRORS;

/// Codes no image can cause, with the reason.
const NO_IMAGE: &[(&str, &str)] = &[
    ("OK", "not an error"),
    (
        "NO_MEMORY",
        "the verifier's scratch allocation failing; vm-testkit/tests/verify.rs \
         no_memory_is_reported makes it fail",
    ),
];

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
        let name = &h.name;
        match verify_image(&h.image) {
            Err(e) if e.code == h.code && e.message.contains(&h.fragment) => {}
            Err(e) => bad.push(format!(
                "{name}: got {} ({}), want {} with {:?}",
                e.name, e.message, VERIFY_ERRORS[h.code as usize].name, h.fragment
            )),
            Ok(_) => bad.push(format!("{name}: accepted")),
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn every_error_code_has_a_hostile_image() {
    let codes: Vec<u32> = hostile().iter().map(|h| h.code).collect();
    for (code, e) in VERIFY_ERRORS.iter().enumerate() {
        if NO_IMAGE.iter().any(|(n, _)| *n == e.name) {
            continue;
        }
        assert!(
            codes.contains(&(code as u32)),
            "no hostile image for {}: add one to tests/src/hostile.rs",
            e.name
        );
        assert_ne!(errno_name(e.errno), "E?", "{}: errno {}", e.name, e.errno);
    }
}

#[test]
fn mutations_have_distinct_names_and_reach_many_refusals() {
    let muts = mutations(240, 40);
    assert_eq!(muts.len(), 280);
    let mut names = std::collections::HashSet::new();
    for m in &muts {
        assert!(names.insert(m.name.clone()), "{}: name used twice", m.name);
    }
    // Mutations reach past the header: several kinds of refusal.
    let mut codes: Vec<u32> = muts
        .iter()
        .filter_map(|m| m.refusal.as_ref().map(|r| r.0))
        .collect();
    codes.sort_unstable();
    codes.dedup();
    assert!(codes.len() >= 10, "only codes {codes:?}");
}

#[test]
fn every_compiled_case_gets_refused_mutations() {
    // What tests/guest/run hands gen-hostile: the .stpb of each case. Here
    // three guest cases' scripts, compiled as the harness does.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cases");
    let mut bases = Vec::new();
    for case in ["smp-hot-map", "stats-smp", "arrays"] {
        let path = root.join(case).join("script.stp");
        let src = std::fs::read_to_string(&path).expect("case script");
        let c = compiler::compile(&path.to_string_lossy(), &src, &compiler::Options::default())
            .unwrap_or_else(|e| panic!("{case}: {}", e.rendered));
        let stpb = vm_spec::container::write(&c.program);
        let img = stpb_image(&stpb).unwrap_or_else(|e| panic!("{case}: {e}"));
        bases.push((case.to_string(), img));
    }
    let muts = corpus_mutations(&bases, 3, 2);
    for (case, _) in &bases {
        let refused = muts
            .iter()
            .filter(|m| m.name.starts_with(&format!("corpus-{case}-")) && m.refusal.is_some())
            .count();
        assert_eq!(refused, 3, "{case}: {refused} refused mutations");
    }
    assert!(muts.iter().filter(|m| m.refusal.is_none()).count() <= 2);
    // Deterministic: the same bases give the same images.
    let again = corpus_mutations(&bases, 3, 2);
    assert!(muts
        .iter()
        .zip(&again)
        .all(|(a, b)| a.name == b.name && a.image == b.image));
}
