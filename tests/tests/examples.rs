//! Every example script the `stapvm` package ships (`docs/examples/*.stp`,
//! installed in /usr/share/doc/stapvm/examples) compiles with no warning:
//! what a user copies from there must work as it is.
use std::path::PathBuf;

#[test]
fn every_example_compiles_without_warnings() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/examples");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("docs/examples") {
        let path = entry.expect("docs/examples entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("stp") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("example text");
        let name = path.display().to_string();
        match compiler::compile(&name, &text, &compiler::Options::default()) {
            Ok(c) => assert!(c.warnings.is_empty(), "{name}: {}", c.warnings.concat()),
            Err(e) => panic!("{name} does not compile:\n{e}"),
        }
        names.push(name);
    }
    // The examples the docs and the boot tracer name.
    for want in [
        "boot-summary.stp",
        "opens.stp",
        "read-latency.stp",
        "malloc-sizes.stp",
    ] {
        assert!(
            names.iter().any(|n| n.ends_with(want)),
            "no {want} in {names:?}"
        );
    }
}
