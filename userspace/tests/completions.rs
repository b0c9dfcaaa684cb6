//! `stapvm completions SHELL`: the scripts it prints load in their shell
//! (bash, where it is installed) and name the subcommands.
use std::path::PathBuf;
use std::process::Command;

fn completions(shell: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_stapvm"))
        .args(["completions", shell])
        .output()
        .expect("run stapvm");
    assert!(out.status.success(), "{shell}: {out:?}");
    assert!(out.stderr.is_empty(), "{shell}: {out:?}");
    String::from_utf8(out.stdout).expect("UTF-8 script")
}

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn bash_completion_loads_and_registers_its_function() {
    let script = completions("bash");
    assert!(script.contains("_stapvm()"), "{script}");
    for sub in ["compile", "run", "check", "doctor", "completions"] {
        assert!(script.contains(sub), "bash script lacks {sub}");
    }
    if !have("bash") {
        eprintln!("bash not installed: loading not tested");
        return;
    }
    let dir = std::env::temp_dir().join(format!("stapvm-completions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file: PathBuf = dir.join("stapvm.bash");
    std::fs::write(&file, &script).unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(r#"source "$1" && complete -p stapvm"#)
        .arg("bash")
        .arg(&file)
        .output()
        .expect("run bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    assert!(
        stdout.contains("-F _stapvm") && stdout.trim_end().ends_with(" stapvm"),
        "{stdout}"
    );
    // The function completes the subcommands after `stapvm`.
    let out = Command::new("bash")
        .arg("-c")
        .arg(
            r#"source "$1"; COMP_WORDS=(stapvm co); COMP_CWORD=1; COMP_LINE="stapvm co";
               COMP_POINT=${#COMP_LINE}; _stapvm stapvm co stapvm; printf '%s\n' "${COMPREPLY[@]}""#,
        )
        .arg("bash")
        .arg(&file)
        .output()
        .expect("run bash");
    let words = String::from_utf8_lossy(&out.stdout);
    assert!(words.lines().any(|w| w == "compile"), "{out:?}");
    assert!(words.lines().any(|w| w == "completions"), "{out:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn zsh_and_fish_scripts_name_the_subcommands() {
    let zsh = completions("zsh");
    assert!(zsh.starts_with("#compdef stapvm"), "{zsh}");
    let fish = completions("fish");
    assert!(fish.contains("complete -c stapvm"), "{fish}");
    for sub in ["compile", "load", "run", "check", "dump", "list", "doctor"] {
        assert!(zsh.contains(&format!("'{sub}:")), "zsh lacks {sub}");
        assert!(fish.contains(&format!("-a \"{sub}\"")), "fish lacks {sub}");
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_stapvm"))
        .args(["completions", "csh"])
        .output()
        .expect("run stapvm");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("possible values: bash, zsh, fish"), "{err}");
}
