//! End-to-end tests of user-space probe placement in the CLI, without the
//! kernel module: a program built here with `cc`, listed with `stapvm
//! list` (stap -l) and placed by `stapvm dump --kernel` as `load` places
//! it (the binary canonical, one probe per function, the file offset).
use std::process::Command;

mod common;

#[test]
fn list_l_shows_a_user_function_s_parameters_from_its_dwarf() {
    let d = common::tmpdir("uprobes-cli", "list-l");
    std::fs::write(
        d.join("p.c"),
        "struct s { int a; };\n\
         __attribute__((noinline)) long up_f(int n, struct s *p, const char *name)\n\
         { return n + p->a + name[0]; }\n\
         int main(int c, char **v) { struct s x = { c }; return (int)up_f(c, &x, v[0]); }\n",
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_stapvm");
    let list = |flags: &[&str], point: &str| {
        let args: Vec<&std::ffi::OsStr> = flags
            .iter()
            .chain(["p.c", "-o", "p"].iter())
            .map(std::ffi::OsStr::new)
            .collect();
        common::cc(&d, &args);
        let pt = format!("process(\"{}\").function(\"{point}", d.join("p").display());
        let out = Command::new(bin)
            .args(["list", "-L", &pt])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let got = list(&["-g", "-O2"], "up_f\")");
    let e = std::fs::canonicalize(d.join("p")).unwrap();
    let e = e.display();
    assert_eq!(
        got,
        format!("process(\"{e}\").function(\"up_f\") $n:int $p:struct s* $name:char const*\n")
    );
    assert_eq!(
        list(&["-g", "-O0"], "up_f\").return"),
        format!(
            "process(\"{e}\").function(\"up_f\").return $n:int $p:struct s* \
             $name:char const* $return:long int\n"
        )
    );
    // Without DWARF: the function, no variables.
    assert_eq!(
        list(&["-O2"], "up_f\")"),
        format!("process(\"{e}\").function(\"up_f\")\n")
    );
}

#[test]
fn functions_of_a_program_are_listed_and_placed() {
    let d = common::tmpdir("uprobes-cli", "list");
    std::fs::write(
        d.join("p.c"),
        "__attribute__((noinline)) int up_one(int x) { return x + 1; }\n\
         __attribute__((noinline)) int up_two(int x) { return x * 2; }\n\
         int main(int c, char **v) { (void)v; return up_one(c) + up_two(c); }\n",
    )
    .unwrap();
    common::cc(&d, &["-O2", "p.c", "-o", "p"].map(std::ffi::OsStr::new));
    let exe = std::fs::canonicalize(d.join("p")).unwrap();
    let bin = env!("CARGO_BIN_EXE_stapvm");
    let out = Command::new(bin)
        .args([
            "list",
            &format!(
                "process(\"{}\").function(\"up_*\").return",
                d.join("p").display()
            ),
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "process(\"{e}\").function(\"up_one\").return\nprocess(\"{e}\").function(\"up_two\").return\n",
            e = exe.display()
        )
    );
    // Placed: each function a probe at its address, named in pp().
    let stp = d.join("x.stp");
    std::fs::write(
        &stp,
        format!(
            "probe process(\"{}\").function(\"up_*\") {{ println(pp(), uint_arg(1)) }}\n",
            d.join("p").display()
        ),
    )
    .unwrap();
    let stpb = d.join("x.stpb");
    let out = Command::new(bin)
        .args([
            "compile",
            stp.to_str().unwrap(),
            "-o",
            stpb.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(bin)
        .args(["dump", "--kernel", stpb.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let probes: Vec<&str> = text.lines().filter(|l| l.contains("probe#")).collect();
    assert_eq!(probes.len(), 2, "{text}");
    assert!(
        probes[0].contains(&format!(
            "process(\"{}\").function(\"up_one\")  [uprobe",
            d.join("p").display()
        )),
        "{text}"
    );
    assert!(
        probes[1].contains(&format!("target {} address 0x", exe.display())),
        "{text}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn usdt_markers_are_listed_with_their_arguments() {
    if !std::path::Path::new("/usr/include/x86_64-linux-gnu/sys/sdt.h").exists() {
        eprintln!("skipped: no sys/sdt.h (systemtap-sdt-dev; tests/setup.sh installs it)");
        return;
    }
    let d = common::tmpdir("uprobes-cli", "marks");
    std::fs::write(
        d.join("m.c"),
        "#include <sys/sdt.h>\n\
         int main(int c, char **v) { STAP_PROBE(app, none); STAP_PROBE2(app, two, c, v); return 0; }\n",
    )
    .unwrap();
    common::cc(&d, &["-O2", "m.c", "-o", "m"].map(std::ffi::OsStr::new));
    let exe = std::fs::canonicalize(d.join("m")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_stapvm"))
        .args([
            "list",
            "-L",
            &format!("process(\"{}\").mark(\"*\")", d.join("m").display()),
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "process(\"{e}\").provider(\"app\").mark(\"none\")\n\
             process(\"{e}\").provider(\"app\").mark(\"two\") $arg1:long $arg2:long\n",
            e = exe.display()
        )
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_programs_library_functions_are_listed_and_placed_with_its_filter() {
    let bin = env!("CARGO_BIN_EXE_stapvm");
    let sh = "/bin/sh";
    let out = Command::new(bin)
        .args([
            "list",
            &format!("process(\"{sh}\").library(\"libc.so*\").function(\"mallo?\")"),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let exe = std::fs::canonicalize(sh).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let head = format!("process(\"{}\").library(\"", exe.display());
    assert!(lines[0].starts_with(&head), "{text}");
    assert!(
        lines[0].ends_with("libc.so.6\").function(\"malloc\")"),
        "{text}"
    );
    // Placed: a uprobe on libc with the program as its filter.
    let d = common::tmpdir("uprobes-cli", "library");
    let stpb = d.join("lib.stpb");
    let out = Command::new(bin)
        .args(["compile", "-o"])
        .arg(&stpb)
        .args([
            "-e",
            &format!("probe process(\"{sh}\").library(\"libc.so.6\").function(\"malloc\") {{ }}"),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(bin)
        .args(["dump", "--kernel"])
        .arg(&stpb)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("libc.so.6 address"), "{text}");
    assert!(
        text.contains(&format!("in processes of {}", exe.display())),
        "{text}"
    );
}
