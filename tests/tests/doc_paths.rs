//! Every repository path README.md and docs/*.md name exists.
//!
//! A path is a token that starts with one of the repository's top-level
//! directories (`TOP_DIRS`: `compiler/`, `kmod/`, `.ci/` ...), in
//! backticks or in plain text, and runs while it has path characters
//! (`file:line` and `path#anchor` end at the `:` or `#`, a Markdown link
//! `[text](path)` at the `)`; a trailing `.` ends a sentence, not the
//! path). `{a,b}` lists are expanded and `*` and `?` match within one path
//! component (`kmod/core/*.c`); a glob must match at least one path. A path ending in `/` must be a directory.
//! Build products are not checked: a path that the repository's
//! `.gitignore` files ignore (`kmod/stapvm.ko`, `fuzz/corpus/`) is only
//! created by a build or a run. `target/` and paths outside the repository
//! (`../shared/corpus/...`) do not start with a top-level directory.
use compiler::glob::fnmatch;
use std::path::{Path, PathBuf};

/// The top-level directories a doc path starts with.
const TOP_DIRS: &[&str] = &[
    "compiler",
    "vm-spec",
    "vm-testkit",
    "kmod",
    "userspace",
    "tests",
    "docs",
    "benches",
    "fuzz",
    "packaging",
    ".ci",
];

/// Bytes a path may hold (`,` only inside `{...}`).
fn path_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_-./*?{}+@".contains(&b)
}

/// The path tokens of one line, in order.
fn paths_in(line: &str) -> Vec<String> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = i == 0 || !(path_byte(b[i - 1]) || b[i - 1] == b'$');
        let top = TOP_DIRS
            .iter()
            .find(|t| b[i..].starts_with(t.as_bytes()) && b.get(i + t.len()) == Some(&b'/'));
        let (true, Some(_)) = (starts, top) else {
            i += 1;
            continue;
        };
        let mut j = i;
        let mut depth = 0usize;
        while j < b.len() {
            match b[j] {
                b'{' => depth += 1,
                b'}' if depth > 0 => depth -= 1,
                b'}' => break,
                b',' if depth > 0 => {}
                c if path_byte(c) => {}
                _ => break,
            }
            j += 1;
        }
        let mut tok = &line[i..j];
        while let Some(t) = tok.strip_suffix('.') {
            tok = t;
        }
        out.push(tok.to_string());
        i = j;
    }
    out
}

/// `{a,b}` lists expanded, left to right.
fn expand_braces(p: &str) -> Vec<String> {
    let Some(open) = p.find('{') else {
        return vec![p.to_string()];
    };
    let Some(len) = p[open..].find('}') else {
        return vec![p.to_string()];
    };
    let close = open + len;
    p[open + 1..close]
        .split(',')
        .flat_map(|alt| expand_braces(&format!("{}{alt}{}", &p[..open], &p[close + 1..])))
        .collect()
}

/// The files and directories under `root` that `rel` (components
/// separated by `/`, each a fnmatch pattern) names.
fn matches(root: &Path, rel: &str) -> Vec<PathBuf> {
    let mut found = vec![root.to_path_buf()];
    for comp in rel.split('/').filter(|c| !c.is_empty()) {
        let mut next = Vec::new();
        for dir in &found {
            if comp.contains(['*', '?', '[']) {
                let Ok(rd) = std::fs::read_dir(dir) else {
                    continue;
                };
                let mut names: Vec<_> = rd
                    .flatten()
                    .filter(|e| fnmatch(comp.as_bytes(), e.file_name().as_encoded_bytes()))
                    .map(|e| e.path())
                    .collect();
                names.sort();
                next.extend(names);
            } else if dir.join(comp).exists() {
                next.push(dir.join(comp));
            }
        }
        found = next;
    }
    if rel.ends_with('/') {
        found.retain(|p| p.is_dir());
    }
    found
}

/// One `.gitignore` line: the folder it is in (repository-relative, `""`
/// at the top) and the pattern.
struct Ignore {
    dir: String,
    pattern: String,
}

/// The `.gitignore` files of the repository (the top one and one level
/// down, where the repository keeps them).
fn ignores(root: &Path) -> Vec<Ignore> {
    let mut dirs = vec![String::new()];
    dirs.extend(TOP_DIRS.iter().map(|d| format!("{d}/")));
    let mut out = Vec::new();
    for dir in dirs {
        let Ok(text) = std::fs::read_to_string(root.join(&dir).join(".gitignore")) else {
            continue;
        };
        for l in text.lines().map(str::trim) {
            if !l.is_empty() && !l.starts_with('#') && !l.starts_with('!') {
                out.push(Ignore {
                    dir: dir.clone(),
                    pattern: l.to_string(),
                });
            }
        }
    }
    out
}

/// Whether git ignores `path` (the subset of gitignore(5) the repository
/// uses: a pattern without an inner `/` matches any component below its
/// folder, one with a leading `/` the first; a trailing `/` is dropped).
fn ignored(ignores: &[Ignore], path: &str) -> bool {
    ignores.iter().any(|ig| {
        let Some(rel) = path.strip_prefix(&ig.dir) else {
            return false;
        };
        let pat = ig.pattern.trim_end_matches('/');
        let comps: Vec<&str> = rel.split('/').filter(|c| !c.is_empty()).collect();
        match pat.strip_prefix('/') {
            Some(anchored) => comps
                .first()
                .is_some_and(|c| fnmatch(anchored.as_bytes(), c.as_bytes())),
            None => comps.iter().any(|c| fnmatch(pat.as_bytes(), c.as_bytes())),
        }
    })
}

/// README.md and docs/*.md, sorted.
fn doc_files(root: &Path) -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    docs.insert(0, root.join("README.md"));
    docs
}

#[test]
fn every_path_the_docs_name_exists() {
    let root = vm_testkit::paths::workspace_root();
    let ignores = ignores(&root);
    let mut checked = 0;
    let mut missing = Vec::new();
    for doc in doc_files(&root) {
        let text =
            std::fs::read_to_string(&doc).unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
        let name = doc
            .strip_prefix(&root)
            .unwrap_or(&doc)
            .display()
            .to_string();
        for (n, line) in text.lines().enumerate() {
            for tok in paths_in(line) {
                for p in expand_braces(&tok) {
                    if ignored(&ignores, &p) {
                        continue;
                    }
                    checked += 1;
                    if matches(&root, &p).is_empty() {
                        let what = if p == tok {
                            p
                        } else {
                            format!("{p} (of {tok})")
                        };
                        missing.push(format!("{name}:{}: {what}", n + 1));
                    }
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} paths found in the docs");
    assert!(
        missing.is_empty(),
        "paths named in the docs that do not exist:\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn tokens_as_the_docs_write_them() {
    assert_eq!(
        paths_in("`kmod/core/*.c` and vm-spec/tests/{verify,vm}.rs, then kmod/main.c."),
        [
            "kmod/core/*.c",
            "vm-spec/tests/{verify,vm}.rs",
            "kmod/main.c"
        ]
    );
    assert_eq!(
        paths_in("see [docs/testing.md](docs/testing.md#fuzz) and `compiler/src/lib.rs:42`"),
        ["docs/testing.md", "docs/testing.md", "compiler/src/lib.rs"]
    );
    // Not at the top: inside another path, a variable or `../shared`.
    assert!(
        paths_in("target/kernels/x ../shared/corpus/tests/x $ROOT/tests/x a/kmod/x").is_empty()
    );
    assert_eq!(paths_in("`tests/guest/run 'runok-*'`"), ["tests/guest/run"]);
    assert_eq!(paths_in("(`.ci/`)"), [".ci/"]);
    assert_eq!(
        expand_braces("vm-spec/include/stapvm/{abi,opcodes}.h"),
        [
            "vm-spec/include/stapvm/abi.h",
            "vm-spec/include/stapvm/opcodes.h"
        ]
    );
}

#[test]
fn globs_directories_and_build_products() {
    let root = vm_testkit::paths::workspace_root();
    assert!(!matches(&root, "kmod/core/*.c").is_empty());
    assert!(matches(&root, "kmod/core/*.nothing").is_empty());
    assert!(!matches(&root, "docs/").is_empty());
    assert!(
        matches(&root, "README.md/").is_empty(),
        "a file is not a directory"
    );
    let ig = ignores(&root);
    assert!(ignored(&ig, "kmod/stapvm.ko") && ignored(&ig, "kmod/core/vm.o"));
    assert!(ignored(&ig, "fuzz/corpus/parse/") && ignored(&ig, "fuzz/artifacts"));
    assert!(!ignored(&ig, "fuzz/fuzz_targets") && !ignored(&ig, "kmod/main.c"));
}
