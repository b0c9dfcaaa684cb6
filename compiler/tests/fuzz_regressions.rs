//! Scripts the parser fuzz target (fuzz/fuzz_targets/parse.rs) found, each
//! reduced to what triggered it: the compiler must not panic on them, and
//! what it compiles must pass the module's verifier (the C core).
mod common;

/// An array written only in a function that is never called: its key types
/// are never inferred, and the map descriptor had 0 keys (BAD_MAP).
#[test]
fn array_used_only_in_an_uncalled_function_verifies() {
    let src = "global array\nfunction decl() { array[0] = 1 }\nprobe begin { exit() }\n";
    let c = common::build(src);
    assert_eq!(c.program.maps.len(), 1);
    assert!(!c.program.maps[0].keys.is_empty());
    common::image(&c.program);
    // The fuzzer's own input (no probe at all).
    let src = "global array\nfunction decl()\n{\n    array[0] = ap -p1\n        printf(\"key %d, value %d\\n\", key, array[key])\n}\n";
    if let Ok(c) = compiler::compile("f.stp", src, &compiler::Options::default()) {
        common::image(&c.program);
    }
}
