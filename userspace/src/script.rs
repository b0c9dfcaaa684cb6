//! Scripts in: where the text comes from (file, `-e`, `-` for stdin), the
//! compiler options (`-D`, positional arguments) and the calls into the
//! compiler crate (`compile`, `check`), with its diagnostics printed to
//! stderr exactly as the compiler rendered them.
use crate::cli::ScriptArgs;
use std::io::Read;
use std::path::{Path, PathBuf};
use thiserror::Error;
use vm_spec::program::Program;

/// Why a script could not be read or compiled.
#[derive(Debug, Error)]
pub enum Error {
    /// Neither a file nor -e.
    #[error("no script given (a script file, '-' for standard input, or -e SCRIPT)")]
    NoScript,
    /// The script file could not be read.
    #[error("cannot read script {path}: {err}")]
    Read {
        /// The path.
        path: String,
        /// The error.
        err: std::io::Error,
    },
    /// The compiler reported errors (already printed).
    #[error("{0}")]
    Failed(String),
}

/// A script's text and its name in messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// `x.stp`, `-` (stdin) or `<input>` (-e).
    pub name: String,
    /// The text.
    pub text: String,
    /// The file it came from, if any.
    pub path: Option<PathBuf>,
    /// Script arguments (`$1`...).
    pub args: Vec<String>,
}

/// Reads the script named by the options.
pub fn read_source(opts: &ScriptArgs) -> Result<Source, Error> {
    if let Some(text) = &opts.expr {
        return Ok(Source {
            name: "<input>".into(),
            text: text.clone(),
            path: None,
            args: opts.positional.clone(),
        });
    }
    let (first, args) = opts.positional.split_first().ok_or(Error::NoScript)?;
    let read_err = |err| Error::Read {
        path: first.clone(),
        err,
    };
    if first == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(read_err)?;
        return Ok(Source {
            name: "-".into(),
            text,
            path: None,
            args: args.to_vec(),
        });
    }
    let text = std::fs::read_to_string(first).map_err(read_err)?;
    Ok(Source {
        name: first.clone(),
        text,
        path: Some(PathBuf::from(first)),
        args: args.to_vec(),
    })
}

/// The default output of `compile`: the script's basename with `.stpb`
/// (`a.stpb` for -e and stdin).
pub fn default_output(src: &Source) -> PathBuf {
    match &src.path {
        Some(p) => {
            let stem = p
                .file_stem()
                .map(|s| s.to_os_string())
                .unwrap_or_else(|| "a".into());
            Path::new(&stem).with_extension("stpb")
        }
        None => PathBuf::from("a.stpb"),
    }
}

/// The compiler options: `-D NAME=VAL` split at the first `=` (a bare
/// `-D NAME` defines it empty, as a C macro would be) and the script
/// arguments.
pub fn options(src: &Source, defines: &[String]) -> compiler::Options {
    compiler::Options {
        defines: defines
            .iter()
            .map(|d| match d.split_once('=') {
                Some((n, v)) => (n.trim().to_string(), v.to_string()),
                None => (d.trim().to_string(), String::new()),
            })
            .collect(),
        args: src.args.clone(),
    }
}

fn print_warnings(warnings: &[String], quiet: bool) {
    if !quiet {
        for w in warnings {
            eprint!("{}", ensure_newline(w));
        }
    }
}

fn failure(src: &Source, f: &compiler::Failed) -> Error {
    eprint!("{}", ensure_newline(&f.rendered));
    Error::Failed(format!(
        "{} error{} in {}",
        f.count,
        if f.count == 1 { "" } else { "s" },
        src.name
    ))
}

/// The compiler's target: the defaults, with stap's `-W` (`werror`) and,
/// for `check`, the kernel's functions from /proc/kallsyms when it is
/// readable (stap -p2 resolves probe points against the kernel too).
pub fn target(werror: bool, kernel_symbols: bool) -> compiler::Target {
    let syms = kernel_symbols
        .then(|| std::fs::read_to_string("/proc/kallsyms").ok())
        .flatten()
        .filter(|t| !t.is_empty())
        .map(|t| std::sync::Arc::new(compiler::symbols::KernelSymbols::from_kallsyms(&t)));
    compiler::Target {
        werror,
        kernel_symbols: syms,
        ..compiler::Target::default()
    }
}

/// Compiles a script. Warnings are printed to stderr unless `quiet` (with
/// `werror` they are errors); errors are printed as rendered and
/// summarised in the returned error.
pub fn compile(
    src: &Source,
    defines: &[String],
    quiet: bool,
    werror: bool,
) -> Result<Program, Error> {
    // -w drops the warnings before -W could count them, as in stap.
    let t = target(werror && !quiet, false);
    match compiler::compile_for(&src.name, &src.text, &options(src, defines), &t) {
        Ok(c) => {
            print_warnings(&c.warnings, quiet);
            Ok(c.program)
        }
        Err(f) => Err(failure(src, &f)),
    }
}

/// Checks a script: parse and semantic analysis (stap -p2, function probe
/// points resolved against /proc/kallsyms when it is readable), or parsing
/// alone with `parse_only` (stap -p1, `compiler::parse_only`, whose failure
/// text ends with stap's pass-1 summary). Diagnostics go to stderr.
pub fn check(
    src: &Source,
    defines: &[String],
    parse_only: bool,
    quiet: bool,
    werror: bool,
) -> Result<(), Error> {
    let opts = options(src, defines);
    if parse_only {
        return compiler::parse_only(&src.name, &src.text, &opts).map_err(|f| failure(src, &f));
    }
    let t = target(werror && !quiet, true);
    match compiler::check_for(&src.name, &src.text, &opts, &t) {
        Ok(warnings) => {
            print_warnings(&warnings, quiet);
            Ok(())
        }
        Err(f) => Err(failure(src, &f)),
    }
}

fn ensure_newline(s: &str) -> String {
    if s.is_empty() || s.ends_with('\n') {
        s.to_string()
    } else {
        format!("{s}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(expr: Option<&str>, pos: &[&str]) -> ScriptArgs {
        ScriptArgs {
            expr: expr.map(String::from),
            defines: vec![],
            no_warnings: false,
            werror: false,
            positional: pos.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn e_makes_every_positional_an_argument() {
        let s = read_source(&args(Some("probe begin {}"), &["a", "b"])).unwrap();
        assert_eq!(s.name, "<input>");
        assert_eq!(s.args, vec!["a", "b"]);
        assert_eq!(default_output(&s), PathBuf::from("a.stpb"));
    }

    #[test]
    fn file_then_arguments() {
        let dir = std::env::temp_dir().join(format!("stapvm-script-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("hello.stp");
        std::fs::write(&path, "probe begin { exit() }").unwrap();
        let p = path.to_str().unwrap();
        let s = read_source(&args(None, &[p, "x"])).unwrap();
        assert_eq!(s.text, "probe begin { exit() }");
        assert_eq!(s.args, vec!["x"]);
        assert_eq!(s.name, p);
        assert_eq!(default_output(&s), PathBuf::from("hello.stpb"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_script_and_file() {
        assert!(matches!(
            read_source(&args(None, &[])),
            Err(Error::NoScript)
        ));
        let e = read_source(&args(None, &["/nonexistent/x.stp"])).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("cannot read script /nonexistent/x.stp"));
    }
}
