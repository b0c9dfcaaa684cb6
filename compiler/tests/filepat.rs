//! Source-file patterns in function probe points (`kernel.function("*@fs/*.c")`):
//! the compiler accepts `FUNCPAT@FILEPAT`, records it in the probe target
//! for the loader (which reads the file names from the kernel's DWARF
//! debuginfo), refuses a line or offset, and `stapvm check` matches the
//! function part against kallsyms.
mod common;
use compiler::symbols::KernelSymbols;
use compiler::{check_for, compile, Options, Target};
use vm_spec::abi;
use vm_spec::program::{split_source_file, ProbeTarget};

fn example_source() -> String {
    std::fs::read_to_string(vm_testkit::paths::corpus(
        "stp-examples/profiling__functioncallcount.stp",
    )).unwrap_or_else(|_| {
        // The example's probes, for a machine without the corpus.
        "probe kernel.function(@1).call { called[ppfunc()] <<< 1 }\n\
         global called\n\
         probe end { foreach (fn in called-) printf(\"%s %d\\n\", fn, @count(called[fn])) exit() }\n"
            .to_string()
    })
}

fn target_of(src: &str, args: &[&str]) -> Result<ProbeTarget, String> {
    let opts = Options {
        args: args.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    compile("x.stp", src, &opts)
        .map(|c| c.program.probes[0].target.clone())
        .map_err(|f| f.rendered)
}

fn sym(name: &str) -> ProbeTarget {
    ProbeTarget::Symbol {
        name: name.into(),
        offset: 0,
    }
}

#[test]
fn the_example_compiles_with_a_file_pattern_and_records_it() {
    let opts = Options {
        args: vec!["*@fs/*.c".into()],
        ..Default::default()
    };
    let c = compile("functioncallcount.stp", &example_source(), &opts)
        .unwrap_or_else(|f| panic!("{}", f.rendered));
    let p = &c.program.probes[0];
    assert_eq!(p.target, sym("*@fs/*.c"));
    assert_eq!(u32::from(p.kind), abi::STP_PROBE_KPROBE);
    assert_eq!(p.display, "kernel.function(\"*@fs/*.c\").call");
    // The .stpb keeps it for the loader.
    let back = vm_spec::container::read(&vm_spec::container::write(&c.program)).unwrap();
    assert_eq!(back.probes[0].target, sym("*@fs/*.c"));
    // And the image builds once the loader picks the functions.
    common::image(&c.program);
}

#[test]
fn file_patterns_in_every_function_point_form() {
    let t = |pp: &str| target_of(&format!("probe {pp} {{ }}"), &[]);
    assert_eq!(
        t("kernel.function(\"vfs_read@fs/read_write.c\")"),
        Ok(sym("vfs_read@fs/read_write.c"))
    );
    assert_eq!(
        t("kernel.function(\"*@fs/*.c\").return"),
        Ok(sym("*@fs/*.c"))
    );
    assert_eq!(
        t("kprobe.function(\"vfs_*@*/read_write.c\")"),
        Ok(sym("vfs_*@*/read_write.c"))
    );
    assert_eq!(
        t("module(\"ext-4\").function(\"ext4_*@fs/ext4/*.c\")"),
        Ok(sym("ext_4:ext4_*@fs/ext4/*.c"))
    );
    let src = "probe kernel.function(\"*@fs/*.c\").return { }";
    let c = compile("x.stp", src, &Options::default()).unwrap();
    assert_eq!(
        u32::from(c.program.probes[0].kind),
        abi::STP_PROBE_KRETPROBE
    );
    assert_eq!(split_source_file("m:f*@fs/*.c"), ("m:f*", Some("fs/*.c")));
    assert_eq!(split_source_file("vfs_read"), ("vfs_read", None));
}

#[test]
fn lines_offsets_and_bad_file_patterns_are_refused() {
    let t = |f: &str| target_of(&format!("probe kernel.function(\"{f}\") {{ }}"), &[]);
    for f in [
        "vfs_read@fs/read_write.c:100",
        "vfs_read@fs/read_write.c+3",
        "vfs_read+4",
        "*@fs/*.c@x",
    ] {
        let e = t(f).unwrap_err();
        assert!(
            e.contains("not supported yet: function probes with a file, line or offset"),
            "{f}: {e}"
        );
    }
    for f in ["vfs_read@", "vfs_read@fs/a b.c"] {
        let e = t(f).unwrap_err();
        assert!(e.contains("invalid source file pattern"), "{f}: {e}");
    }
    let e = t("@fs/*.c").unwrap_err();
    assert!(e.contains("invalid kernel symbol name \"\""), "{e}");
}

#[test]
fn check_matches_the_function_part_against_kallsyms() {
    let target = Target {
        kernel_symbols: Some(std::sync::Arc::new(KernelSymbols::from_kallsyms(
            "ffffffff81001000 T vfs_read\nffffffff81002000 t do_sys_open\n",
        ))),
        ..Target::default()
    };
    let check = |src: &str| check_for("x.stp", src, &Options::default(), &target);
    assert!(check("probe kernel.function(\"vfs_*@fs/*.c\") { }").is_ok());
    assert!(check("probe kernel.function(\"vfs_read@fs/read_write.c\") { }").is_ok());
    let e = check("probe kernel.function(\"nope*@fs/*.c\") { }").unwrap_err();
    assert!(e.rendered.contains("no match"), "{}", e.rendered);
    assert!(check("probe kernel.function(\"nope*@fs/*.c\")? { }").is_ok());
}

#[test]
fn target_variables_of_one_function_in_a_file() {
    let src = "probe kernel.function(\"vfs_read@fs/read_write.c\") { println($count) }";
    let c = compile("x.stp", src, &Options::default()).unwrap_or_else(|f| panic!("{}", f.rendered));
    let sites: Vec<_> = c
        .program
        .target_vars
        .iter()
        .map(|t| t.site.clone())
        .collect();
    assert_eq!(
        sites,
        [vm_spec::program::TargetSite::Function("vfs_read".into())]
    );
    // A pattern: the loader resolves $count for each function it expands
    // to (userspace/src/targetvars.rs), so the site keeps the pattern.
    let c = compile(
        "x.stp",
        "probe kernel.function(\"vfs_*@fs/*.c\") { println($count) }",
        &Options::default(),
    )
    .unwrap_or_else(|f| panic!("{}", f.rendered));
    assert_eq!(
        c.program.target_vars[0].site,
        vm_spec::program::TargetSite::Function("vfs_*".into())
    );
}

#[test]
fn a_pattern_of_blocklisted_files_only_is_stap_no_match() {
    // semko/fortyfive.stp: every function of kernel/kprobes.c is
    // blocklisted, whatever the kernel.
    let e = target_of("probe kernel.function(\"*@kernel/kprobes.c\").call {}", &[]).unwrap_err();
    assert!(
        e.contains("semantic error: while resolving probe point") && e.contains("no match"),
        "{e}"
    );
    // Optional: left to the loader (which drops it with a warning).
    assert_eq!(
        target_of("probe kernel.function(\"*@kernel/kprobes.c\")? {}", &[]),
        Ok(sym("*@kernel/kprobes.c"))
    );
    // A glob may select other files.
    assert_eq!(
        target_of("probe kernel.function(\"*@kernel/*.c\") {}", &[]),
        Ok(sym("*@kernel/*.c"))
    );
}
