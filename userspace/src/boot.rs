//! `stapvm boot`: boot-time tracing (docs/boot.md). `add` installs a
//! compiled program as `/etc/stapvm/boot/NAME.stpb` and rebuilds the
//! initramfs (`update-initramfs -u -k RELEASE`); stapvm's initramfs-tools
//! hook (packaging/initramfs-tools/hooks/stapvm) then puts the CLI,
//! stapvm.ko and every installed program into the image, and its init-top
//! script starts `stapvm load -o /run/stapvm/boot/NAME.out` for each before
//! the real init runs, recording the loader's pid in `NAME.pid` (/run is
//! moved into the real root, so both survive the switch). After boot,
//! `list` shows the programs and their sessions, `show` prints a session's
//! output so far, `stop` sends it SIGINT (its `end` probes run), waits for
//! it and prints its output, `remove` uninstalls a program.
//!
//! Every path is a constant below, read below a root directory (`/` on a
//! real machine, a temporary tree in the tests: the hidden `--root`); the
//! processes are this machine's (`/proc`, kill(2)).
use crate::cli::ScriptArgs;
use clap::{Args, Subcommand};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use thiserror::Error;
use vm_spec::container;
use vm_spec::program::Program;

/// The installed programs, `NAME.stpb` (also their place in the initramfs).
pub const SCRIPTS_DIR: &str = "/etc/stapvm/boot";
/// The boot sessions' files: `NAME.out` (the output, `-o`), `NAME.err`
/// (the loader's standard error), `NAME.pid` (the loader's pid), written
/// by the init-top script.
pub const SESSIONS_DIR: &str = "/run/stapvm/boot";
/// stapvm's mkinitramfs hook, where the package installs it and where an
/// administrator may put a copy.
pub const HOOKS: [&str; 2] = [
    "/usr/share/initramfs-tools/hooks/stapvm",
    "/etc/initramfs-tools/hooks/stapvm",
];
/// initramfs-tools' command that rebuilds an initramfs.
pub const UPDATE_INITRAMFS: &str = "/usr/sbin/update-initramfs";
/// The kernels' module trees, `/lib/modules/RELEASE`.
pub const MODULES_DIR: &str = "/lib/modules";
/// The initramfs images, `/boot/initrd.img-RELEASE`.
pub const INITRD_PREFIX: &str = "/boot/initrd.img-";
/// The running kernel's release.
pub const OSRELEASE: &str = "/proc/sys/kernel/osrelease";
/// The names the module's file may have (compressed or not).
const MODULE_FILES: [&str; 4] = ["stapvm.ko", "stapvm.ko.xz", "stapvm.ko.zst", "stapvm.ko.gz"];
/// How long `stop` waits for the session to end after SIGINT (its `end`
/// probes print the summary).
pub const STOP_WAIT: Duration = Duration::from_secs(60);
/// How deep below `/lib/modules/RELEASE` the module is looked for.
const MODULE_DEPTH: usize = 6;
/// The longest program name.
const NAME_MAX: usize = 64;

/// `stapvm boot`.
#[derive(Debug, Args)]
pub struct BootArgs {
    /// The files below this directory instead of / (tests).
    #[arg(
        long = "root",
        value_name = "DIR",
        default_value = "/",
        global = true,
        hide = true
    )]
    pub root: PathBuf,
    /// What to do.
    #[command(subcommand)]
    pub command: BootCommand,
}

/// The `stapvm boot` subcommands.
#[derive(Debug, Subcommand)]
pub enum BootCommand {
    /// Install a program (.stpb, or a script compiled first) to run from
    /// the initramfs at every boot, and rebuild the initramfs.
    Add(Box<AddArgs>),
    /// The installed programs, and for each its boot session: running (pid)
    /// or not, and its output file.
    List,
    /// Print a boot session's output so far.
    Show {
        /// The program's name (`stapvm boot list`).
        name: String,
    },
    /// Stop a boot session (SIGINT: its end probes run), wait for it and
    /// print its output.
    Stop {
        /// The program's name (`stapvm boot list`).
        name: String,
    },
    /// Uninstall a program and rebuild the initramfs (a running session
    /// goes on until `stop` or shutdown).
    Remove {
        /// The program's name (`stapvm boot list`).
        name: String,
        /// Do not run update-initramfs (the next one leaves it out).
        #[arg(long = "no-update")]
        no_update: bool,
        /// The kernel whose initramfs is rebuilt (default: the newest with
        /// an initramfs, as `update-initramfs -u` picks).
        #[arg(long = "kernel", value_name = "RELEASE")]
        kernel: Option<String>,
    },
}

/// `stapvm boot add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The program: FILE.stpb as it is, or a script (FILE.stp, -e) with its
    /// compile options (-D, -G, ...) and arguments, compiled first.
    #[command(flatten)]
    pub script: ScriptArgs,
    /// The name it is installed under (default: the file's name without
    /// its extension).
    #[arg(long = "name", value_name = "NAME")]
    pub name: Option<String>,
    /// Do not run update-initramfs (the next one includes the program).
    #[arg(long = "no-update")]
    pub no_update: bool,
    /// The kernel whose initramfs is rebuilt and which must have stapvm.ko
    /// (default: the newest with an initramfs, as `update-initramfs -u`
    /// picks).
    #[arg(long = "kernel", value_name = "RELEASE")]
    pub kernel: Option<String>,
}

/// Why a boot command failed.
#[derive(Debug, Error)]
pub enum Error {
    /// update-initramfs is missing.
    #[error("initramfs-tools is not installed ({0} is missing): boot-time tracing puts stapvm into the initramfs it builds (apt install initramfs-tools)")]
    NoInitramfsTools(String),
    /// stapvm's hook is missing.
    #[error("stapvm's initramfs-tools hook is not installed ({0} is missing): it comes with stapvm's Debian package")]
    NoHook(String),
    /// No kernel release to work for.
    #[error("no kernel to build an initramfs for: no {INITRD_PREFIX}* and no {OSRELEASE}; name one with --kernel")]
    NoKernel,
    /// stapvm.ko is not installed for the kernel.
    #[error("stapvm.ko is not installed for kernel {release} (none below {dir}): the initramfs could not load it; install stapvm-modules-{release} or stapvm-dkms")]
    NoModule {
        /// The kernel release.
        release: String,
        /// Where it was looked for.
        dir: String,
    },
    /// A name that cannot be a file name in the boot directories.
    #[error("invalid boot program name '{0}': 1 to 64 letters, digits, '_', '-' or '.', not starting with '.'")]
    BadName(String),
    /// `-e` without `--name`.
    #[error("a script given with -e needs --name NAME")]
    NeedName,
    /// No program of that name is installed.
    #[error(
        "no boot program named '{name}' ({path} does not exist; `stapvm boot list` shows them)"
    )]
    NoProgram {
        /// The name.
        name: String,
        /// Its file.
        path: String,
    },
    /// The session has written no output file.
    #[error("boot session '{name}' has no output ({path} does not exist): it has not run since boot (is the initramfs updated, and the machine rebooted since?); its errors would be in {err}")]
    NoOutput {
        /// The name.
        name: String,
        /// The output file.
        path: String,
        /// The standard error file.
        err: String,
    },
    /// A file could not be read or written.
    #[error("cannot {what} {path}: {err}")]
    Io {
        /// What was done.
        what: &'static str,
        /// The path.
        path: String,
        /// The error.
        err: io::Error,
    },
    /// A .stpb file is not a program.
    #[error("{path}: {err}")]
    Container {
        /// The path.
        path: String,
        /// The error.
        err: container::ContainerError,
    },
    /// Reading or compiling the script.
    #[error(transparent)]
    Script(#[from] crate::script::Error),
    /// update-initramfs could not be started.
    #[error("cannot run {cmd}: {err}")]
    UpdateSpawn {
        /// The command.
        cmd: String,
        /// The error.
        err: io::Error,
    },
    /// update-initramfs failed.
    #[error("{cmd} failed ({status}); the program is installed in {SCRIPTS_DIR}, the initramfs is not updated")]
    UpdateFailed {
        /// The command line.
        cmd: String,
        /// Its exit status.
        status: std::process::ExitStatus,
    },
    /// SIGINT could not be sent.
    #[error("cannot send SIGINT to boot session '{name}' (pid {pid}): {err}")]
    Signal {
        /// The name.
        name: String,
        /// The loader's pid.
        pid: i32,
        /// The error.
        err: io::Error,
    },
    /// The session did not end in time.
    #[error("boot session '{name}' (pid {pid}) did not stop within {} s of SIGINT; its output so far is in {out}", STOP_WAIT.as_secs())]
    StopTimeout {
        /// The name.
        name: String,
        /// The loader's pid.
        pid: i32,
        /// The output file.
        out: String,
    },
}

/// `path` (absolute, one of the constants) below `root`.
pub fn under(root: &Path, path: &str) -> PathBuf {
    root.join(path.trim_start_matches('/'))
}

fn io_err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> Error + 'a {
    move |err| Error::Io {
        what,
        path: path.display().to_string(),
        err,
    }
}

/// Checks a program name: it becomes a file name here and in the
/// initramfs, and a word of the init-top shell script.
pub fn check_name(name: &str) -> Result<(), Error> {
    let ok = !name.is_empty()
        && name.len() <= NAME_MAX
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(Error::BadName(name.to_string()))
    }
}

/// The files of the program or session `name`.
#[derive(Debug, Clone)]
pub struct Files {
    /// The installed program.
    pub program: PathBuf,
    /// The session's output.
    pub out: PathBuf,
    /// The loader's standard error.
    pub err: PathBuf,
    /// The loader's pid.
    pub pid: PathBuf,
}

impl Files {
    /// The files of `name` below `root`.
    pub fn new(root: &Path, name: &str) -> Self {
        let s = under(root, SESSIONS_DIR);
        Files {
            program: under(root, SCRIPTS_DIR).join(format!("{name}.stpb")),
            out: s.join(format!("{name}.out")),
            err: s.join(format!("{name}.err")),
            pid: s.join(format!("{name}.pid")),
        }
    }
}

/// Release strings compared as Debian's `linux-version sort` does for the
/// usual cases: runs of digits as numbers, the rest as text.
fn version_key(v: &str) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    let mut rest = v;
    while !rest.is_empty() {
        let text_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (text, tail) = rest.split_at(text_len);
        let num_len = tail
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(tail.len());
        let (num, tail) = tail.split_at(num_len);
        out.push((num.parse().unwrap_or(u64::MAX), text.to_string()));
        rest = tail;
    }
    out
}

/// The kernel release the initramfs is built for: `given`, else the newest
/// with an initramfs (`update-initramfs -u`'s choice), else the running one.
pub fn target_release(root: &Path, given: Option<&str>) -> Result<String, Error> {
    if let Some(r) = given {
        return Ok(r.to_string());
    }
    let initrd = under(root, INITRD_PREFIX);
    let (dir, prefix) = match (initrd.parent(), initrd.file_name()) {
        (Some(d), Some(p)) => (d.to_path_buf(), p.to_string_lossy().into_owned()),
        _ => return Err(Error::NoKernel),
    };
    let newest = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            let r = n.strip_prefix(&prefix)?;
            (!r.is_empty() && !r.ends_with(".bak") && !r.ends_with(".dpkg-bak"))
                .then(|| r.to_string())
        })
        .max_by_key(|r| version_key(r));
    if let Some(r) = newest {
        return Ok(r);
    }
    std::fs::read_to_string(under(root, OSRELEASE))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .ok_or(Error::NoKernel)
}

/// stapvm.ko (any compression) below `/lib/modules/RELEASE`, if installed.
pub fn find_module(root: &Path, release: &str) -> Option<PathBuf> {
    fn walk(dir: &Path, depth: usize) -> Option<PathBuf> {
        let mut subdirs = Vec::new();
        for e in std::fs::read_dir(dir).ok()?.flatten() {
            let p = e.path();
            let name = e.file_name();
            let ft = e.file_type().ok()?;
            if ft.is_dir() {
                subdirs.push(p);
            } else if MODULE_FILES.iter().any(|m| name == *m) {
                return Some(p);
            }
        }
        if depth == 0 {
            return None;
        }
        subdirs.sort();
        subdirs.iter().find_map(|d| walk(d, depth - 1))
    }
    walk(&under(root, MODULES_DIR).join(release), MODULE_DEPTH)
}

/// initramfs-tools and stapvm's hook are there, and stapvm.ko for
/// `release`.
pub fn check_system(root: &Path, release: &str) -> Result<(), Error> {
    if !under(root, UPDATE_INITRAMFS).exists() {
        return Err(Error::NoInitramfsTools(UPDATE_INITRAMFS.to_string()));
    }
    if !HOOKS.iter().any(|h| under(root, h).exists()) {
        return Err(Error::NoHook(HOOKS[0].to_string()));
    }
    if find_module(root, release).is_none() {
        return Err(Error::NoModule {
            release: release.to_string(),
            dir: format!("{MODULES_DIR}/{release}"),
        });
    }
    Ok(())
}

/// Runs `update-initramfs -u -k RELEASE` (below `root`: a test puts a
/// stand-in there).
fn update_initramfs(root: &Path, release: &str, out: &mut dyn Write) -> Result<(), Error> {
    let cmd = under(root, UPDATE_INITRAMFS);
    let line = format!("{} -u -k {release}", cmd.display());
    let _ = writeln!(out, "stapvm boot: {line}");
    let _ = out.flush();
    let status = std::process::Command::new(&cmd)
        .args(["-u", "-k", release])
        .status()
        .map_err(|err| Error::UpdateSpawn {
            cmd: cmd.display().to_string(),
            err,
        })?;
    if !status.success() {
        return Err(Error::UpdateFailed { cmd: line, status });
    }
    Ok(())
}

/// The program `add` installs and its default name; a script is compiled
/// for `release` (the kernel whose initramfs runs it) unless `-r` names
/// another.
fn program_of(a: &AddArgs, release: &str) -> Result<(Program, Option<String>), Error> {
    let stem = a.script.positional.first().and_then(|f| {
        Path::new(f)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
    });
    let first = a.script.positional.first();
    if let (None, Some(f)) = (&a.script.expr, first) {
        if f.ends_with(".stpb") {
            let bytes = std::fs::read(f).map_err(io_err("read", Path::new(f)))?;
            let prog = container::read(&bytes).map_err(|err| Error::Container {
                path: f.clone(),
                err,
            })?;
            return Ok((prog, stem));
        }
    }
    let src = crate::script::read_source(&a.script)?;
    let mut script = a.script.clone();
    script.release.get_or_insert_with(|| release.to_string());
    let prog = crate::script::compile(&src, &script)?;
    let stem = if a.script.expr.is_some() || first.is_some_and(|f| f == "-") {
        None
    } else {
        stem
    };
    Ok((prog, stem))
}

/// `stapvm boot add`.
pub fn add(root: &Path, a: &AddArgs, out: &mut dyn Write) -> Result<(), Error> {
    if let Some(n) = &a.name {
        check_name(n)?;
    }
    let release = target_release(root, a.kernel.as_deref())?;
    check_system(root, &release)?;
    let (prog, stem) = program_of(a, &release)?;
    let name = a.name.clone().or(stem).ok_or(Error::NeedName)?;
    check_name(&name)?;
    let files = Files::new(root, &name);
    let dir = under(root, SCRIPTS_DIR);
    std::fs::create_dir_all(&dir).map_err(io_err("create", &dir))?;
    let replaced = files.program.exists();
    // Written next to its place and renamed: an initramfs built meanwhile
    // sees the old program or the new one, never a part.
    let tmp = dir.join(format!(".{name}.stpb.tmp"));
    std::fs::write(&tmp, container::write(&prog)).map_err(io_err("write", &tmp))?;
    std::fs::rename(&tmp, &files.program).map_err(io_err("write", &files.program))?;
    let _ = writeln!(
        out,
        "stapvm boot: {} {} ({} probes), output at boot in {}",
        if replaced { "replaced" } else { "installed" },
        files.program.display(),
        prog.probes.len(),
        Files::new(Path::new("/"), &name).out.display()
    );
    if a.no_update {
        let _ = writeln!(
            out,
            "stapvm boot: the initramfs is not updated (--no-update): run update-initramfs -u -k {release}"
        );
        return Ok(());
    }
    update_initramfs(root, &release, out)
}

/// `stapvm boot remove`.
pub fn remove(
    root: &Path,
    name: &str,
    no_update: bool,
    kernel: Option<&str>,
    out: &mut dyn Write,
) -> Result<(), Error> {
    check_name(name)?;
    let files = Files::new(root, name);
    if !files.program.exists() {
        return Err(Error::NoProgram {
            name: name.to_string(),
            path: files.program.display().to_string(),
        });
    }
    let release = if no_update {
        None
    } else {
        let r = target_release(root, kernel)?;
        if !under(root, UPDATE_INITRAMFS).exists() {
            return Err(Error::NoInitramfsTools(UPDATE_INITRAMFS.to_string()));
        }
        Some(r)
    };
    std::fs::remove_file(&files.program).map_err(io_err("remove", &files.program))?;
    let _ = writeln!(out, "stapvm boot: removed {}", files.program.display());
    if let Session::Running(pid) = session(&files) {
        let _ = writeln!(
            out,
            "stapvm boot: its session (pid {pid}) goes on until `stapvm boot stop {name}` or shutdown"
        );
    }
    match release {
        Some(r) => update_initramfs(root, &r, out),
        None => Ok(()),
    }
}

/// A boot session's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Session {
    /// Its loader runs (pid).
    Running(i32),
    /// It ran and ended (its pid file is there, its loader is not).
    Ended,
    /// It has not run since boot.
    None,
}

/// Whether `pid` is a live stapvm loader (`stapvm load ...`, not a zombie
/// and not another process that took the pid since).
pub fn is_loader(pid: i32) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let argv: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
    let prog = argv
        .first()
        .map(|a| a.rsplit(|&b| b == b'/').next().unwrap_or(a))
        .unwrap_or(&[]);
    // argv[0] is stapvm's path, with an '@' in front when the init-top
    // script asked systemd to spare it.
    let named = prog.ends_with(b"stapvm");
    let loads = argv.iter().any(|a| *a == b"load");
    let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let after = s.rsplit_once(')')?.1;
            after
                .split_whitespace()
                .next()
                .map(|st| st == "Z" || st == "X")
        })
        .unwrap_or(true);
    named && loads && !zombie
}

/// The state of the session whose files are `files`.
pub fn session(files: &Files) -> Session {
    let Ok(text) = std::fs::read_to_string(&files.pid) else {
        return Session::None;
    };
    match text.trim().parse::<i32>() {
        Ok(pid) if pid > 0 && is_loader(pid) => Session::Running(pid),
        _ => Session::Ended,
    }
}

/// The installed programs' names, sorted.
pub fn installed(root: &Path) -> Result<Vec<String>, Error> {
    let dir = under(root, SCRIPTS_DIR);
    let rd = match std::fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("read", &dir)(e)),
    };
    let mut names: Vec<String> = rd
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            let stem = n.strip_suffix(".stpb")?;
            check_name(stem).ok().map(|_| stem.to_string())
        })
        .collect();
    names.sort();
    Ok(names)
}

/// `stapvm boot list`.
pub fn list(root: &Path, out: &mut dyn Write) -> Result<(), Error> {
    let names = installed(root)?;
    if names.is_empty() {
        let _ = writeln!(out, "no boot programs installed ({SCRIPTS_DIR} has none)");
        return Ok(());
    }
    for name in names {
        let files = Files::new(root, &name);
        let state = match session(&files) {
            Session::Running(pid) => format!("running (pid {pid})"),
            Session::Ended => "ended".to_string(),
            Session::None => "not run since boot".to_string(),
        };
        let output = if files.out.exists() {
            format!(", output {}", files.out.display())
        } else {
            String::new()
        };
        let _ = writeln!(out, "{name}: {state}{output}");
    }
    Ok(())
}

/// Copies the session's output to `out`.
fn print_output(files: &Files, name: &str, out: &mut dyn Write) -> Result<(), Error> {
    let mut f = std::fs::File::open(&files.out).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            Error::NoOutput {
                name: name.to_string(),
                path: files.out.display().to_string(),
                err: files.err.display().to_string(),
            }
        } else {
            io_err("read", &files.out)(e)
        }
    })?;
    io::copy(&mut f, out).map_err(io_err("read", &files.out))?;
    let _ = out.flush();
    Ok(())
}

/// The loader's error messages, on standard error, when there are any.
fn print_errors(files: &Files) {
    if let Ok(text) = std::fs::read_to_string(&files.err) {
        if !text.trim().is_empty() {
            eprint!("{text}");
        }
    }
}

/// `stapvm boot show`.
pub fn show(root: &Path, name: &str, out: &mut dyn Write) -> Result<(), Error> {
    check_name(name)?;
    let files = Files::new(root, name);
    print_output(&files, name, out)
}

/// `stapvm boot stop`: SIGINT, a bounded wait for the loader to end (its
/// end probes print), then its output. A session that is not running is
/// not an error: its output is printed.
pub fn stop(root: &Path, name: &str, out: &mut dyn Write) -> Result<(), Error> {
    check_name(name)?;
    let files = Files::new(root, name);
    match session(&files) {
        Session::Running(pid) => {
            // SAFETY: kill(2) has no memory preconditions; `pid` was just
            // checked to be a stapvm loader.
            if unsafe { libc::kill(pid, libc::SIGINT) } < 0 {
                return Err(Error::Signal {
                    name: name.to_string(),
                    pid,
                    err: io::Error::last_os_error(),
                });
            }
            let t0 = Instant::now();
            while is_loader(pid) {
                if t0.elapsed() > STOP_WAIT {
                    return Err(Error::StopTimeout {
                        name: name.to_string(),
                        pid,
                        out: files.out.display().to_string(),
                    });
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            eprintln!("stapvm boot: stopped {name} (pid {pid})");
        }
        Session::Ended => eprintln!("stapvm boot: {name} is not running (it has ended)"),
        Session::None => eprintln!("stapvm boot: {name} has not run since boot"),
    }
    print_errors(&files);
    print_output(&files, name, out)
}

/// Runs a `stapvm boot` command; the exit status.
pub fn run(a: &BootArgs) -> Result<u8, Error> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let root = a.root.as_path();
    match &a.command {
        BootCommand::Add(add_args) => add(root, add_args, &mut out)?,
        BootCommand::List => list(root, &mut out)?,
        BootCommand::Show { name } => show(root, name, &mut out)?,
        BootCommand::Stop { name } => stop(root, name, &mut out)?,
        BootCommand::Remove {
            name,
            no_update,
            kernel,
        } => remove(root, name, *no_update, kernel.as_deref(), &mut out)?,
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;

    /// A fake machine: initramfs-tools (an update-initramfs that records
    /// its arguments), stapvm's hook, two kernels with initramfs images,
    /// stapvm.ko for `with_module` only.
    fn machine(tag: &str, with_module: Option<&str>) -> PathBuf {
        let root = std::env::temp_dir().join(format!("stapvm-boot-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let mk = |p: &str, text: &str| {
            let p = under(&root, p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
            p
        };
        let upd = mk(
            UPDATE_INITRAMFS,
            "#!/bin/sh\necho \"$@\" >>\"$(dirname \"$0\")/../../update.log\"\n",
        );
        std::fs::set_permissions(&upd, std::fs::Permissions::from_mode(0o755)).unwrap();
        mk(HOOKS[0], "#!/bin/sh\n");
        mk("/boot/initrd.img-6.1.0-9-amd64", "");
        mk("/boot/initrd.img-6.1.0-10-amd64", "");
        mk("/boot/initrd.img-6.1.0-11-amd64.bak", "");
        mk("/proc/sys/kernel/osrelease", "6.1.0-9-amd64\n");
        if let Some(r) = with_module {
            mk(&format!("/lib/modules/{r}/updates/dkms/stapvm.ko.xz"), "");
        }
        root
    }

    fn boot(args: &[&str]) -> BootArgs {
        let mut v = vec!["boot"];
        v.extend(args);
        #[derive(Parser)]
        struct Top {
            #[command(flatten)]
            boot: BootArgs,
        }
        Top::try_parse_from(v).unwrap().boot
    }

    fn add_args(a: &[&str]) -> AddArgs {
        match boot(&[&["add"], a].concat()).command {
            BootCommand::Add(a) => *a,
            c => panic!("{c:?}"),
        }
    }

    fn update_log(root: &Path) -> String {
        std::fs::read_to_string(root.join("update.log")).unwrap_or_default()
    }

    #[test]
    fn names_are_file_names() {
        for ok in ["boot-summary", "a", "x_1.v2"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", ".hidden", "a/b", "a b", "$(x)", &"n".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn newest_initramfs_kernel_is_the_target() {
        let root = machine("release", None);
        assert_eq!(target_release(&root, None).unwrap(), "6.1.0-10-amd64");
        assert_eq!(target_release(&root, Some("5.10.0-1")).unwrap(), "5.10.0-1");
        std::fs::remove_dir_all(root.join("boot")).unwrap();
        assert_eq!(target_release(&root, None).unwrap(), "6.1.0-9-amd64");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn add_refuses_what_cannot_boot() {
        let root = machine("refuse", Some("6.1.0-9-amd64"));
        let prog = root.join("p.stpb");
        std::fs::write(&prog, container::write(&Program::default())).unwrap();
        let mut out = Vec::new();
        let p = prog.to_str().unwrap();
        // The newest kernel (6.1.0-10) has no stapvm.ko.
        let e = add(&root, &add_args(&[p, "--no-update"]), &mut out).unwrap_err();
        assert!(matches!(e, Error::NoModule { ref release, .. } if release == "6.1.0-10-amd64"));
        assert!(e
            .to_string()
            .contains("stapvm.ko is not installed for kernel 6.1.0-10-amd64"));
        std::fs::remove_file(under(&root, HOOKS[0])).unwrap();
        let e = add(
            &root,
            &add_args(&[p, "--kernel", "6.1.0-9-amd64"]),
            &mut out,
        )
        .unwrap_err();
        assert!(matches!(e, Error::NoHook(_)), "{e}");
        std::fs::remove_file(under(&root, UPDATE_INITRAMFS)).unwrap();
        let e = add(
            &root,
            &add_args(&[p, "--kernel", "6.1.0-9-amd64"]),
            &mut out,
        )
        .unwrap_err();
        assert!(e
            .to_string()
            .starts_with("initramfs-tools is not installed"));
        assert!(!under(&root, SCRIPTS_DIR).exists());
        let e = add(&root, &add_args(&[p, "--name", "../x"]), &mut out).unwrap_err();
        assert!(matches!(e, Error::BadName(_)));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn add_list_remove() {
        let root = machine("add", Some("6.1.0-10-amd64"));
        let stp = root.join("my-trace.stp");
        std::fs::write(&stp, "probe begin { println(\"hi\") }\n").unwrap();
        let mut out = Vec::new();
        // A script is compiled and installed under its name; the newest
        // kernel's initramfs is rebuilt.
        add(&root, &add_args(&[stp.to_str().unwrap()]), &mut out).unwrap();
        let installed_file = under(&root, "/etc/stapvm/boot/my-trace.stpb");
        let prog = container::read(&std::fs::read(&installed_file).unwrap()).unwrap();
        assert_eq!(prog.probes.len(), 1);
        assert_eq!(update_log(&root), "-u -k 6.1.0-10-amd64\n");
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(
            text.contains("output at boot in /run/stapvm/boot/my-trace.out"),
            "{text}"
        );
        // A .stpb as it is, under another name, without the update.
        let stpb = root.join("x.stpb");
        std::fs::copy(&installed_file, &stpb).unwrap();
        add(
            &root,
            &add_args(&[stpb.to_str().unwrap(), "--name", "second", "--no-update"]),
            &mut out,
        )
        .unwrap();
        assert_eq!(update_log(&root).lines().count(), 1);
        // -e needs a name.
        let e = add(&root, &add_args(&["-e", "probe begin {}"]), &mut out).unwrap_err();
        assert!(matches!(e, Error::NeedName));
        // A compile error is the compiler's.
        std::fs::write(&stp, "probe nosuch.point {}\n").unwrap();
        let e = add(&root, &add_args(&[stp.to_str().unwrap()]), &mut out).unwrap_err();
        assert!(matches!(e, Error::Script(_)));

        let mut listed = Vec::new();
        list(&root, &mut listed).unwrap();
        assert_eq!(
            String::from_utf8(listed).unwrap(),
            "my-trace: not run since boot\nsecond: not run since boot\n"
        );
        remove(&root, "second", false, None, &mut out).unwrap();
        assert!(!under(&root, "/etc/stapvm/boot/second.stpb").exists());
        assert_eq!(update_log(&root).lines().count(), 2);
        let e = remove(&root, "second", true, None, &mut out).unwrap_err();
        assert!(matches!(e, Error::NoProgram { .. }));
        let e = show(&root, "my-trace", &mut out).unwrap_err();
        assert!(matches!(e, Error::NoOutput { .. }), "{e}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn stop_interrupts_the_session_and_prints_its_output() {
        let root = machine("stop", None);
        let files = Files::new(&root, "t");
        std::fs::create_dir_all(files.out.parent().unwrap()).unwrap();
        std::fs::write(&files.out, "first\n").unwrap();
        // A stand-in loader: named stapvm, with `load` among its
        // arguments; on SIGINT it appends its end output and exits.
        let script = format!(
            "trap 'echo end >>{}; exit 0' INT; echo ready >{}.ready; while :; do sleep 0.05; done",
            files.out.display(),
            files.out.display()
        );
        let mut child = std::process::Command::new("/bin/sh")
            .arg0("/usr/bin/stapvm")
            .args(["-c", &script, "load"])
            .spawn()
            .unwrap();
        let ready = files.out.with_extension("out.ready");
        let t0 = Instant::now();
        while !ready.exists() && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let pid = child.id() as i32;
        std::fs::write(&files.pid, format!("{pid}\n")).unwrap();
        assert!(is_loader(pid));
        let mut shown = Vec::new();
        show(&root, "t", &mut shown).unwrap();
        assert_eq!(shown, b"first\n");
        assert_eq!(session(&files), Session::Running(pid));

        let mut out = Vec::new();
        stop(&root, "t", &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "first\nend\n");
        assert!(child.wait().unwrap().success());
        assert_eq!(session(&files), Session::Ended);
        // Stopping again prints the output again.
        let mut out = Vec::new();
        stop(&root, "t", &mut out).unwrap();
        assert_eq!(out, b"first\nend\n");
        // Another process under the pid is not a session.
        std::fs::write(&files.pid, format!("{}\n", std::process::id())).unwrap();
        assert_eq!(session(&files), Session::Ended);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn list_shows_running_sessions_and_outputs() {
        let root = machine("list", None);
        let mk = |p: &str| {
            let p = under(&root, p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "").unwrap();
        };
        mk("/etc/stapvm/boot/a.stpb");
        mk("/etc/stapvm/boot/b.stpb");
        mk("/etc/stapvm/boot/.b.stpb.tmp");
        mk("/run/stapvm/boot/a.out");
        std::fs::write(under(&root, "/run/stapvm/boot/a.pid"), "999999999\n").unwrap();
        let mut out = Vec::new();
        list(&root, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let a_out = under(&root, "/run/stapvm/boot/a.out");
        assert_eq!(
            out,
            format!(
                "a: ended, output {}\nb: not run since boot\n",
                a_out.display()
            )
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
