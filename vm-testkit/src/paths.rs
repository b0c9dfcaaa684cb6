//! Where the tests find what lives outside the repository: the shared
//! folder (`../shared` from the workspace root: the corpus, the research
//! notes), overridable with `STAPVM_SHARED`, so a clone in any folder
//! passes.
use std::path::{Path, PathBuf};

/// The workspace root (the folder holding the top `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The shared folder: `$STAPVM_SHARED`, else `../shared` from the
/// workspace root.
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("STAPVM_SHARED") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => workspace_root().join("..").join("shared"),
    }
}

/// The corpus: `shared_dir()/corpus` (`stp-examples`, `stp-testsuite`,
/// `seeds`).
pub fn corpus_dir() -> PathBuf {
    shared_dir().join("corpus")
}

/// `corpus_dir()/rel`.
pub fn corpus(rel: &str) -> PathBuf {
    corpus_dir().join(rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_root_holds_the_workspace_manifest() {
        let m = std::fs::read_to_string(workspace_root().join("Cargo.toml")).unwrap();
        assert!(m.contains("[workspace]"), "{m}");
    }
}
