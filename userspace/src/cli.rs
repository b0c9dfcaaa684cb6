//! The command line: clap derive structures for every subcommand. Option
//! letters follow stap where stap has the option (`-e`, `-o`, `-D`, `-T`,
//! `-v`, `-w`, `-G`, `-I`, `-u`, `-c`, `-x`, positional script arguments
//! after the script). `-d PATH` and `--ldd` add user-space symbol tables
//! (ustack.rs); `--all-modules` and `-d MODULE` change nothing here and
//! say why in `--help`;
//! `-g` and `--suppress-time-limits` are refused before parsing
//! (`wants_guru`), and stap's own form (`stapvm [-p N] SCRIPT`, `-e`,
//! `-l`/`-L`) is turned into a subcommand first (`stap_style`).
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// `stapvm`: SystemTap scripts compiled to verified bytecode and run by the
/// stapvm.ko virtual machine.
#[derive(Debug, Parser)]
#[command(
    name = "stapvm",
    version,
    about,
    long_about = None,
    after_help = "stap's command lines work too: stapvm [-p 1..5] [OPTIONS] SCRIPT [ARGS], \
                  stapvm -e 'TEXT' [ARGS] (run; -p stops after parse, check, disassembly, \
                  compile), stapvm -l/-L PATTERN (list)."
)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile a script into a .stpb program.
    Compile(CompileArgs),
    /// Load a compiled .stpb program into stapvm.ko and print its output.
    Load(LoadArgs),
    /// Compile a script and run it (compile + load in one process).
    Run(RunArgs),
    /// Check a script (parse, semantic analysis, lowering) without writing a program; where
    /// this kernel's BTF and /proc/kallsyms can be read, also resolve its probe points, target
    /// variables and @cast members against them, as `load` would (stap -p2).
    Check(CheckArgs),
    /// Disassemble a .stpb program.
    Dump(DumpArgs),
    /// List the probe points a pattern matches on this kernel (stap -l;
    /// with -L, their target variables and types, as stap -L).
    List(ListArgs),
    /// Check what this machine needs to run stapvm (kernel, BTF, probe
    /// support, lockdown, the module and /dev/stapvm, privileges) and say
    /// what to do about each problem.
    Doctor(DoctorArgs),
    /// Boot-time tracing: programs run from the initramfs at every boot
    /// (add, list, show, stop, remove; docs/boot.md).
    Boot(crate::boot::BootArgs),
    /// Print a shell completion script for stapvm (bash, zsh or fish) on
    /// standard output: `source <(stapvm completions bash)`, or save it
    /// where the shell loads completions from.
    Completions(CompletionsArgs),
    /// Developer tools (hostile-image tests of the guest harness, the man
    /// pages).
    #[command(subcommand, hide = true)]
    Debug(DebugCommand),
}

/// Where the script comes from and what it is given: shared by compile, run
/// and check.
#[derive(Debug, Args, Clone)]
pub struct ScriptArgs {
    /// Script text given on the command line instead of a file.
    #[arg(short = 'e', value_name = "SCRIPT")]
    pub expr: Option<String>,
    /// Set a limit, as stap's -D (`-D MAXACTION=100000`; the names are
    /// those `stapvm dump` prints). Other names have no effect here (stap
    /// gives them to the C compiler of its module) and draw a warning.
    #[arg(short = 'D', value_name = "NAME=VAL")]
    pub defines: Vec<String>,
    /// Suppress compiler warnings.
    #[arg(short = 'w')]
    pub no_warnings: bool,
    /// Treat warnings as errors (stap -W).
    #[arg(short = 'W')]
    pub werror: bool,
    /// Initial value of a global (stap -G): a number for a long global
    /// (decimal, 0x hex, 0 octal), the text for a string one, checked
    /// against stap's pattern NAME=[a-z0-9_.-]+. Compiled in as the
    /// global's initializer; an unknown global, an array or a text for a
    /// long global is an error.
    #[arg(short = 'G', value_name = "NAME=VALUE")]
    pub globals: Vec<String>,
    /// A user tapset directory (stap -I): every DIR/*.stp is parsed as a
    /// tapset, and the files whose functions, globals or probe aliases the
    /// script uses are included (a relative DIR is taken from the current
    /// directory).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Do not elide (stap -u): unused functions are checked and compiled,
    /// unused globals kept without a warning, and a script whose probes
    /// all do nothing is not "no probes found".
    #[arg(short = 'u')]
    pub unelided: bool,
    /// The kernel release to compile for (stap -r RELEASE): what
    /// `%( kernel_v %)` (its numeric part, `6.1.0` of `6.1.0-9-amd64`) and
    /// `%( kernel_vr %)` (all of it) compare against. Default: the running
    /// kernel's (uname -r). As with stap, these branches are chosen when
    /// the script is compiled: a .stpb keeps them whatever kernel loads it.
    #[arg(short = 'r', value_name = "RELEASE", value_parser = parse_release)]
    pub release: Option<String>,
    /// Compatibility with an older stap (stap --compatible): the version
    /// `%( systemtap_v ... %)` conditions compare against (default 5.0).
    #[arg(long = "compatible", value_name = "VERSION")]
    pub compatible: Option<String>,
    /// Symbol tables of a user-space executable or library (stap -d PATH,
    /// a path with a '/'): usymname(), print_ubacktrace() & co name its
    /// functions. The probed binaries and the -c command's program have
    /// theirs without it. A kernel MODULE needs nothing: stapvm resolves
    /// kernel and module symbols on the target (/proc/kallsyms).
    #[arg(short = 'd', value_name = "MODULE|PATH")]
    pub symbols: Vec<String>,
    /// Also the symbol tables of the shared libraries the probed, -c and
    /// -d binaries need (stap --ldd: their DT_NEEDED, found as ld.so does).
    #[arg(long = "ldd")]
    pub ldd: bool,
    /// Accepted for stap compatibility, no effect (stap --all-modules: -d
    /// for every loaded kernel module): module symbols come from
    /// /proc/kallsyms on the target anyway.
    #[arg(long = "all-modules")]
    pub all_modules: bool,
    /// The script file (`-` reads standard input), then its arguments
    /// (`$1`, `@1`, ...). With -e every positional is an argument. Options
    /// may follow the script, as with stap; arguments starting with `-`
    /// go after `--` (negative numbers need not).
    #[arg(value_name = "SCRIPT [ARGS]", allow_negative_numbers = true)]
    pub positional: Vec<String>,
}

/// A `-r` value: a kernel release, as `uname -r` prints it. stap also
/// takes a kernel build directory there; stapvm needs none and refuses it.
fn parse_release(s: &str) -> Result<String, String> {
    if s.is_empty() || s.contains('/') || s.chars().any(char::is_whitespace) {
        return Err(format!(
            "'{s}' is not a kernel release (as `uname -r` prints it: 6.1.0-9-amd64); \
             stapvm needs no kernel build directory"
        ));
    }
    Ok(s.to_string())
}

/// Options of a running session: shared by load and run.
#[derive(Debug, Args, Clone, Default)]
pub struct SessionArgs {
    /// Stop after this many seconds.
    #[arg(short = 'T', value_name = "SECS")]
    pub timeout: Option<u64>,
    /// Verbose: stap's pass lines (`run`: `Pass 1: parsed user script
    /// ...` to `Pass 5: run completed ...`), the resolve and load timings
    /// and the probe counters on standard error.
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Create this file once the probes are armed.
    #[arg(long = "ready-file", value_name = "PATH")]
    pub ready_file: Option<PathBuf>,
    /// Write the script's output to FILE instead of standard output
    /// (switch_file() goes on in FILE.1, FILE.2, ...).
    #[arg(short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// With -o: files of at most SIZE megabytes, FILE.0, FILE.1, ...;
    /// keep the last N (stap -S).
    #[arg(short = 'S', value_name = "SIZE[,N]", requires = "output",
          value_parser = crate::outfile::parse_size_limit)]
    pub size_limit: Option<(u64, u32)>,
    /// Set target() to PID (stap -x).
    #[arg(short = 'x', value_name = "PID", conflicts_with = "cmd")]
    pub target_pid: Option<i64>,
    /// Run CMD once the probes are armed, set target() to its PID and end
    /// the session when it exits (stap -c).
    #[arg(short = 'c', value_name = "CMD")]
    pub cmd: Option<String>,
    /// At the end, each probe point's hits and skipped hits on standard
    /// error (stap -t's summary; -v prints it too).
    #[arg(short = 't')]
    pub timing: bool,
}

/// stap's `-x`, `-c` and `-t` where nothing runs (`compile`, `check`):
/// the target process and the run's statistics are the loader's business;
/// and `-v`.
#[derive(Debug, Args, Clone, Default)]
pub struct LaterTargetArgs {
    /// Accepted as stap -x; takes effect when the program is loaded: give
    /// it to `stapvm load -x PID` (or use `stapvm run`). Not stored in the
    /// .stpb.
    #[arg(short = 'x', value_name = "PID", conflicts_with = "cmd")]
    pub target_pid: Option<i64>,
    /// Accepted as stap -c; takes effect when the program is loaded: give
    /// it to `stapvm load -c CMD` (or use `stapvm run`). Not stored in the
    /// .stpb.
    #[arg(short = 'c', value_name = "CMD")]
    pub cmd: Option<String>,
    /// Accepted as stap -t (per-probe statistics at the end of the run);
    /// takes effect when the program is loaded: `stapvm load -t`.
    #[arg(short = 't')]
    pub timing: bool,
    /// Verbose: stap's pass lines on standard error (`Pass 1: parsed user
    /// script and N library scripts using ...virt/...res/...shr/...data kb,
    /// in ...usr/...sys/...real ms.`, up to pass 4, or 3 with --disasm, 2
    /// for check, 1 with --parse-only); -vv adds a one-line summary
    /// (compile time, probes, handlers, instructions).
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// `stapvm compile`.
#[derive(Debug, Args)]
pub struct CompileArgs {
    /// The script and its arguments.
    #[command(flatten)]
    pub script: ScriptArgs,
    /// -x / -c / -t (for `stapvm load`), -v.
    #[command(flatten)]
    pub later: LaterTargetArgs,
    /// The .stpb file to write (default: the script's name with .stpb, or
    /// a.stpb for -e; its path is then printed, as stap -p4 prints its
    /// module's).
    #[arg(short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the compiled program's disassembly instead of writing it
    /// (stap -p3, which prints the C it generated).
    #[arg(long = "disasm", conflicts_with = "output")]
    pub disasm: bool,
}

/// `stapvm load`.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The .stpb program.
    #[arg(value_name = "PROGRAM.stpb")]
    pub program: PathBuf,
    /// Session options.
    #[command(flatten)]
    pub session: SessionArgs,
}

/// `stapvm run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The script and its arguments.
    #[command(flatten)]
    pub script: ScriptArgs,
    /// Session options.
    #[command(flatten)]
    pub session: SessionArgs,
}

/// `stapvm check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The script and its arguments.
    #[command(flatten)]
    pub script: ScriptArgs,
    /// -x / -c / -t (for `stapvm load`), -v.
    #[command(flatten)]
    pub later: LaterTargetArgs,
    /// Stop after parsing (stap -p1).
    #[arg(long = "parse-only")]
    pub parse_only: bool,
}

/// `stapvm dump`.
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// The .stpb program.
    #[arg(value_name = "PROGRAM.stpb")]
    pub program: PathBuf,
    /// Resolve the probes and fill in the target variables' constants for
    /// the running kernel (/proc/kallsyms, BTF) as `load` would, then
    /// disassemble.
    #[arg(long = "kernel")]
    pub kernel: bool,
}

/// `stapvm list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print the probe points only (stap -l; the default).
    #[arg(short = 'l', conflicts_with = "vars")]
    pub points: bool,
    /// Also print each point's target variables with their types (stap -L).
    #[arg(short = 'L')]
    pub vars: bool,
    /// Probe point patterns (`kernel.function("vfs_*")`, `syscall.open*`).
    #[arg(value_name = "PROBE", required = true)]
    pub patterns: Vec<String>,
}

/// `stapvm doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Read the machine's files below this directory instead of / (tests).
    #[arg(long = "root", value_name = "DIR", default_value = "/", hide = true)]
    pub root: PathBuf,
}

/// A shell `stapvm completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    /// GNU bash (`complete -F`).
    Bash,
    /// zsh (`#compdef stapvm`).
    Zsh,
    /// fish (`complete -c stapvm`).
    Fish,
}

/// `stapvm completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_name = "SHELL")]
    pub shell: Shell,
}

/// `stapvm debug ...`.
#[derive(Debug, Subcommand)]
pub enum DebugCommand {
    /// Send raw image bytes through the LOAD ioctl and report the verdict.
    LoadImage {
        /// The image file.
        file: PathBuf,
    },
    /// Write the man pages into DIR: stapvm.1 and a page per subcommand
    /// (from the command line's definition), and a page per --page
    /// Markdown file.
    Man {
        /// The directory (created if missing).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Also convert a Markdown file into page NAME.SECTION
        /// (`--page stapvm-language.7=docs/language.md`).
        #[arg(long = "page", value_name = "NAME.SECTION=FILE",
              value_parser = crate::manpages::parse_page)]
        pages: Vec<crate::manpages::PageSpec>,
    },
}

/// Short options that take a value (in `-Gx=1`, `-e TEXT` ... what
/// follows is not more flags): stapvm's, and stap's `-p`, `-m`, `-r`.
const VALUE_OPTIONS: &str = "eDoTSxcGIdpmr";

/// The subcommands' names (and clap's own words), which a command line
/// starts with when it is not stap's form.
const SUBCOMMANDS: [&str; 15] = [
    "compile",
    "doctor",
    "boot",
    "completions",
    "load",
    "run",
    "check",
    "dump",
    "list",
    "debug",
    "help",
    "-h",
    "--help",
    "-V",
    "--version",
];

/// stap's command line in stapvm's: `stapvm [OPTIONS] SCRIPT [ARGS]` and
/// `stapvm -e TEXT ...` are `stapvm run ...`; `-p N` (before any `--`)
/// stops after pass N as stap does: 1 `check --parse-only`, 2 `check`,
/// 3 `compile --disasm` (the bytecode where stap prints C), 4 `compile`,
/// 5 `run`; `-l`/`-L PATTERN` are `list -l`/`list -L`. A command line
/// that starts with a subcommand is left as it is. An `-p` value other
/// than 1 to 5 is an error (stap's message).
pub fn stap_style(mut args: Vec<String>) -> Result<Vec<String>, String> {
    let Some(first) = args.get(1) else {
        return Ok(args);
    };
    if SUBCOMMANDS.contains(&first.as_str()) {
        return Ok(args);
    }
    let mut pass = None;
    let mut list = false;
    let mut i = 1;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            break;
        }
        if a == "-l" || a == "-L" {
            list = true;
        }
        let value = if a == "-p" {
            match args.get(i + 1) {
                Some(v) => Some((v.clone(), 2)),
                None => return Err("option -p needs a pass number (1-5).".to_string()),
            }
        } else {
            a.strip_prefix("-p")
                .filter(|v| !v.is_empty() && !a.starts_with("--"))
                .map(|v| (v.to_string(), 1))
        };
        match value {
            Some((v, n)) => {
                let p: u8 = match v.parse() {
                    Ok(p @ 1..=5) => p,
                    _ => return Err(format!("Invalid pass number '{v}' (should be 1-5).")),
                };
                pass = Some(p);
                args.drain(i..i + n);
            }
            None => {
                // Skip an option's value (`-e TEXT`, `-D X=1`), so that
                // a value of `-p…` is not taken for the option.
                if a.len() == 2 && a.starts_with('-') && VALUE_OPTIONS.contains(&a[1..]) {
                    i += 1;
                }
                i += 1;
            }
        }
    }
    let head: &[&str] = match (list, pass) {
        (true, _) => &["list"],
        (false, Some(1)) => &["check", "--parse-only"],
        (false, Some(2)) => &["check"],
        (false, Some(3)) => &["compile", "--disasm"],
        (false, Some(4)) => &["compile"],
        (false, _) => &["run"],
    };
    let rest = args.split_off(1);
    args.extend(head.iter().map(|s| s.to_string()));
    args.extend(rest);
    Ok(args)
}

/// The guru-mode option the command line asks for, if any (before any
/// `--`): `-g`, alone or in a group of flags (`-gp4`, `-wg`), or
/// `--suppress-time-limits`, which stap allows only with `-g`. stapvm
/// refuses both before parsing the rest: it runs only verified bytecode
/// and has no guru mode (`compiler::NO_GURU`).
pub fn wants_guru<S: AsRef<str>>(args: &[S]) -> Option<&'static str> {
    let mut skip_value = false;
    for a in args.iter().skip(1).map(AsRef::as_ref) {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if a == "--" {
            break;
        }
        if a == "--suppress-time-limits" {
            return Some("--suppress-time-limits");
        }
        let Some(group) = a.strip_prefix('-').filter(|g| !g.starts_with('-')) else {
            continue;
        };
        for (i, c) in group.char_indices() {
            if c == 'g' {
                return Some("-g");
            }
            if VALUE_OPTIONS.contains(c) {
                // The value is the rest of the group, or the next word.
                skip_value = i + c.len_utf8() == group.len();
                break;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn stap(a: &[&str]) -> Result<Vec<String>, String> {
        let mut v = vec!["stapvm".to_string()];
        v.extend(a.iter().map(|s| s.to_string()));
        stap_style(v).map(|v| v[1..].to_vec())
    }

    #[test]
    fn stap_command_lines_become_subcommands() {
        let ok = |a: &[&str], want: &[&str]| assert_eq!(stap(a).unwrap(), want, "{a:?}");
        ok(
            &["-e", "probe begin { exit() }"],
            &["run", "-e", "probe begin { exit() }"],
        );
        ok(&["x.stp", "1", "foo"], &["run", "x.stp", "1", "foo"]);
        ok(
            &["-v", "-T", "5", "x.stp"],
            &["run", "-v", "-T", "5", "x.stp"],
        );
        ok(&["-p", "1", "x.stp"], &["check", "--parse-only", "x.stp"]);
        ok(
            &["-p2", "-e", "probe begin {}"],
            &["check", "-e", "probe begin {}"],
        );
        ok(&["-p3", "x.stp"], &["compile", "--disasm", "x.stp"]);
        ok(
            &["-w", "-p", "4", "x.stp", "-o", "y.stpb"],
            &["compile", "-w", "x.stp", "-o", "y.stpb"],
        );
        ok(&["-p5", "x.stp"], &["run", "x.stp"]);
        ok(&["-L", "syscall.open"], &["list", "-L", "syscall.open"]);
        // A -p after -- or as an option's value is the script's.
        ok(&["x.stp", "--", "-p4"], &["run", "x.stp", "--", "-p4"]);
        ok(&["-e", "-p4"], &["run", "-e", "-p4"]);
        // Subcommands stay as they are.
        ok(&["compile", "-p4"], &["compile", "-p4"]);
        ok(&["--version"], &["--version"]);
        assert_eq!(stap(&[]).unwrap(), Vec::<String>::new());
        assert_eq!(
            stap(&["-p", "6", "x.stp"]).unwrap_err(),
            "Invalid pass number '6' (should be 1-5)."
        );
        assert!(stap(&["-p"]).is_err());
    }

    #[test]
    fn every_subcommand_is_known_to_stap_style() {
        for c in Cli::command().get_subcommands() {
            assert!(SUBCOMMANDS.contains(&c.get_name()), "{}", c.get_name());
        }
    }

    #[test]
    fn guru_is_seen_anywhere_before_dashdash() {
        let g = |a: &[&str]| wants_guru(a);
        assert_eq!(g(&["stapvm", "-g", "x.stp"]), Some("-g"));
        assert_eq!(g(&["stapvm", "run", "x.stp", "-g"]), Some("-g"));
        assert_eq!(g(&["stapvm", "compile", "-gp4", "x.stp"]), Some("-g"));
        assert_eq!(g(&["stapvm", "compile", "-wg", "x.stp"]), Some("-g"));
        assert_eq!(
            g(&["stapvm", "compile", "--suppress-time-limits", "x.stp"]),
            Some("--suppress-time-limits")
        );
        assert_eq!(g(&["stapvm", "run", "x.stp", "--", "-g"]), None);
        assert_eq!(g(&["stapvm", "run", "x.stp"]), None);
        // Values of options are not flags.
        assert_eq!(g(&["stapvm", "run", "-e", "-g"]), None);
        assert_eq!(g(&["stapvm", "run", "-Ggx=1", "x.stp"]), None);
        assert_eq!(g(&["stapvm", "run", "-I", "-g", "x.stp"]), None);
        assert_eq!(g(&["stapvm", "run", "-Itapset/", "-g"]), Some("-g"));
    }

    #[test]
    fn stap_flags_of_the_corpus_are_accepted() {
        let cli = Cli::try_parse_from([
            "stapvm",
            "compile",
            "-Itapset/",
            "-Gsize=65536",
            "-u",
            "-w",
            "--all-modules",
            "x.stp",
            "-c",
            "stap -V",
            "-d",
            "/usr/bin/stap",
            "--ldd",
            "--compatible=2.9",
            "arg1",
        ])
        .unwrap();
        let Command::Compile(c) = cli.command else {
            panic!("not compile")
        };
        assert_eq!(c.script.include, vec![PathBuf::from("tapset/")]);
        assert_eq!(c.script.globals, vec!["size=65536"]);
        assert!(c.script.unelided && c.script.no_warnings);
        assert!(c.script.all_modules && c.script.ldd);
        assert_eq!(c.script.symbols, vec!["/usr/bin/stap"]);
        assert_eq!(c.script.compatible.as_deref(), Some("2.9"));
        assert_eq!(c.later.cmd.as_deref(), Some("stap -V"));
        assert_eq!(c.script.positional, vec!["x.stp", "arg1"]);
        let cli = Cli::try_parse_from(["stapvm", "check", "x.stp", "-x", "42"]).unwrap();
        let Command::Check(k) = cli.command else {
            panic!("not check")
        };
        assert_eq!(k.later.target_pid, Some(42));
        let cli = Cli::try_parse_from(["stapvm", "run", "-G", "x=1", "-e", "probe begin{}"]);
        assert!(cli.is_ok());
    }

    #[test]
    fn definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn run_takes_script_then_arguments() {
        let cli = Cli::try_parse_from([
            "stapvm",
            "run",
            "-D",
            "MAXACTION=5",
            "x.stp",
            "a",
            "-T",
            "5",
            "-3",
            "--",
            "-b",
        ])
        .unwrap();
        let Command::Run(r) = cli.command else {
            panic!("not run")
        };
        assert_eq!(r.session.timeout, Some(5));
        assert_eq!(r.script.defines, vec!["MAXACTION=5"]);
        assert_eq!(r.script.positional, vec!["x.stp", "a", "-3", "-b"]);
    }

    #[test]
    fn run_takes_x_or_c() {
        let cli = Cli::try_parse_from(["stapvm", "run", "x.stp", "-c", "ls -l /"]).unwrap();
        let Command::Run(r) = cli.command else {
            panic!("not run")
        };
        assert_eq!(r.session.cmd.as_deref(), Some("ls -l /"));
        let cli = Cli::try_parse_from(["stapvm", "load", "x.stpb", "-x", "42"]).unwrap();
        let Command::Load(l) = cli.command else {
            panic!("not load")
        };
        assert_eq!(l.session.target_pid, Some(42));
        assert!(Cli::try_parse_from(["stapvm", "run", "x.stp", "-x", "1", "-c", "ls"]).is_err());
    }

    #[test]
    fn compile_with_e_and_output() {
        let cli = Cli::try_parse_from([
            "stapvm",
            "compile",
            "-e",
            "probe begin { exit() }",
            "-o",
            "y.stpb",
        ])
        .unwrap();
        let Command::Compile(c) = cli.command else {
            panic!("not compile")
        };
        assert_eq!(c.script.expr.as_deref(), Some("probe begin { exit() }"));
        assert_eq!(c.output, Some(PathBuf::from("y.stpb")));
    }

    #[test]
    fn list_takes_l_or_big_l() {
        let cli = Cli::try_parse_from(["stapvm", "list", "-L", "syscall.open"]).unwrap();
        let Command::List(l) = cli.command else {
            panic!("not list")
        };
        assert!(l.vars);
        assert_eq!(l.patterns, vec!["syscall.open"]);
        assert!(Cli::try_parse_from(["stapvm", "list", "-l", "-L", "x"]).is_err());
        assert!(Cli::try_parse_from(["stapvm", "list"]).is_err());
    }

    #[test]
    fn boot_subcommands_parse() {
        let cli = Cli::try_parse_from(["stapvm", "boot", "add", "-D", "MAXACTION=9", "x.stp"]);
        let Command::Boot(b) = cli.unwrap().command else {
            panic!("not boot")
        };
        assert_eq!(b.root, PathBuf::from("/"));
        let crate::boot::BootCommand::Add(a) = b.command else {
            panic!("not add")
        };
        assert_eq!(a.script.positional, vec!["x.stp"]);
        assert_eq!(a.script.defines, vec!["MAXACTION=9"]);
        for args in [
            &["list"][..],
            &["show", "x"],
            &["stop", "x"],
            &["remove", "x", "--no-update"],
        ] {
            let mut v = vec!["stapvm", "boot"];
            v.extend(args);
            assert!(Cli::try_parse_from(&v).is_ok(), "{v:?}");
        }
        assert_eq!(stap(&["boot", "list"]).unwrap(), ["boot", "list"]);
    }

    #[test]
    fn completions_takes_a_known_shell() {
        let cli = Cli::try_parse_from(["stapvm", "completions", "zsh"]).unwrap();
        let Command::Completions(c) = cli.command else {
            panic!("not completions")
        };
        assert_eq!(c.shell, Shell::Zsh);
        assert!(Cli::try_parse_from(["stapvm", "completions", "csh"]).is_err());
        assert!(Cli::try_parse_from(["stapvm", "completions"]).is_err());
        // The subcommand's name is not taken for a script.
        assert_eq!(
            stap(&["completions", "bash"]).unwrap(),
            ["completions", "bash"]
        );
    }

    #[test]
    fn debug_man_takes_pages() {
        let cli = Cli::try_parse_from([
            "stapvm",
            "debug",
            "man",
            "out",
            "--page",
            "stapvm-language.7=docs/language.md",
        ])
        .unwrap();
        let Command::Debug(DebugCommand::Man { dir, pages }) = cli.command else {
            panic!("not debug man")
        };
        assert_eq!(dir, PathBuf::from("out"));
        assert_eq!(pages.len(), 1);
        assert_eq!(pages[0].file_name(), "stapvm-language.7");
        assert!(Cli::try_parse_from(["stapvm", "debug", "man", "out", "--page", "x.md"]).is_err());
    }

    #[test]
    fn debug_load_image_parses() {
        let cli = Cli::try_parse_from(["stapvm", "debug", "load-image", "x.img"]).unwrap();
        assert!(matches!(
            cli.command,
            Command::Debug(DebugCommand::LoadImage { .. })
        ));
    }
}
