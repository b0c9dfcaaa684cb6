//! The JSON and Prometheus macros of stap's tapset (compiler/src/parse/
//! tapset.stpm): the text they produce, written through their `_to` forms
//! into a string variable and run in user space on the C core, and the
//! JSON endpoint's files and metadata (tapset/kernel/json.stp); the
//! listings of a probe's values: execve's `args` / `env_str`, and the
//! `$$parms` family.
mod common;

use common::RunOptions;

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
fn json_endpoint_is_two_procfs_files() {
    // `probe json_data` is data.json; metadata.json comes with it.
    let c = common::build("probe json_data { @json_output_data_start @json_output_data_end }\n");
    let mut files: Vec<(u8, String, u32)> = c
        .program
        .probes
        .iter()
        .filter_map(|p| match &p.target {
            vm_spec::program::ProbeTarget::File { name, .. } => {
                Some((p.kind, name.clone(), p.maxactive))
            }
            _ => None,
        })
        .collect();
    files.sort();
    let r = vm_spec::abi::STP_PROBE_PROCFS_READ as u8;
    assert_eq!(
        files,
        [
            (r, "data.json".to_string(), 8192),
            (r, "metadata.json".to_string(), 8192)
        ]
    );
    common::check(&c.program);
}

#[test]
fn json_metadata_of_metrics_and_arrays() {
    let out = run(r#"probe begin {
  json_add_numeric_metric("reads", "reads of \"data\"", "count")
  json_add_string_metric("name", "")
  json_add_array("net", "")
  json_add_array_numeric_metric("net", "packets", "", "count")
  print(__json_metric_meta(0, "reads", "") . "\n")
  print(__json_metric_meta(0, "name", "") . "\n")
  print(__json_array_head("net") . "\n")
  print(__json_metric_meta(1, "net", "packets") . "\n")
  print(__json_metric_meta(1, "net", "__id") . "\n")
  try { json_add_string_metric("name", "again") } catch (e) { println(e) }
}"#);
    let want = r#"    {
      "name": "reads",
      "pointer": "/reads",
      "type": "integer",
      "description": "reads of \"data\"",
      "units": "count"
    }
    {
      "name": "name",
      "pointer": "/name",
      "type": "string"
    }
    {
      "name": "net",
      "pointer": "/net",
      "type": "array",
      "index": "/__id",
      "metrics": [
        {
          "name": "packets",
          "pointer": "/packets",
          "type": "integer",
          "units": "count"
        }
        {
          "name": "__id",
          "pointer": "/__id",
          "type": "string"
        }
Metric 'name' already exists
"#;
    assert_eq!(out, want);
}

#[test]
fn prometheus_probe_body_with_macros_compiles() {
    let c = common::build(
        "global a\nprobe timer.s(1) { a[1,2]++ }\nprobe prometheus { @prometheus_dump_array2_map_unquoted(a, \"n\", \"x\", \"y\", sprint, sprint, sprint) @prometheus_dump_array8(a, \"n\", \"1\", \"2\", \"3\", \"4\", \"5\", \"6\", \"7\", \"8\") }\n",
    );
    assert!(!c.program.probes.is_empty());
}

/// User memory at `common::USER` for an execve: the path at +0, argv
/// (`ls -l ""`) at +64, envp (two strings) at +128, the strings at +16..
fn execve_memory() -> Vec<u8> {
    let mut m = vec![0u8; 192];
    let put = |m: &mut Vec<u8>, at: usize, b: &[u8]| m[at..at + b.len()].copy_from_slice(b);
    put(&mut m, 0, b"/bin/ls\0");
    put(&mut m, 16, b"ls\0");
    put(&mut m, 24, b"-l\0");
    put(&mut m, 32, b"\0");
    put(&mut m, 40, b"A=1\0");
    let u = common::USER;
    for (i, off) in [16u64, 24, 32].iter().enumerate() {
        put(&mut m, 64 + 8 * i, &(u + off).to_le_bytes());
    }
    for (i, off) in [40u64, 40].iter().enumerate() {
        put(&mut m, 128 + 8 * i, &(u + off).to_le_bytes());
    }
    m
}

/// Fires the only probe of `src` at an execve entry whose registers point
/// at `execve_memory()`; the output.
fn run_execve(src: &str, args: [i64; 6]) -> String {
    let c = common::build(src);
    assert_eq!(c.program.probes.len(), 1, "{src}");
    let opts = RunOptions {
        env: common::syscall_env(59, args, &execve_memory()),
        fire: vec![0],
        ..Default::default()
    };
    common::run_program(&c.program, &opts)
        .expect("verifies")
        .ok()
}

#[test]
fn execve_args_and_env_str_are_stap_s() {
    let u = common::USER as i64;
    let src =
        "probe syscall.execve { printf(\"%s|%s|%s|%s\\n\", filename, args, env_str, argstr) }";
    assert_eq!(
        run_execve(src, [u, u + 64, u + 128, 0, 0, 0]),
        "\"/bin/ls\"|[\"ls\", \"-l\", \"\"]|[/* 2 vars */]|\"/bin/ls\", [\"ls\", \"-l\", \"\"], [/* 2 vars */]\n"
    );
    // NULL vectors; an empty environment; nd_syscall is the same alias.
    let src = "probe nd_syscall.execve { printf(\"%s|%s\\n\", args, env_str) }";
    assert_eq!(
        run_execve(src, [u, 0, u + 144, 0, 0, 0]),
        "NULL|[/* 0 vars */]\n"
    );
    // One variable: "var", not "vars".
    assert_eq!(
        run_execve(src, [u, u + 88, u + 136, 0, 0, 0]),
        "[]|[/* 1 var */]\n"
    );
}

#[test]
fn quotactl_special_is_a_pointer_and_utime_filename_a_string() {
    // stap: quotactl's `special` is the address, `special_str` the string;
    // utime's `filename` the string, `filename_uaddr` the address.
    let src = "probe syscall.quotactl { printf(\"%d %s\\n\", special, special_str) }";
    let c = common::build(src);
    let u = common::USER as i64;
    let opts = RunOptions {
        env: common::syscall_env(179, [0, u, 0, 0, 0, 0], &execve_memory()),
        fire: vec![0],
        ..Default::default()
    };
    let out = common::run_program(&c.program, &opts)
        .expect("verifies")
        .ok();
    assert_eq!(out, format!("{u} \"/bin/ls\"\n"));
    let src = "probe syscall.utime { printf(\"%d %s\\n\", filename_uaddr, filename) }";
    let c = common::build(src);
    let opts = RunOptions {
        env: common::syscall_env(132, [u, 0, 0, 0, 0, 0], &execve_memory()),
        fire: vec![0],
        ..Default::default()
    };
    let out = common::run_program(&c.program, &opts)
        .expect("verifies")
        .ok();
    assert_eq!(out, format!("{u} \"/bin/ls\"\n"));
}

#[test]
fn a_parameter_called_name_is_name_uaddr_and_name_str() {
    // setxattr(path, name, value, size, flags): `name` stays the alias's.
    let u = common::USER as i64;
    let src = "probe syscall.setxattr { printf(\"%s %d %s\\n\", name, name_uaddr, name_str) }";
    let c = common::build(src);
    let opts = RunOptions {
        env: common::syscall_env(188, [0, u + 40, 0, 0, 0, 0], &execve_memory()),
        fire: vec![0],
        ..Default::default()
    };
    let out = common::run_program(&c.program, &opts)
        .expect("verifies")
        .ok();
    assert_eq!(out, format!("setxattr {} \"A=1\"\n", u + 40));
    // renameat's names are addresses, their strings `_str`.
    let src = "probe syscall.renameat { printf(\"%d %s\\n\", newname, newname_str) }";
    let c = common::build(src);
    let opts = RunOptions {
        env: common::syscall_env(264, [0, 0, 0, u + 16, 0, 0], &execve_memory()),
        fire: vec![0],
        ..Default::default()
    };
    let out = common::run_program(&c.program, &opts)
        .expect("verifies")
        .ok();
    assert_eq!(out, format!("{} \"ls\"\n", u + 16));
}

#[test]
fn parms_is_a_chain_over_the_parameters_the_loader_names() {
    // Six parameters at most, each a `$__stp_parm<i>` use and four name
    // words (`@defined($__stp_parm<i>->__stp_name<w>)`), all resolved on
    // the target (userspace/src/targetvars.rs runs the result).
    let c = common::build("probe kernel.function(\"vfs_read\") { print($$parms) }");
    let tvs = &c.program.target_vars;
    for i in 0..6 {
        let parm = format!("__stp_parm{i}");
        assert!(
            tvs.iter().any(|t| t.name == parm && t.fields.is_empty()),
            "{parm}"
        );
        for w in 0..4 {
            let word = format!("__stp_name{w}");
            assert!(tvs
                .iter()
                .any(|t| t.name == parm && t.fields == [word.clone()]));
        }
    }
    assert!(!tvs.iter().any(|t| t.name == "__stp_parm6"));
    // $$vars is the same list, $$locals empty: no new variables.
    let c = common::build("probe kernel.function(\"vfs_read\") { print($$locals) }");
    assert!(c.program.target_vars.is_empty());
    // Without a function, nothing to list: "".
    assert_eq!(
        run("probe begin { printf(\"[%s][%s]\", $$locals, $$vars) }"),
        "[][]"
    );
}

#[test]
fn return_is_the_return_value_in_hex() {
    let c = common::build("probe kernel.function(\"vfs_read\").return { print($$return) }");
    let opts = RunOptions {
        env: vm_testkit::HostEnv {
            retval: 4321,
            ..Default::default()
        },
        fire: vec![c.program.probes[0].handler],
        ..Default::default()
    };
    let out = common::run_program(&c.program, &opts)
        .expect("verifies")
        .ok();
    assert_eq!(out, "return=0x10e1");
}

#[test]
fn pretty_printed_listings_pretty_print_each_parameter() {
    use vm_spec::program::RelocKind;
    // `$$parms$` / `$$vars$$`: each of the six parameter slots printed
    // with `%s` of its PRETTY value; the loader builds one node tree each.
    for (src, deep) in [("$$parms$", false), ("$$vars$$", true)] {
        let c = common::build(&format!(
            "probe kernel.function(\"vfs_read\") {{ print({src}) }}"
        ));
        let pretty: Vec<bool> = c
            .program
            .target_vars
            .iter()
            .flat_map(|tv| &tv.relocs)
            .filter_map(|r| match r.kind {
                RelocKind::Pretty { deep } => Some(deep),
                _ => None,
            })
            .collect();
        assert_eq!(pretty, vec![deep; 6], "{src}");
        assert!(c.program.formats.iter().any(|f| f.text == "%s=%s"), "{src}");
    }
    // `$$locals$` is empty, as `$$locals`; `$$return$` is `return=%s` of
    // `$return$`: RETVAL and a use named `return` carrying the node.
    let out =
        run("probe begin { print(\"\") } probe kernel.function(\"vfs_read\") { print($$locals$) }");
    assert_eq!(out, "");
    let c = common::build("probe kernel.function(\"vfs_read\").return { print($$return$) }");
    let tv = &c.program.target_vars[0];
    assert_eq!(tv.name, "return");
    assert_eq!(tv.relocs.len(), 1);
    assert_eq!(tv.relocs[0].kind, RelocKind::Pretty { deep: false });
    assert!(c.program.formats.iter().any(|f| f.text == "return=%s"));
}

#[test]
fn parm_name_decodes_the_little_endian_words() {
    // "dfd" and a 12-byte name across two words; a zero word ends it.
    let w0 = i64::from_le_bytes(*b"a_longer");
    let w1 = i64::from_le_bytes(*b"_one\0\0\0\0");
    let out = run(&format!(
        "probe begin {{ printf(\"%s|%s|\", __stp_parm_name({}, 0, 0, 0), __stp_parm_name({w0}, {w1}, 0, 0)) }}",
        i64::from_le_bytes(*b"dfd\0\0\0\0\0")
    ));
    assert_eq!(out, "dfd|a_longer_one|");
}

#[test]
fn buildok_pretty_compiles_with_a_pretty_use_per_suffix() {
    use vm_spec::program::RelocKind;
    let p = vm_testkit::paths::corpus("stp-testsuite/buildok/pretty.stp");
    let Ok(src) = std::fs::read_to_string(&p) else {
        return;
    };
    let c = compiler::compile("pretty.stp", &src, &compiler::Options::default())
        .unwrap_or_else(|e| panic!("{}", e.rendered));
    // 8 in begin (@cast), 8 in the kernel probe: `$` and `$$` alternate.
    let deep: Vec<bool> = c
        .program
        .target_vars
        .iter()
        .flat_map(|tv| &tv.relocs)
        .filter_map(|r| match r.kind {
            RelocKind::Pretty { deep } => Some(deep),
            _ => None,
        })
        .collect();
    assert_eq!(deep.len(), 16, "{deep:?}");
    assert_eq!(deep.iter().filter(|d| **d).count(), 8);
}
