//! Scripts in: where the text comes from (file, `-e`, `-` for stdin), the
//! compiler options (`-D`, positional arguments; `-W`, `-u`, `-G`,
//! `--compatible` and the tapset files of `-I` directories in the
//! compiler's `Target`) and the calls into the compiler crate (`compile`,
//! `check`), with its diagnostics printed to stderr exactly as the
//! compiler rendered them.
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

/// The `*.stp` files of a `-I` directory, sorted by name as stap reads
/// them, named `DIR/NAME.stp` in messages. A directory or file that cannot
/// be read is skipped with a warning (stap skips it silently).
pub fn tapset_files(dir: &Path, quiet: bool) -> Vec<compiler::TapsetFile> {
    let warn = |what: &Path, e: &std::io::Error| {
        if !quiet {
            eprintln!(
                "WARNING: -I {}: cannot read {}: {e}",
                dir.display(),
                what.display()
            );
        }
    };
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => {
            warn(dir, &e);
            return Vec::new();
        }
    };
    let mut paths: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "stp") && p.is_file())
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        match std::fs::read(&p) {
            Ok(bytes) => out.push(compiler::TapsetFile {
                name: p.display().to_string(),
                text: String::from_utf8_lossy(&bytes).into_owned(),
            }),
            Err(e) => warn(&p, &e),
        }
    }
    out
}

/// The running kernel's release (`uname -r`): /proc/sys/kernel/osrelease,
/// else uname(2); `None` when neither answers.
pub fn running_release() -> Option<String> {
    if let Ok(t) = std::fs::read_to_string("/proc/sys/kernel/osrelease") {
        let t = t.trim();
        if !t.is_empty() {
            return Some(t.to_string());
        }
    }
    // SAFETY: a zeroed utsname is a valid buffer for uname(2) to fill.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    // SAFETY: uname NUL-terminates `release` on success.
    let r = unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) };
    let r = r.to_string_lossy().trim().to_string();
    (!r.is_empty()).then_some(r)
}

/// The compiler's target: the defaults, with the kernel release (`-r`,
/// else the running kernel's), stap's `-W` (`werror`),
/// `-u`, `-G`, `--compatible` and the `-I` tapset files of `a`, and, for
/// `check`, the kernel's functions from /proc/kallsyms when it is
/// readable (stap -p2 resolves probe points against the kernel too).
pub fn target(a: &ScriptArgs, kernel_symbols: bool) -> compiler::Target {
    let syms = kernel_symbols
        .then(|| std::fs::read_to_string("/proc/kallsyms").ok())
        .flatten()
        .filter(|t| !t.is_empty())
        .map(|t| std::sync::Arc::new(compiler::symbols::KernelSymbols::from_kallsyms(&t)));
    let d = compiler::Target::default();
    compiler::Target {
        // -w drops the warnings before -W could count them, as in stap.
        werror: a.werror && !a.no_warnings,
        kernel_symbols: syms,
        unelided: a.unelided,
        global_inits: a.globals.clone(),
        tapset_files: a
            .include
            .iter()
            .flat_map(|dir| tapset_files(dir, a.no_warnings))
            .collect(),
        systemtap_v: a.compatible.clone().unwrap_or(d.systemtap_v.clone()),
        kernel_release: a
            .release
            .clone()
            .or_else(running_release)
            .unwrap_or(d.kernel_release.clone()),
        ..d
    }
}

/// Compiles a script with the options of `a`. Warnings are printed to
/// stderr unless `-w` (with `-W` they are errors); errors are printed as
/// rendered and summarised in the returned error.
pub fn compile(src: &Source, a: &ScriptArgs) -> Result<Program, Error> {
    compile_observed(src, a, &mut |_| {})
}

/// `compile`, with the compiler's `PassReport`s given to `hook` (`-v`).
pub fn compile_observed(
    src: &Source,
    a: &ScriptArgs,
    hook: compiler::PassHook,
) -> Result<Program, Error> {
    let t = target(a, false);
    match compiler::compile_observed(&src.name, &src.text, &options(src, &a.defines), &t, hook) {
        Ok(c) => {
            print_warnings(&c.warnings, a.no_warnings);
            let mut prog = c.program;
            // -d PATH and --ldd: user-space symbol tables, added by the
            // loader (ustack.rs); a -d MODULE (no '/') names kernel
            // symbols, which come from /proc/kallsyms anyway.
            prog.usym_paths = a
                .symbols
                .iter()
                .filter(|d| d.contains('/'))
                .cloned()
                .collect();
            prog.usym_ldd = a.ldd;
            Ok(prog)
        }
        Err(f) => Err(failure(src, &f)),
    }
}

/// Checks a script: parse and semantic analysis (stap -p2, function probe
/// points resolved against /proc/kallsyms when it is readable), or parsing
/// alone with `parse_only` (stap -p1, `compiler::parse_tree`: the parse
/// tree printed back as script text on stdout; a failure's text ends with
/// stap's pass-1 summary). Diagnostics go to stderr.
pub fn check(src: &Source, a: &ScriptArgs, parse_only: bool) -> Result<(), Error> {
    check_observed(src, a, parse_only, &mut |_| {})
}

/// `check`, with the compiler's `PassReport`s given to `hook` (`-v`).
pub fn check_observed(
    src: &Source,
    a: &ScriptArgs,
    parse_only: bool,
    hook: compiler::PassHook,
) -> Result<(), Error> {
    let opts = options(src, &a.defines);
    if parse_only {
        let t = target(a, false);
        let tree = compiler::parse_tree_observed(&src.name, &src.text, &opts, &t, hook)
            .map_err(|f| failure(src, &f))?;
        print!("{tree}");
        return Ok(());
    }
    let t = target(a, true);
    match compiler::check_observed(&src.name, &src.text, &opts, &t, hook) {
        Ok(warnings) => print_warnings(&warnings, a.no_warnings),
        Err(f) => return Err(failure(src, &f)),
    }
    if kernel_readable() {
        let prog = match compiler::compile_for(&src.name, &src.text, &opts, &t) {
            Ok(c) => c.program,
            Err(f) => return Err(failure(src, &f)),
        };
        if let Err(e) = crate::session::resolve_on_kernel(&prog, false) {
            eprint!("{}", kernel_failure(src, &e));
            return Err(Error::Failed(format!("1 error in {}", src.name)));
        }
    }
    Ok(())
}

/// For a load-time failure of a use in the program's script (a target
/// variable or `@cast` member the kernel lacks): where it is and stap's
/// source line with a caret, from the script text the `.stpb` carries;
/// `None` for other errors or a place outside the script.
pub fn load_error_source(prog: &Program, e: &crate::session::Error) -> Option<String> {
    let crate::session::Error::TargetVar(crate::targetvars::Error::At { loc, .. }) = e else {
        return None;
    };
    let idx = compiler::diag::LineIndex::new(&prog.source);
    idx.offset_of(loc.line, loc.col)?;
    Some(format!(
        "        at {}:{}:{}\n{}",
        prog.source_name,
        loc.line,
        loc.col,
        compiler::diag::source_excerpt(idx.line(loc.line), loc.col, "        ")
    ))
}

/// Whether the running kernel's BTF and /proc/kallsyms can be read: then
/// `check` resolves the program as `load` would (probe points, target
/// variables, `@cast` members, tracepoints), as stap -p2 does with
/// debuginfo.
fn kernel_readable() -> bool {
    std::path::Path::new(crate::btf::VMLINUX_BTF).exists()
        && std::fs::File::open(crate::kallsyms::KALLSYMS_PATH).is_ok()
}

/// A resolution error as stap's pass 2 prints one: `semantic error:`, and
/// for a use in the script its token, `file:line:col` and the source line
/// with a caret.
fn kernel_failure(src: &Source, e: &crate::session::Error) -> String {
    use crate::session::Error as S;
    use crate::targetvars::Error as T;
    if let S::TargetVar(T::At { loc, msg }) = e {
        let tokens = compiler::parse::lexer::lex(&src.text, &src.args);
        let offset = compiler::diag::LineIndex::new(&src.text).offset_of(loc.line, loc.col);
        let tok = offset.and_then(|o| tokens.iter().find(|t| t.span.lo == o));
        if let Some(tok) = tok {
            let msg = msg.replace(&format!(" at {}:{}", loc.line, loc.col), "");
            let d = compiler::diag::Diagnostic::semantic(msg, tok.span);
            let mut r = compiler::diag::Renderer::new(&src.name, &src.text, &tokens);
            return format!(
                "{}\nPass 2: analysis failed.  [man error::pass2]\n",
                r.render(&d).trim_end()
            );
        }
    }
    format!("semantic error: {e}\nPass 2: analysis failed.  [man error::pass2]\n")
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
            globals: vec![],
            include: vec![],
            unelided: false,
            compatible: None,
            release: None,
            symbols: vec![],
            ldd: false,
            all_modules: false,
            positional: pos.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn the_target_release_is_r_else_the_running_kernel_s() {
        let mut a = args(Some("probe begin {}"), &[]);
        let running = running_release().expect("uname -r");
        assert_eq!(target(&a, false).kernel_release, running);
        a.release = Some("5.10.0-9-amd64".into());
        assert_eq!(target(&a, false).kernel_release, "5.10.0-9-amd64");
    }

    #[test]
    fn kernel_errors_point_at_the_use() {
        let src = Source {
            name: "x.stp".into(),
            text: "probe begin {}\nprobe kernel.function(\"f\") { println($cuont) }\n".into(),
            path: None,
            args: vec![],
        };
        let e = crate::session::Error::TargetVar(crate::targetvars::Error::At {
            loc: vm_spec::program::SrcLoc { line: 2, col: 38 },
            msg: "probe point 'kernel.function(\"f\")' has no parameter 'cuont' at 2:38".into(),
        });
        let out = kernel_failure(&src, &e);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "semantic error: probe point 'kernel.function(\"f\")' has no parameter 'cuont': \
             identifier '$cuont' at x.stp:2:38"
        );
        let source = "        source: probe kernel.function(\"f\") { println($cuont) }";
        assert_eq!(lines[1], source);
        // The caret under the `$`.
        assert_eq!(lines[2].find('^'), source.find('$'));
        assert_eq!(lines[3], "Pass 2: analysis failed.  [man error::pass2]");
        // A place outside the script (library code): the message alone.
        let e = crate::session::Error::TargetVar(crate::targetvars::Error::At {
            loc: vm_spec::program::SrcLoc { line: 9, col: 1 },
            msg: "boom".into(),
        });
        assert_eq!(
            kernel_failure(&src, &e),
            "semantic error: boom\nPass 2: analysis failed.  [man error::pass2]\n"
        );
    }

    #[test]
    fn load_errors_show_the_source_line() {
        let prog = Program {
            source_name: "x.stp".into(),
            source: "probe begin {}\nprobe kernel.function(\"f\") { print($nope) }\n".into(),
            ..Default::default()
        };
        let at = |line, col| {
            crate::session::Error::TargetVar(crate::targetvars::Error::At {
                loc: vm_spec::program::SrcLoc { line, col },
                msg: "no parameter".into(),
            })
        };
        let text = load_error_source(&prog, &at(2, 36)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "        at x.stp:2:36");
        assert_eq!(
            lines[1],
            "        source: probe kernel.function(\"f\") { print($nope) }"
        );
        assert_eq!(lines[2].find('^'), lines[1].find('$'));
        // A place the script does not have (library code), another error.
        assert!(load_error_source(&prog, &at(9, 1)).is_none());
        let other = crate::session::Error::TargetVar(crate::targetvars::Error::Var("x".into()));
        assert!(load_error_source(&prog, &other).is_none());
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
    fn tapset_directory_files_in_name_order() {
        let dir = std::env::temp_dir().join(format!("stapvm-tapset-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("b.stp"), "function b() {}").unwrap();
        std::fs::write(dir.join("a.stp"), "function a() {}").unwrap();
        std::fs::write(dir.join("notes.txt"), "x").unwrap();
        std::fs::write(dir.join("sub/c.stp"), "function c() {}").unwrap();
        let files = tapset_files(&dir, true);
        let names: Vec<String> = files
            .iter()
            .map(|f| f.name.rsplit('/').next().unwrap_or("").to_string())
            .collect();
        assert_eq!(names, vec!["a.stp", "b.stp"]);
        assert_eq!(files[0].text, "function a() {}");
        assert!(tapset_files(&dir.join("missing"), true).is_empty());
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
