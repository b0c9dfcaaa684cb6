//! The JSON and Prometheus macros of stap's tapset (compiler/src/parse/
//! tapset.stpm): the text they produce, written through their `_to` forms
//! into a string variable and run in user space on the C core, and the
//! refusal of the JSON endpoint (`probe json_data`, a procfs probe).
mod common;

use common::{first_semantic_error, RunOptions};

/// The output of a begin-only script run in user space.
fn run(src: &str) -> String {
    let r = common::run_begin_end(src, &RunOptions::default());
    r.ok()
}

#[test]
fn prometheus_lines_quote_the_keys() {
    let out = run(r#"global a
probe begin {
  a["x\"y", 3] = 7
  @__prometheus_dump2_to(s, a, "m", "k1", "k2", sprint, sprint, sprint, string_quoted)
  print(s)
}"#);
    assert_eq!(out, "m{k1=\"x\\\"y\",k2=\"3\"} 7\n");
}

#[test]
fn prometheus_unquoted_and_map_forms() {
    let out = run(r#"global a
probe begin {
  a["\"p\""] = 10
  @__prometheus_dump1_to(s, a, "usage", "path", sprint, sprint, sprint)
  @__prometheus_dump1_to(t, a, "hex", "path", sprintf_hex, sprint, string_quoted)
  print(s, t)
}
function sprintf_hex:string(v) { return sprintf("%x", v) }"#);
    assert_eq!(out, "usage{path=\"p\"} 10\nhex{path=\"\\\"p\\\"\"} a\n");
}

#[test]
fn json_object_with_scalars_and_arrays() {
    let out = run(r#"probe begin {
  @__json_output_data_start_to(s)
  @__json_output_value_to(s, "numeric", sprint(1))
  @__json_output_array_value_to(s, "array", "0", "numeric", sprint(2))
  @__json_output_array_value_to(s, "array", "0", "string", "\"bar\"")
  @__json_output_array_value_to(s, "array", "1", "numeric", sprint(3))
  @__json_output_value_to(s, "string", "\"foo\"")
  @__json_output_data_end_to(s)
  print(s)
}"#);
    let want = "{\n  \"numeric\": 1,\n  \"array\": [\n    {\n      \"__id\": \"0\",\n      \"numeric\": 2,\n      \"string\": \"bar\"\n    },\n    {\n      \"__id\": \"1\",\n      \"numeric\": 3\n    }\n  ],\n  \"string\": \"foo\"\n}\n";
    assert_eq!(out, want);
}

#[test]
fn json_endpoint_is_a_procfs_refusal() {
    let e =
        first_semantic_error("probe json_data { @json_output_data_start @json_output_data_end }\n");
    assert!(
        e.starts_with("semantic error: not supported yet: procfs probes (json_data"),
        "{e}"
    );
    let e = first_semantic_error("probe begin { json_set_prefix(\"p\") }\n");
    assert!(
        e.contains(
            "not supported yet: function json_set_prefix() (the JSON endpoint is a procfs probe)"
        ),
        "{e}"
    );
}

#[test]
fn prometheus_probe_body_with_macros_compiles() {
    let c = common::build(
        "global a\nprobe timer.s(1) { a[1,2]++ }\nprobe prometheus { @prometheus_dump_array2_map_unquoted(a, \"n\", \"x\", \"y\", sprint, sprint, sprint) @prometheus_dump_array8(a, \"n\", \"1\", \"2\", \"3\", \"4\", \"5\", \"6\", \"7\", \"8\") }\n",
    );
    assert!(!c.program.probes.is_empty());
}
