//! `stapvm`: the command-line front end. Parses the command line (cli.rs),
//! dispatches to the subcommands and turns every failure into one
//! `ERROR: ...` line on stderr and stap's exit status.

use clap::{CommandFactory, FromArgMatches};
use stapvm::cli::{self, Cli, Command, DebugCommand};
use stapvm::passlog::PassLog;
use stapvm::{device, list, script, session};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The allocator: mimalloc. Compiling is allocation-bound (the ASTs of the
/// script and the tapsets it pulls in: glibc's malloc and free were ~39 %
/// of the instructions of a large compile, docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::time::Instant;
use thiserror::Error;
use vm_spec::container;
use vm_spec::program::Program;

/// Everything that ends a command with an error.
#[derive(Debug, Error)]
enum Error {
    /// Reading or compiling the script (compiler diagnostics are already
    /// printed for `Failed`).
    #[error(transparent)]
    Script(#[from] script::Error),
    /// Running a session.
    #[error(transparent)]
    Session(#[from] session::Error),
    /// A file could not be read or written.
    #[error("cannot {what} {path}: {err}")]
    File {
        /// "read" or "write".
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// The error.
        err: std::io::Error,
    },
    /// `list` failed.
    #[error(transparent)]
    List(#[from] list::Error),
    /// A session failed and its message is printed (with the script's
    /// source line, `script::load_error_source`).
    #[error(transparent)]
    Reported(session::Error),
    /// `stapvm boot` failed.
    #[error(transparent)]
    Boot(#[from] stapvm::boot::Error),
    /// The man pages could not be written.
    #[error(transparent)]
    Man(#[from] stapvm::manpages::Error),
    /// A .stpb file is not a program.
    #[error("{path}: {err}")]
    Container {
        /// The path.
        path: PathBuf,
        /// The error.
        err: container::ContainerError,
    },
}

impl Error {
    /// Compiler failures were printed by the compiler itself.
    fn already_reported(&self) -> bool {
        matches!(
            self,
            Error::Script(script::Error::Failed(_))
                | Error::List(list::Error::Failed(_))
                | Error::Reported(_)
                | Error::Boot(stapvm::boot::Error::Script(script::Error::Failed(_)))
        )
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|err| Error::File {
        what: "read",
        path: path.to_path_buf(),
        err,
    })
}

fn read_program(path: &Path) -> Result<Program, Error> {
    container::read(&read_file(path)?).map_err(|err| Error::Container {
        path: path.to_path_buf(),
        err,
    })
}

/// Reads the script `a` names and compiles it (compile, run), printing
/// the pass lines of `-v` into `log`.
fn compile_script(
    a: &cli::ScriptArgs,
    log: &mut PassLog,
) -> Result<(script::Source, Program), Error> {
    let src = script::read_source(a)?;
    let prog = script::compile_observed(&src, a, &mut |r| log.report(r))?;
    Ok((src, prog))
}

/// -x / -c / -t given where nothing runs: a note that they belong to
/// `load` (stap, too, hands -x and -c to staprun, not to the module it
/// builds).
fn note_later_target(a: &cli::LaterTargetArgs, program: &Path) {
    let mut opts = Vec::new();
    if let Some(pid) = a.target_pid {
        opts.push(format!("-x {pid}"));
    }
    if let Some(cmd) = &a.cmd {
        opts.push(format!("-c '{cmd}'"));
    }
    if a.timing {
        opts.push("-t".to_string());
    }
    if opts.is_empty() {
        return;
    }
    let opts = opts.join(" ");
    eprintln!(
        "stapvm: note: {opts} takes effect when the program is loaded: stapvm load {opts} {}",
        program.display()
    );
}

fn cmd_compile(a: &cli::CompileArgs) -> Result<u8, Error> {
    let t0 = Instant::now();
    // stap -p3 (--disasm) stops after pass 3.
    let mut log = PassLog::new(a.later.verbose > 0, if a.disasm { 3 } else { 4 });
    let (src, prog) = compile_script(&a.script, &mut log)?;
    if a.later.verbose > 1 {
        let insns: usize = prog.handlers.iter().map(|h| h.code.len()).sum();
        eprintln!(
            "stapvm: compiled {} in {:.1} ms: {} probes, {} handlers, {} instructions",
            src.name,
            t0.elapsed().as_secs_f64() * 1000.0,
            prog.probes.len(),
            prog.handlers.len(),
            insns
        );
    }
    if a.disasm {
        print!("{}", vm_spec::disasm::disassemble(&prog));
        return Ok(0);
    }
    let out = a
        .output
        .clone()
        .unwrap_or_else(|| script::default_output(&src));
    std::fs::write(&out, container::write(&prog)).map_err(|err| Error::File {
        what: "write",
        path: out.clone(),
        err,
    })?;
    log.pass4(&format!("verified and wrote \"{}\"", out.display()));
    if a.output.is_none() {
        // Where it went, as stap -p4 prints its module's name.
        println!("{}", out.display());
    }
    note_later_target(&a.later, &out);
    Ok(0)
}

/// Runs `prog`; a failure to resolve a use of the script is printed with
/// the script's line and a caret under the use.
fn run_session(
    prog: &Program,
    opts: &cli::SessionArgs,
    compile_time: Option<std::time::Duration>,
) -> Result<i32, Error> {
    session::run(prog, opts, compile_time).map_err(|e| match script::load_error_source(prog, &e) {
        Some(source) => {
            eprintln!("ERROR: {e}");
            eprint!("{source}");
            Error::Reported(e)
        }
        None => Error::Session(e),
    })
}

fn cmd_run(a: &cli::RunArgs) -> Result<u8, Error> {
    let t0 = Instant::now();
    let mut log = PassLog::new(a.session.verbose > 0, 5);
    let (_, prog) = compile_script(&a.script, &mut log)?;
    log.pass4("verified the bytecode");
    let compile_time = t0.elapsed();
    log.start_run();
    let status = run_session(&prog, &a.session, Some(compile_time))?;
    log.run_completed();
    if status != 0 {
        // stap's closing line when the run pass fails (staprun, like
        // `stapvm load`, does not print it).
        eprintln!("Pass 5: run failed.  [man error::pass5]");
    }
    Ok(status as u8)
}

fn cmd_load(a: &cli::LoadArgs) -> Result<u8, Error> {
    let prog = read_program(&a.program)?;
    let status = run_session(&prog, &a.session, None)?;
    Ok(status as u8)
}

fn cmd_check(a: &cli::CheckArgs) -> Result<u8, Error> {
    let src = script::read_source(&a.script)?;
    let t0 = Instant::now();
    // stap -p1 / -p2: the passes up to 1 or 2.
    let mut log = PassLog::new(a.later.verbose > 0, if a.parse_only { 1 } else { 2 });
    script::check_observed(&src, &a.script, a.parse_only, &mut |r| log.report(r))?;
    if a.later.verbose > 1 {
        eprintln!(
            "stapvm: checked {} in {:.1} ms",
            src.name,
            t0.elapsed().as_secs_f64() * 1000.0
        );
    }
    Ok(0)
}

fn cmd_dump(a: &cli::DumpArgs) -> Result<u8, Error> {
    let mut prog = read_program(&a.program)?;
    if a.kernel {
        prog = session::resolve_on_kernel(&prog, false)?.program;
    }
    print!("{}", vm_spec::disasm::disassemble(&prog));
    Ok(0)
}

/// `list`: stap -l / -L.
fn cmd_list(a: &cli::ListArgs) -> Result<u8, Error> {
    for line in list::list(&a.patterns, a.vars)? {
        println!("{line}");
    }
    Ok(0)
}

/// `debug load-image`: the verdict of the kernel on raw image bytes, in the
/// exact form the guest harness expects.
fn cmd_load_image(file: &Path) -> Result<u8, Error> {
    let image = read_file(file)?;
    let dev = match device::Device::open() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("ERROR: {e}");
            return Ok(2);
        }
    };
    match dev.load(&image) {
        Ok(session) => {
            drop(session);
            println!("accepted");
        }
        Err(e) => println!(
            "refused: {} ({}): {}",
            device::errno_name(e.errno),
            e.errno,
            e.log
        ),
    }
    Ok(0)
}

/// Whether `c` only prints (compile, check, dump, list, doctor,
/// completions, the man pages, boot list/show): then a closed standard
/// output ends it quietly, as `cat`, killed by SIGPIPE (status 141 in the
/// shell), instead of println!'s panic. A session (run, load) keeps
/// SIGPIPE ignored: its output writer discards output once a write fails
/// and the session goes on to its end probes, and the signal self-pipe
/// (session.rs) is its own and never closed; a boot command that changes
/// the machine is not cut short either.
fn only_prints(c: &Command) -> bool {
    use stapvm::boot::BootCommand;
    match c {
        Command::Compile(_)
        | Command::Check(_)
        | Command::Dump(_)
        | Command::List(_)
        | Command::Doctor(_)
        | Command::Completions(_)
        | Command::Debug(DebugCommand::Man { .. }) => true,
        Command::Boot(b) => matches!(b.command, BootCommand::List | BootCommand::Show { .. }),
        Command::Run(_) | Command::Load(_) | Command::Debug(DebugCommand::LoadImage { .. }) => {
            false
        }
    }
}

/// Gives SIGPIPE back its default action (Rust ignores it at start-up, so
/// that writes fail with EPIPE).
fn default_sigpipe() {
    // SAFETY: signal(2) with SIG_DFL has no preconditions; no handler runs.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn dispatch(cli: &Cli) -> Result<u8, Error> {
    match &cli.command {
        Command::Compile(a) => cmd_compile(a),
        Command::Load(a) => cmd_load(a),
        Command::Run(a) => cmd_run(a),
        Command::Check(a) => cmd_check(a),
        Command::Dump(a) => cmd_dump(a),
        Command::List(a) => cmd_list(a),
        Command::Doctor(a) => {
            // SAFETY: geteuid has no preconditions and cannot fail.
            let euid = unsafe { libc::geteuid() };
            let checks = stapvm::doctor::run(&a.root, euid);
            print!("{}", stapvm::doctor::render(&checks));
            let failed = checks
                .iter()
                .any(|c| c.state == stapvm::doctor::State::Fail);
            Ok(u8::from(failed))
        }
        Command::Boot(a) => Ok(stapvm::boot::run(a)?),
        Command::Completions(a) => {
            // Generated in memory: clap_complete panics on a failed write
            // (`stapvm completions bash | head`).
            let text = stapvm::completions::script(a.shell);
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|err| Error::File {
                    what: "write",
                    path: PathBuf::from("<stdout>"),
                    err,
                })?;
            Ok(0)
        }
        Command::Debug(DebugCommand::LoadImage { file }) => cmd_load_image(file),
        Command::Debug(DebugCommand::Man { dir, pages }) => {
            let cmd = Cli::command().version(version());
            for path in stapvm::manpages::write(cmd, dir, pages)? {
                println!("{}", path.display());
            }
            Ok(0)
        }
    }
}

/// `--version`: the CLI's version, and the formats it reads and writes.
fn version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| {
        format!(
            "{} (.stpb format {}, kernel image ABI {})",
            env!("CARGO_PKG_VERSION"),
            container::STPB_VERSION,
            vm_spec::abi::STP_IMAGE_VERSION
        )
    })
}

fn main() -> ExitCode {
    if let Some(opt) = cli::wants_guru(&std::env::args().collect::<Vec<_>>()) {
        let what = if opt == "-g" {
            "-g (guru mode) is not available".to_string()
        } else {
            format!("{opt} requires guru mode (-g), which is not available")
        };
        eprintln!("ERROR: {what}: {}", compiler::NO_GURU);
        return ExitCode::from(1);
    }
    let args = match cli::stap_style(std::env::args().collect()) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("ERROR: {e}");
            return ExitCode::from(1);
        }
    };
    let matches = Cli::command().version(version()).get_matches_from(args);
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    if only_prints(&cli.command) {
        default_sigpipe();
    }
    match dispatch(&cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if !e.already_reported() {
                eprintln!("ERROR: {e}");
            }
            ExitCode::from(1)
        }
    }
}
