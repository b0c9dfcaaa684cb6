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

    // Without `c-core` (vm-refvm's view of the ABI) no C is compiled.
    if env::var_os("CARGO_FEATURE_C_CORE").is_some() {
        build_core(&out_dir);
    }
}

/// Compiles the C VM core (kmod/core/*.c, the same files stapvm.ko builds)
/// with the user-space environment (csrc/stp_env.h, csrc/*.c) into a
/// static library, warnings as errors, and bindgens its API (stp_core.h)
/// into core_ffi.rs. The ABI types it uses come from `crate::abi`.
fn build_core(out_dir: &std::path::Path) {
    println!("cargo:rerun-if-changed=../kmod/core");
    println!("cargo:rerun-if-changed=csrc");
    let mut sources = Vec::new();
    for dir in ["../kmod/core", "csrc"] {
        let mut files: Vec<PathBuf> = fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("read {dir}: {e}"))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "c"))
            .collect();
        files.sort();
        sources.extend(files);
    }
    let mut build = cc::Build::new();
    build
        .files(&sources)
        .include("csrc")
        .include("include")
        .include("../kmod/core")
        .flag("-std=gnu11")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .flag_if_supported("-Wno-unused-parameter");
    instrument(&mut build);
    build.compile("stapvm_core");

    let abi_types = [
        "stp_insn",
        "stp_image_hdr",
        "stp_section_desc",
        "stp_handler_desc",
        "stp_probe_desc",
        "stp_str_desc",
        "stp_format_desc",
        "stp_ring_cons",
        "stp_ring_prod",
        "stp_opcode_info",
        "stp_helper_info",
    ];
    let mut b = bindgen::Builder::default()
        .header("../kmod/core/stp_core.h")
        .clang_arg("-Icsrc")
        .clang_arg("-Iinclude")
        .allowlist_function(
            "stp_(verify|run|ring_reserve|ring_commit|format|host_fail_next_allocs|map_size|map_init|map_read|iters_init)",
        )
        .allowlist_type("stp_(prog|verify_result|ring|vm|frame|run_ctx|fmt_arg|host_env|host_mem|map|iter)")
        .allowlist_var("stp_(verr|rte)_info")
        .prepend_enum_name(false)
        .derive_default(true)
        .layout_tests(true)
        .raw_line("use crate::abi::*;");
    for t in abi_types {
        b = b.blocklist_type(t);
    }
    b.generate()
        .expect("bindgen failed on kmod/core/stp_core.h")
        .write_to_file(out_dir.join("core_ffi.rs"))
        .expect("write core_ffi.rs");
}

/// Instruments the C core for sanitizers and fuzzing. RUSTFLAGS reach
/// only rustc, never the C compiler, so under `cargo fuzz` (which passes
/// `-Zsanitizer=address` and `--cfg fuzzing`) the C code would otherwise
/// be neither checked by ASan nor seen by libFuzzer's coverage. Cargo
/// hands the rustc cfgs to build scripts as `CARGO_CFG_*`, so:
///
/// - `STAPVM_SANITIZE=address[,undefined...]` adds `-fsanitize=<list>`;
///   when unset, the list is taken from `cfg(sanitize = "...")` (set by
///   `-Zsanitizer=`), so `cargo fuzz` gets an ASan-built core for free.
/// - `STAPVM_FUZZ_COVERAGE=1`, or `cfg(fuzzing)`, adds clang's
///   `-fsanitize-coverage=inline-8bit-counters,pc-table,trace-cmp`, the
///   instrumentation libFuzzer reads (the same as rustc's under cargo
///   fuzz). It needs clang: the compiler is switched to `clang` unless CC
///   names one.
fn instrument(build: &mut cc::Build) {
    println!("cargo:rerun-if-env-changed=STAPVM_SANITIZE");
    println!("cargo:rerun-if-env-changed=STAPVM_FUZZ_COVERAGE");
    let sanitize = env::var("STAPVM_SANITIZE")
        .ok()
        .or_else(|| env::var("CARGO_CFG_SANITIZE").ok())
        .filter(|s| !s.is_empty());
    let coverage = env::var("STAPVM_FUZZ_COVERAGE").is_ok_and(|v| v == "1")
        || env::var("CARGO_CFG_FUZZING").is_ok();
    if coverage && env::var("CC").is_err() {
        build.compiler("clang");
    }
    if let Some(list) = &sanitize {
        build
            .flag(format!("-fsanitize={list}"))
            .flag("-fno-omit-frame-pointer")
            .flag("-fno-sanitize-recover=all");
    }
    if coverage {
        build.flag("-fsanitize-coverage=inline-8bit-counters,pc-table,trace-cmp");
    }
    if sanitize.is_some() || coverage {
        println!(
            "cargo:warning=C core instrumented: sanitize={} coverage={coverage}",
            sanitize.as_deref().unwrap_or("none")
        );
    }
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
