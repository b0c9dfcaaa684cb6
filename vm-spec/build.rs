//! Build script of vm-spec: turns the ABI header (include/stapvm/*.h) into
//! Rust, so no opcode, helper, limit, error code or layout is written twice:
//! bindgen makes the structs and enums (abi.rs); the C preprocessor expands
//! the X-macro tables into Rust tables (tables.rs) and the ioctl numbers.
use std::env;
use std::fs;
use std::path::PathBuf;

const MARKER: &str = "STAPVM_RUST_TABLES_BEGIN";

fn main() {
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    println!("cargo:rerun-if-changed=include/stapvm");
    println!("cargo:rerun-if-changed=build/tables.rs.in");

    let bindings = bindgen::Builder::default()
        .header("include/stapvm/bindgen.h")
        .clang_arg("-Iinclude/stapvm")
        .allowlist_type("stp_.*")
        .allowlist_var("STP_.*")
        .prepend_enum_name(false)
        .derive_default(true)
        .layout_tests(true)
        .generate()
        .expect("bindgen failed on include/stapvm/bindgen.h");
    bindings
        .write_to_file(out_dir.join("abi.rs"))
        .expect("write abi.rs");

    // The preprocessor wants a .c name; copy the template.
    let tmpl = out_dir.join("tables.c");
    fs::copy("build/tables.rs.in", &tmpl).expect("copy template");
    let expanded = cc::Build::new()
        .file(&tmpl)
        .include("include/stapvm")
        .cargo_metadata(false)
        .expand();
    let text = String::from_utf8(expanded).expect("expanded tables are UTF-8");
    let start = text.find(MARKER).expect("marker in expanded tables") + MARKER.len();
    let body: String = text[start..]
        .lines()
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join(" ");
    // ioctl numbers expand to C expressions with sizeof and char literals;
    // rewrite those few C-isms so the same expression is Rust.
    let mut parts = body.split("IOCTL ");
    let mut body = parts
        .next()
        .unwrap_or_default()
        .replace(" pub const", "\npub const");
    for stmt in parts {
        let (expr, tail) = stmt.split_once(';').expect("IOCTL ends in ;");
        body.push_str(&format!("\npub const {};{}", c_expr_to_rust(expr), tail));
    }
    fs::write(out_dir.join("tables.rs"), body).expect("write tables.rs");
}

/// Rewrites an expanded `_IOWR(...)` expression into Rust: `sizeof(struct
/// x)` becomes `size_of::<abi::x>()`, `'S'` a byte, `2U` a u64 literal.
fn c_expr_to_rust(expr: &str) -> String {
    let (name, value) = expr.split_once('=').expect("IOCTL NAME = expr");
    let mut out = String::new();
    let compact: String = value.split_whitespace().collect();
    let mut rest = compact.as_str();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("sizeof(struct") {
            let end = r.find(')').expect("sizeof close");
            out.push_str(&format!(
                "(::core::mem::size_of::<crate::abi::{}>() as u64)",
                r[..end].trim()
            ));
            rest = &r[end + 1..];
        } else if rest.starts_with('\'') && rest.len() >= 3 && rest.as_bytes()[2] == b'\'' {
            out.push_str(&format!("(b'{}' as u64)", &rest[1..2]));
            rest = &rest[3..];
        } else if rest.as_bytes()[0].is_ascii_digit() {
            let end = rest
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(rest.len());
            let digits = rest[..end].trim_end_matches(['U', 'u', 'L', 'l']);
            out.push_str(&format!("{digits}u64"));
            rest = &rest[end..];
        } else {
            let ch = rest.chars().next().expect("non-empty");
            out.push(ch);
            rest = &rest[ch.len_utf8()..];
        }
    }
    format!("{}: u64 = {}", name.trim(), out)
}
