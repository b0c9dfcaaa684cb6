//! stap's `(similar: …)` suggestions (`compiler::suggest`) on misspelt
//! probe points (alias families, built-in points, kernel tapset families)
//! and functions (the script's, the library's, the built-ins).
mod common;
use common::{build, fail};

#[test]
fn misspelt_points_get_stap_s_suggestions() {
    // An alias family: the names that continue the matched prefix.
    let e = fail("probe my.read = begin { }\nprobe my.write = begin { }\nprobe my.reed { }");
    assert!(
        e.contains("probe point mismatch (similar: read, write): identifier 'reed'"),
        "{e}"
    );
    // A built-in point: the components that fit there.
    let e = fail("probe kernel.funtion(\"vfs_read\") { }");
    assert!(e.contains("(similar: function, "), "{e}");
    let e = fail("probe timer.sek(1) { }");
    assert!(e.contains("(similar: sec, "), "{e}");
    // A kernel tapset family counts as a first component.
    let e = fail("probe vfss.read { }");
    assert!(e.contains("(similar: vfs"), "{e}");
    // An optional use of no alias is dropped silently, as in stap.
    build("probe my.read = begin { }\nprobe my.reed?, begin { }");
}

#[test]
fn misspelt_functions_get_stap_s_suggestions() {
    let e = fail("probe begin { prnitln(1) }");
    assert!(
        e.contains("unresolved function prnitln (similar: println, "),
        "{e}"
    );
    let e = fail("function my_helper() { return 1 }\nprobe begin { my_helpr() }");
    assert!(e.contains("(similar: my_helper"), "{e}");
    // Library (tapset) functions too, not only the ones a script pulled in.
    let e = fail("probe begin { task_stat(0) }");
    assert!(e.contains("(similar: task_state"), "{e}");
}
