//! The stap command-line options that reach the compiler through its
//! `Target`: `-G NAME=VALUE` (a global's initial value, compiled in), `-u`
//! (no elision), `-I DIR` (user tapset files, `passes::usertapset`) and
//! `--compatible` (`systemtap_v`). Programs are run on the C core in user
//! space to see what the handlers print.
mod common;
use compiler::{compile_for, Options, TapsetFile, Target};

fn with(f: impl FnOnce(&mut Target)) -> Target {
    let mut t = Target::default();
    f(&mut t);
    t
}

fn output(src: &str, t: &Target) -> String {
    let c = compile_for("x.stp", src, &Options::default(), t)
        .unwrap_or_else(|e| panic!("{}", e.rendered));
    common::run_program(&c.program, &common::RunOptions::default())
        .expect("loads")
        .ok()
}

fn error(src: &str, t: &Target) -> String {
    compile_for("x.stp", src, &Options::default(), t)
        .map(|_| ())
        .expect_err("must not compile")
        .rendered
}

fn gopts(g: &[&str]) -> Target {
    with(|t| t.global_inits = g.iter().map(|s| s.to_string()).collect())
}

#[test]
fn g_sets_numbers_and_strings() {
    let src = "global size = 10, name = \"x\", neg\n\
               probe begin { printf(\"%d %s %d\\n\", size, name, neg) }";
    assert_eq!(output(src, &Target::default()), "10 x 0\n");
    assert_eq!(
        output(src, &gopts(&["size=65536", "name=hello.world", "neg=-5"])),
        "65536 hello.world -5\n"
    );
    // The kernel's reading of numbers: 0x hex, 0 octal; 0 replaces an
    // initialiser.
    assert_eq!(output(src, &gopts(&["size=0x1f", "neg=017"])), "31 x 15\n");
    assert_eq!(output(src, &gopts(&["size=0"])), "0 x 0\n");
    // A string global takes digits as text.
    assert_eq!(output(src, &gopts(&["name=42"])), "10 42 0\n");
}

#[test]
fn g_errors_are_stap_s() {
    let src = "global size, a\nprobe begin { a[1] = 2; printf(\"%d\", size) }";
    let e = error(src, &gopts(&["size=abc"]));
    assert_eq!(
        e,
        "ERROR: -G size=abc: 'abc' invalid for parameter 'size' (a number: decimal, 0x hex or 0 octal)\n"
    );
    let e = error(src, &gopts(&["nosuch=1"]));
    assert!(
        e.starts_with("ERROR: -G nosuch=1: unknown parameter 'nosuch'"),
        "{e}"
    );
    let e = error(src, &gopts(&["a=1"]));
    assert!(e.contains("not a scalar"), "{e}");
    let e = error(src, &gopts(&["size=1 2"]));
    assert_eq!(
        e,
        "ERROR: Safety pattern mismatch for -G parameter ('size=1 2' vs. \
         '^[a-z_][a-z0-9_]*=[a-z0-9_.-]+$') rc=1\n"
    );
}

#[test]
fn u_keeps_unused_code_checked() {
    // A type error in a function nothing calls: stap finds it only with -u.
    let src = "function f() { x = 1; x = \"a\" }\nglobal unused\nprobe begin { exit() }";
    let t = Target::default();
    let plain = compile_for("x.stp", src, &Options::default(), &t).unwrap();
    assert!(
        plain
            .warnings
            .iter()
            .any(|w| w.contains("Eliding unused variable 'unused'")),
        "{:?}",
        plain.warnings
    );
    let u = with(|t| t.unelided = true);
    let e = error(src, &u);
    assert!(e.contains("type mismatch"), "{e}");
    // Without the error, -u compiles the function and warns of nothing.
    let ok = "function f() { return 1 }\nglobal unused\nprobe begin { exit() }";
    let c = compile_for("x.stp", ok, &Options::default(), &u).unwrap();
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let plain = compile_for("x.stp", ok, &Options::default(), &t).unwrap();
    assert!(c.program.handlers.len() > plain.program.handlers.len());
    // stap -u does not reduce probes, so nothing is "no probes found".
    let empty = "probe begin { 1 }";
    assert!(error(empty, &t).contains("no probes found"));
    compile_for("x.stp", empty, &Options::default(), &u).unwrap();
}

fn tapsets(files: &[(&str, &str)]) -> Target {
    with(|t| {
        t.tapset_files = files
            .iter()
            .map(|(n, s)| TapsetFile {
                name: n.to_string(),
                text: s.to_string(),
            })
            .collect()
    })
}

#[test]
fn i_tapsets_give_functions_globals_and_their_probes() {
    let t = tapsets(&[
        (
            "tapset/cursor.stp",
            "function cursor_move(x:long, y:long) { printf(\"\\\\033[%d;%dH\", y, x) }\n",
        ),
        (
            "tapset/tty.stp",
            "global GM_row\nprobe begin(-100) { GM_row = 24 }\n\
             function rows:long() { return GM_row }\n",
        ),
        ("tapset/unused.stp", "probe begin { print(\"never\") }\n"),
    ]);
    let src = "probe begin { cursor_move(3, 4); println(rows()); exit() }";
    assert_eq!(output(src, &t), "\\033[4;3H24\n");
}

#[test]
fn i_tapset_errors_point_into_the_tapset_file() {
    let t = tapsets(&[("tapset/bad.stp", "function f() {\n  return x + \"s\"\n}\n")]);
    let e = error("probe begin { print(f()) }", &t);
    assert!(e.contains("at tapset/bad.stp:2:"), "{e}");
    assert!(e.contains("source:   return x + \"s\""), "{e}");
    // A file that does not parse is skipped with a warning.
    let t = tapsets(&[
        ("tapset/broken.stp", "function g( {\n"),
        ("tapset/ok.stp", "function g() { return 7 }\n"),
    ]);
    let c = compile_for(
        "x.stp",
        "probe begin { print(g()) }",
        &Options::default(),
        &t,
    )
    .unwrap();
    assert!(
        c.warnings
            .iter()
            .any(|w| w.starts_with("WARNING: parse error: ") && w.contains("tapset/broken.stp:1:")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn i_tapset_embedded_c_is_refused_as_guru_when_called() {
    // stapgames' game.stp: game_rand calls the embedded-C __game_lfsr.
    let game = "global seed\nfunction game_srand(s:long) { seed = s }\n\
                function __game_lfsr(v:long) %{ THIS->__retvalue = 1; %}\n\
                function game_rand() { return seed = __game_lfsr(seed) }\n";
    let t = tapsets(&[("tapset/game.stp", game)]);
    // The script functions of the file serve.
    output("probe begin { game_srand(3); exit() }", &t);
    let e = error("probe begin { print(game_rand()) }", &t);
    assert!(
        e.contains(
            "semantic error: __game_lfsr() (from tapset/game.stp) is embedded C: stapvm runs \
             only verified bytecode and has no guru mode (there is no -g): identifier \
             '__game_lfsr' at tapset/game.stp:4:"
        ),
        "{e}"
    );
}

#[test]
fn stapgames_compile_with_their_tapset_directory() {
    let dir = vm_testkit::paths::corpus("stp-examples");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut files: Vec<_> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("stapgames__tapset__"))
        })
        .collect();
    files.sort();
    let t = with(|t| {
        t.tapset_files = files
            .iter()
            .map(|p| TapsetFile {
                name: p.display().to_string(),
                text: std::fs::read_to_string(p).unwrap_or_default(),
            })
            .collect()
    });
    for game in ["block", "eater", "pingpong"] {
        let p = dir.join(format!("stapgames__{game}.stp"));
        let src = std::fs::read_to_string(&p).unwrap_or_default();
        let plain = compile_for("g.stp", &src, &Options::default(), &Target::default());
        assert!(plain.is_err(), "{game} needs its tapsets");
        let c = compile_for("g.stp", &src, &Options::default(), &t)
            .unwrap_or_else(|e| panic!("{game}: {}", e.rendered));
        common::check(&c.program);
    }
}

#[test]
fn compatible_sets_systemtap_v() {
    let src = "probe begin { %( systemtap_v <= \"2.9\" %? print(\"old\") %: print(\"new\") %) }";
    assert_eq!(output(src, &Target::default()), "new");
    assert_eq!(output(src, &with(|t| t.systemtap_v = "2.9".into())), "old");
}

fn defines(d: &[(&str, &str)]) -> Options {
    Options {
        defines: d
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        ..Options::default()
    }
}

#[test]
fn d_of_an_unknown_name_is_a_warning() {
    let src = "probe begin { exit() }";
    let t = Target::default();
    // The limits stapvm knows draw nothing (the guest cases' compile-args).
    let known = defines(&[
        ("MAXACTION", "1000000"),
        ("STP_NO_OVERLOAD", ""),
        ("MAXSKIPPED", "0"),
    ]);
    let c = compile_for("x.stp", src, &known, &t).unwrap();
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(c.program.limits[0], 1_000_000);
    // Others: one warning each, naming the option; stap's runtime names
    // stapvm covers another way say what to do instead.
    let unknown = defines(&[
        ("KRETACTIVE", "100"),
        ("MAXBACKTRACE", "20"),
        ("FOO", ""),
        ("FOO", "2"),
    ]);
    let c = compile_for("x.stp", src, &unknown, &t).unwrap();
    assert_eq!(c.warnings.len(), 3, "{:?}", c.warnings);
    assert!(
        c.warnings[0].starts_with("WARNING: -D KRETACTIVE=100 has no effect in stapvm (")
            && c.warnings[0].contains(".return.maxactive(N)"),
        "{}",
        c.warnings[0]
    );
    assert!(
        c.warnings[1].contains("-D MAXBACKTRACE=20 has no effect")
            && c.warnings[1].contains("at most 20 frames"),
        "{}",
        c.warnings[1]
    );
    assert!(
        c.warnings[2].starts_with("WARNING: -D FOO has no effect in stapvm (")
            && c.warnings[2].contains("MAXACTION, MAXSTRINGLEN"),
        "{}",
        c.warnings[2]
    );
    // stap -W: a warning is an error.
    let w = with(|t| t.werror = true);
    let e = compile_for("x.stp", src, &unknown, &w)
        .unwrap_err()
        .rendered;
    assert!(e.contains("-D FOO has no effect"), "{e}");
}

#[test]
fn private_globals_and_functions_of_a_user_script() {
    let src = "private global mine = 7\nprivate global seen[4]\n\
               private function f(n) { seen[n] = mine; return mine + n }\n\
               probe begin { printf(\"%d %d\\n\", f(1), seen[1]); exit() }";
    assert_eq!(output(src, &Target::default()), "8 7\n");
}

#[test]
fn private_names_of_a_tapset_file_are_its_own() {
    let counter = "private global count = 100\n\
                   private function bump() { count++; return count }\n\
                   function tick() { return bump() }\n\
                   function twice(count) { return count * 2 }\n";
    let t = with(|t| {
        t.tapset_files = vec![TapsetFile {
            name: "ts/counter.stp".into(),
            text: counter.into(),
        }]
    });
    // The script's `count` and `bump` are not the file's: stap keeps a
    // private name within its file.
    let src = "global count\nfunction bump() { return -1 }\n\
               probe begin { count = 1; tick(); tick(); \
               printf(\"%d %d %d %d\\n\", count, tick(), twice(5), bump()); exit() }";
    assert_eq!(output(src, &t), "1 103 10 -1\n");
    // Nor can the script name them.
    let e = error("probe begin { println(bump()) }", &t);
    assert!(e.contains("unresolved function bump"), "{e}");
    let e = error("probe begin { println(count) }", &t);
    assert!(e.contains("identifier 'count'"), "{e}");
}
