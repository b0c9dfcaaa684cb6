//! The load/run loop: resolve the probes on this kernel, build the image,
//! LOAD it, map the rings, START, then poll and print merged batches until
//! `exit()`, a breaker (STATUS.exit_requested), SIGINT/SIGTERM or `-T`;
//! then STOP (end probes), drain everything, print the globals and the
//! summary.
//!
//! Signals: the first SIGINT or SIGTERM asks for a clean stop (the handler
//! only sets a flag and writes a byte into a self-pipe the loop polls);
//! the handler is installed with SA_RESETHAND, so a second signal kills
//! the process, and the kernel's release() of the session fd still disarms
//! everything.
use crate::cli::SessionArgs;
use crate::device::{Device, OpenError, Session, StartError};
use crate::outfile::OutFile;
use crate::output::{self, Printer};
use crate::resolve;
use crate::ring::{Batch, Consumer, MappedRing, RingError, RingMemory};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};
use thiserror::Error;
use vm_spec::abi;
use vm_spec::program::{ProbeTarget, Program};

/// Longest wait in poll(), so signals, -T and STATUS are noticed promptly.
const POLL_MS: u64 = 100;
/// Most drain passes after STOP.
const STOP_DRAIN_PASSES: usize = 64;

/// Why a session could not run (each is printed as `ERROR: ...`).
#[derive(Debug, Error)]
pub enum Error {
    /// A probe point does not resolve on this kernel.
    #[error(transparent)]
    Resolve(#[from] resolve::Error),
    /// A target variable does not resolve against the kernel's BTF.
    #[error(transparent)]
    TargetVar(#[from] crate::targetvars::Error),
    /// A `-d PATH` binary cannot be read.
    #[error(transparent)]
    UserSymbols(#[from] crate::ustack::Error),
    /// The image could not be laid out.
    #[error("cannot build the program image: {0}")]
    Image(#[from] vm_spec::image::ImageError),
    /// /dev/stapvm is missing or not accessible.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The verifier (or the module) refused the image.
    #[error("the kernel refused the program: {0}")]
    Refused(#[from] crate::device::LoadError),
    /// START failed, not because of one probe.
    #[error("the kernel could not start the session (arming the probes failed): {}", errno_text(.0))]
    Start(io::Error),
    /// START failed: a probe point could not be armed.
    #[error("probe point '{display}' could not be armed: {}", errno_text(.err))]
    Arm {
        /// The probe point as written.
        display: String,
        /// The error arming it returned.
        err: io::Error,
    },
    /// START failed: a perf event the machine cannot count, or no debug
    /// register left for a watchpoint.
    #[error("probe point '{display}' could not be armed: {why} ({})", errno_text(.err))]
    NoHardware {
        /// The probe point as written.
        display: String,
        /// What is missing.
        why: &'static str,
        /// The error arming it returned.
        err: io::Error,
    },
    /// START failed: the probe's address is in stapvm.ko itself (EPERM from
    /// a kprobe or kretprobe: the module refuses to probe its own code).
    #[error("probe point '{display}' could not be armed: it is in stapvm's own module (stapvm.ko), whose code runs the handlers; stapvm does not probe itself (EPERM)")]
    SelfProbe {
        /// The probe point as written.
        display: String,
    },
    /// `-x PID` names no running process.
    #[error("no process {0} (-x): it has exited or never existed")]
    NoProcess(i64),
    /// The `-c` command's program, which `process` without a path means,
    /// is not found.
    #[error("probe point '{display}' is in the -c command's program, and '{program}' is not found in $PATH")]
    NoCommandProgram {
        /// The probe point as written.
        display: String,
        /// The command's first word.
        program: String,
    },
    /// A probe counts in the target process and there is none.
    #[error("probe point '{0}' counts in the target process: give one with -x PID or -c CMD")]
    NoTarget(String),
    /// An ioctl on the session failed.
    #[error("{what} failed: {}", errno_text(.err))]
    Ioctl {
        /// Which request.
        what: &'static str,
        /// The error.
        err: io::Error,
    },
    /// The module reported a ring geometry that cannot be right.
    #[error("the module reported an unusable ring layout: {0}")]
    BadInfo(String),
    /// Mapping a ring failed.
    #[error("cannot map the ring of CPU {cpu}: {err}")]
    Map {
        /// The CPU.
        cpu: u32,
        /// The error.
        err: io::Error,
    },
    /// The -o file or the ready file could not be created.
    #[error("cannot create {path}: {err}")]
    Create {
        /// The path.
        path: String,
        /// The error.
        err: io::Error,
    },
    /// Installing the signal handlers failed.
    #[error("cannot install signal handlers: {0}")]
    Signals(io::Error),
    /// The -c command could not be started.
    #[error(transparent)]
    Target(#[from] crate::target::Error),
}

/// `ENOENT (No such file or directory)` for an OS error.
fn errno_text(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(n) => {
            let full = io::Error::from_raw_os_error(n).to_string();
            let text = full.split(" (os error").next().unwrap_or(&full);
            format!("{} ({text})", crate::device::errno_name(n))
        }
        None => e.to_string(),
    }
}

fn ioctl_err(what: &'static str) -> impl FnOnce(io::Error) -> Error {
    move |err| Error::Ioctl { what, err }
}

/// Names the probe point START could not arm. `prog` is the program the
/// image was built from (optional probes the loader dropped are already
/// gone, so the module's index is an index into `prog.probes`).
fn start_error(prog: &Program, e: StartError) -> Error {
    let display = e
        .failed_probe
        .and_then(|i| prog.probes.get(i as usize))
        .map(|p| p.display.clone());
    let failed = e.failed_probe.and_then(|i| prog.probes.get(i as usize));
    match (display, e.errno()) {
        (Some(display), Some(errno)) => {
            let err = io::Error::from_raw_os_error(errno);
            let why = failed.and_then(|p| match (p.perf, p.watch) {
                (Some(e), _) => perf_unavailable(e.event_type, errno),
                (None, Some(_)) => watch_unavailable(errno),
                (None, None) => None,
            });
            let kprobe = failed.is_some_and(|p| {
                let k = u32::from(p.kind);
                k == vm_spec::abi::STP_PROBE_KPROBE || k == vm_spec::abi::STP_PROBE_KRETPROBE
            });
            match why {
                Some(why) => Error::NoHardware { display, why, err },
                None if kprobe && errno == libc::EPERM => Error::SelfProbe { display },
                None => Error::Arm { display, err },
            }
        }
        _ => Error::Start(e.err),
    }
}

/// Why a watchpoint could not be registered, when the errno says the
/// debug registers are all taken.
fn watch_unavailable(errno: i32) -> Option<&'static str> {
    (errno == libc::ENOSPC).then_some(
        "every debug register is in use (x86-64 CPUs have 4 hardware breakpoints, shared by \
         all watchpoints of every session, perf and debuggers)",
    )
}

/// Why a perf event could not be created, when the errno means the machine
/// has no such event (perf_event_create_kernel_counter: ENOENT when no PMU
/// takes the type, EOPNOTSUPP or ENODEV when the PMU cannot count it).
fn perf_unavailable(event_type: u32, errno: i32) -> Option<&'static str> {
    if ![libc::ENOENT, libc::EOPNOTSUPP, libc::ENODEV].contains(&errno) {
        return None;
    }
    Some(if event_type == vm_spec::abi::STP_PERF_TYPE_SOFTWARE {
        "the running kernel does not have this software event"
    } else {
        "this CPU has no hardware performance counter for the event (no PMU: QEMU TCG and \
         many virtual machines have none; the perf.sw.* events work everywhere)"
    })
}

// ---------------------------------------------------------------------
// Signals

static STOP_REQUESTED: AtomicBool = AtomicBool::new(false);
static SIGNAL_PIPE_WR: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(_sig: libc::c_int) {
    STOP_REQUESTED.store(true, Ordering::SeqCst);
    let fd = SIGNAL_PIPE_WR.load(Ordering::SeqCst);
    if fd >= 0 {
        let b = 1u8;
        // SAFETY: write(2) is async-signal-safe; the pipe is non-blocking
        // and `b` lives for the call. A full pipe already wakes the loop.
        unsafe {
            libc::write(fd, std::ptr::addr_of!(b).cast(), 1);
        }
    }
}

/// The self-pipe the signal handler writes to; its read end is polled.
struct SignalPipe {
    rd: OwnedFd,
    _wr: OwnedFd,
}

impl SignalPipe {
    fn install() -> io::Result<Self> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe2 succeeded, so both descriptors are new and ours.
        let (rd, wr) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        SIGNAL_PIPE_WR.store(wr.as_raw_fd(), Ordering::SeqCst);
        STOP_REQUESTED.store(false, Ordering::SeqCst);
        for sig in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: a zeroed sigaction is a valid "no flags, empty mask"
            // value; the handler only touches atomics and write(2).
            let rc = unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
                sa.sa_flags = libc::SA_RESETHAND;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut())
            };
            if rc < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(SignalPipe { rd, _wr: wr })
    }
}

impl Drop for SignalPipe {
    fn drop(&mut self) {
        SIGNAL_PIPE_WR.store(-1, Ordering::SeqCst);
    }
}

// ---------------------------------------------------------------------
// The loop

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The session requests the loop needs (the real `Session`, or a fake in
/// tests).
pub trait Control {
    /// STP_IOC_START.
    fn start(&self) -> Result<(), StartError>;
    /// STP_IOC_STOP.
    fn stop(&self) -> io::Result<()>;
    /// STP_IOC_STATUS.
    fn status(&self) -> io::Result<abi::stp_status>;
    /// STP_IOC_GLOBALS.
    fn globals(&self, count: usize) -> io::Result<Vec<i64>>;
    /// The descriptor to poll for records (negative: none).
    fn poll_fd(&self) -> RawFd;
    /// STP_IOC_INPUT: feeds input probes; the bytes taken (0: no more).
    fn input(&self, _buf: &[u8]) -> io::Result<usize> {
        Ok(0)
    }
    /// STP_IOC_MAP_READ: every entry of map `map`.
    fn map_entries(
        &self,
        _map: usize,
        _decl: &vm_spec::program::MapDecl,
    ) -> io::Result<Vec<vm_spec::maps::MapEntry>> {
        Ok(Vec::new())
    }
}

impl Control for Session {
    fn start(&self) -> Result<(), StartError> {
        Session::start(self)
    }
    fn stop(&self) -> io::Result<()> {
        Session::stop(self)
    }
    fn status(&self) -> io::Result<abi::stp_status> {
        Session::status(self)
    }
    fn globals(&self, count: usize) -> io::Result<Vec<i64>> {
        Session::globals(self, count)
    }
    fn poll_fd(&self) -> RawFd {
        self.file().as_raw_fd()
    }
    fn input(&self, buf: &[u8]) -> io::Result<usize> {
        Session::input(self, buf)
    }
    fn map_entries(
        &self,
        map: usize,
        decl: &vm_spec::program::MapDecl,
    ) -> io::Result<Vec<vm_spec::maps::MapEntry>> {
        Session::map_entries(self, map, decl)
    }
}

/// The consumers of every ring of a session, and the batch they fill.
pub struct Rings<M: RingMemory> {
    consumers: Vec<Consumer<M>>,
    batch: Batch,
}

impl<M: RingMemory> Rings<M> {
    /// Rings from their consumers.
    pub fn new(consumers: Vec<Consumer<M>>) -> Self {
        Rings {
            consumers,
            batch: Batch::new(),
        }
    }

    /// Drains every ring once and prints the merged batch. Returns the
    /// number of records and whether an EXIT record was among them.
    fn drain_and_print<W: Write, E: Write>(&mut self, pr: &mut Printer<W, E>) -> (usize, bool) {
        self.batch.clear();
        let mut errors: Vec<RingError> = Vec::new();
        for c in &mut self.consumers {
            if let Err(e) = c.drain(&mut self.batch) {
                errors.push(e);
            }
        }
        let mut exit = false;
        if !self.batch.is_empty() {
            self.batch.sort_by_time();
            exit = pr.print_batch(&self.batch);
        }
        for e in errors {
            pr.message(&format!("ERROR: {e}"));
        }
        (self.batch.len(), exit)
    }
}

/// Maps every ring of a session after checking the geometry INFO gave.
fn map_rings(session: &Session, info: &abi::stp_session_info) -> Result<Rings<MappedRing>, Error> {
    let ring_bytes = u64::from(info.ring_pages) * u64::from(info.page_size);
    if info.nr_cpus == 0
        || !info.page_size.is_power_of_two()
        || !info.ring_pages.is_power_of_two()
        || u64::from(info.ring_stride_pages) < 2 + 2 * u64::from(info.ring_pages)
    {
        return Err(Error::BadInfo(format!(
            "{} CPUs, page size {}, {} ring pages, stride {} pages",
            info.nr_cpus, info.page_size, info.ring_pages, info.ring_stride_pages
        )));
    }
    let mut consumers = Vec::with_capacity(info.nr_cpus as usize);
    for cpu in 0..info.nr_cpus {
        match MappedRing::map(session.file(), info, cpu) {
            Ok(ring) => consumers.push(Consumer::new(ring, cpu, ring_bytes)),
            // A CPU id that is not possible on this machine has no ring.
            Err(err) if err.raw_os_error() == Some(libc::ENXIO) => {}
            Err(err) => return Err(Error::Map { cpu, err }),
        }
    }
    Ok(Rings::new(consumers))
}

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// `exit()` ran, or the module asked to stop (a breaker).
    Exit,
    /// SIGINT or SIGTERM.
    Signal,
    /// `-T` elapsed.
    Timeout,
    /// Writing the output failed (e.g. a closed pipe).
    OutputClosed,
    /// The `-c` command exited.
    Command,
}

/// How to drive a session once it is loaded and mapped.
pub struct Drive<'a> {
    /// Set when a stop was requested (by the signal handler).
    pub stop: &'a AtomicBool,
    /// Polled alongside the session: becomes readable on a stop request.
    pub wake_fd: RawFd,
    /// Stop after this long (-T).
    pub timeout: Option<Duration>,
    /// Created once the probes are armed.
    pub ready_file: Option<&'a Path>,
    /// The `-c` command: released once the probes are armed; its exit
    /// ends the session.
    pub child: Option<&'a crate::target::TargetChild>,
    /// Read this descriptor (standard input) and feed what it gives to
    /// the session's `input.char` / `input.line` probes until its end.
    pub input_fd: Option<RawFd>,
}

/// Bytes read from the input descriptor at a time (the module takes at
/// most `STP_INPUT_CHUNK` per INPUT).
const INPUT_READ: usize = abi::STP_INPUT_CHUNK as usize;

/// Feeds what `fd` has to the session; false at its end (EOF, an error,
/// or a session that runs no more handlers), when it is not polled again.
fn feed_input<C: Control>(ctl: &C, fd: RawFd) -> bool {
    let mut buf = [0u8; INPUT_READ];
    // SAFETY: `buf` is a live buffer of INPUT_READ bytes for the call.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    let n = match n {
        n if n > 0 => n as usize,
        n if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {
            return true
        }
        _ => return false,
    };
    let mut done = 0;
    // Each INPUT takes at least one byte or ends the feeding: bounded.
    while done < n {
        match ctl.input(&buf[done..n]) {
            Ok(0) | Err(_) => return false,
            Ok(k) => done += k.min(n - done),
        }
    }
    true
}

/// The outcome of a session.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    /// Why it stopped.
    pub reason: StopReason,
    /// Final counters.
    pub status: abi::stp_status,
    /// The exit status stap would give.
    pub exit_status: i32,
    /// When START returned.
    pub started: Instant,
    /// Probes armed right after START.
    pub probes_armed: u64,
}

/// START, print until a stop is asked for, STOP, drain, print the globals
/// and the summary.
pub fn drive<C: Control, M: RingMemory, W: Write, E: Write>(
    ctl: &C,
    rings: &mut Rings<M>,
    pr: &mut Printer<W, E>,
    prog: &Program,
    how: &Drive,
) -> Result<Outcome, Error> {
    if let Err(err) = ctl.start() {
        // Begin probes may have printed before the failure.
        rings.drain_and_print(pr);
        return Err(start_error(prog, err));
    }
    let started = Instant::now();
    // STOP disarms, so the count of armed probes is taken now.
    let probes_armed = ctl.status().map(|s| s.probes_armed).unwrap_or(0);
    if let Some(path) = how.ready_file {
        // The probes are armed: a missing readiness file is worth a
        // warning, not an unclean end of the session.
        if let Err(err) = File::create(path) {
            pr.message(&format!("WARNING: cannot create {}: {err}", path.display()));
        }
    }
    if let Some(c) = how.child {
        c.release();
    }
    let deadline = how.timeout.map(|t| started + t);
    let loop_result = event_loop(ctl, rings, pr, how, deadline);

    // Stop whatever happened: end probes run in the kernel, then every
    // record is drained.
    let stop_result = ctl.stop();
    // Nothing produces after STOP; the bound only guards against a module
    // that would.
    for _ in 0..STOP_DRAIN_PASSES {
        let (n, _) = rings.drain_and_print(pr);
        if n == 0 {
            break;
        }
    }
    let reason = loop_result?;
    stop_result.map_err(ioctl_err("STP_IOC_STOP"))?;
    let status = ctl.status().map_err(ioctl_err("STP_IOC_STATUS"))?;
    let exit_status = output::exit_status(&status);
    // As in stap, globals are printed by an end probe, which an error
    // abort (MAXERRORS, MAXSKIPPED) skips: in declaration order, scalars
    // as `name=value`, arrays written and never read through MAP_READ.
    if exit_status == 0 {
        let values = if output::exit_needs_values(prog) {
            ctl.globals(prog.globals.len())
                .map_err(ioctl_err("STP_IOC_GLOBALS"))?
        } else {
            Vec::new()
        };
        let text = output::exit_globals_text(prog, &values, |mi| {
            ctl.map_entries(mi, &prog.maps[mi])
                .map_err(ioctl_err("STP_IOC_MAP_READ"))
        })?;
        pr.output(text.as_bytes());
        pr.flush();
    }
    for line in output::summary(prog, &status) {
        pr.message(&line);
    }
    pr.flush();
    let exit_status = if reason == StopReason::OutputClosed {
        1
    } else {
        exit_status
    };
    Ok(Outcome {
        reason,
        status,
        exit_status,
        started,
        probes_armed,
    })
}

/// Polls and prints until something asks the session to stop.
fn event_loop<C: Control, M: RingMemory, W: Write, E: Write>(
    ctl: &C,
    rings: &mut Rings<M>,
    pr: &mut Printer<W, E>,
    how: &Drive,
    deadline: Option<Instant>,
) -> Result<StopReason, Error> {
    // When the session fd reports readiness without records (or errors),
    // it is left out of the next poll so the loop cannot spin.
    let mut poll_session = true;
    let mut input_fd = how.input_fd;
    loop {
        if how.stop.load(Ordering::SeqCst) {
            return Ok(StopReason::Signal);
        }
        let now = Instant::now();
        let mut timeout = Duration::from_millis(POLL_MS);
        if let Some(d) = deadline {
            if now >= d {
                return Ok(StopReason::Timeout);
            }
            timeout = timeout.min(d - now);
        }
        let mut fds = [
            libc::pollfd {
                fd: how.wake_fd,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: if poll_session { ctl.poll_fd() } else { -1 },
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: input_fd.unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let wait_ms = timeout.as_millis().clamp(1, u128::from(POLL_MS)) as libc::c_int;
        // SAFETY: `fds` holds three initialised pollfd entries (a negative fd
        // is ignored by poll) and lives for the call.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait_ms) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(Error::Ioctl {
                    what: "poll",
                    err: e,
                });
            }
        }
        let session_events = fds[1].revents;
        if let (Some(fd), true) = (input_fd, fds[2].revents != 0) {
            if !feed_input(ctl, fd) {
                input_fd = None;
            }
        }
        let (n, exit) = rings.drain_and_print(pr);
        poll_session = !(session_events != 0 && n == 0);
        if pr.out_failed.is_some() {
            return Ok(StopReason::OutputClosed);
        }
        if exit {
            return Ok(StopReason::Exit);
        }
        if how.child.is_some_and(|c| c.exited()) {
            // Whatever its last system calls produced is drained after STOP.
            return Ok(StopReason::Command);
        }
        let st = ctl.status().map_err(ioctl_err("STP_IOC_STATUS"))?;
        if st.exit_requested != 0 {
            return Ok(StopReason::Exit);
        }
    }
}

/// `prog` made ready for `image::build` on the running kernel, as `run` and
/// `dump --kernel` both need it: its probes resolved (/proc/kallsyms; one
/// `WARNING:` line per optional probe dropped and, when `verbose`, what
/// each wildcard matched), its target variables' constants filled in
/// (BTF), the local time zone and the loader's pid and uid put in
/// (`tzinfo::patch`, `tzinfo::patch_loader`).
pub fn resolve_on_kernel(prog: &Program, verbose: bool) -> Result<resolve::Resolved, Error> {
    let mut resolved = resolve::resolve(prog)?;
    for w in &resolved.warnings {
        eprintln!("WARNING: {w}");
    }
    if verbose {
        for (display, n) in &resolved.expanded {
            let what = if display.contains(".trace(") {
                "tracepoints"
            } else {
                "functions"
            };
            eprintln!("stapvm: probe point '{display}' matched {n} {what}");
        }
    }
    crate::targetvars::apply(&mut resolved.program, &resolved.symbols)?;
    crate::tzinfo::patch(&mut resolved.program);
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    crate::tzinfo::patch_loader(
        &mut resolved.program,
        i64::from(std::process::id()),
        i64::from(uid),
    );
    Ok(resolved)
}

/// The names of the program's procfs files, which START creates in
/// `/proc/stapvm/<pid>/` (abi.h: procfs files), in probe order.
pub fn procfs_files(prog: &Program) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in &prog.probes {
        if let vm_spec::program::ProbeTarget::File { name, .. } = &p.target {
            if !out.contains(name) {
                out.push(name.clone());
            }
        }
    }
    out
}

/// Runs a compiled program on the running kernel. `compile_time` is shown
/// by `-v` when the program was compiled in this process. Returns the exit
/// status.
pub fn run(
    prog: &Program,
    opts: &SessionArgs,
    compile_time: Option<Duration>,
) -> Result<i32, Error> {
    let verbose = opts.verbose > 0;
    let t0 = Instant::now();
    if let Some(pid) = opts.target_pid {
        if pid <= 0 || !Path::new(&format!("/proc/{pid}")).exists() {
            return Err(Error::NoProcess(pid));
        }
    }
    // `process` without a path: the target's executable.
    let in_target = if crate::uprobes::wants_target(prog) {
        let exe = crate::uprobes::target_executable(opts.cmd.as_deref(), opts.target_pid);
        if let (None, Some(cmd)) = (&exe, &opts.cmd) {
            let display = prog
                .probes
                .iter()
                .find(|p| matches!(&p.target, ProbeTarget::User { path, .. } if path.is_empty()))
                .map_or("", |p| p.display.as_str());
            return Err(Error::NoCommandProgram {
                display: display.to_string(),
                program: cmd.split_whitespace().next().unwrap_or("").to_string(),
            });
        }
        exe.and_then(|e| crate::uprobes::in_target(prog, &e))
    } else {
        None
    };
    let mut resolved = resolve_on_kernel(in_target.as_ref().unwrap_or(prog), verbose)?;
    // -c: the command is forked now (held before exec) so that target()
    // is known when the image is built.
    let child = match &opts.cmd {
        Some(cmd) => Some(crate::target::TargetChild::spawn(cmd)?),
        None => None,
    };
    if let Some(pid) = child.as_ref().map(|c| i64::from(c.pid)).or(opts.target_pid) {
        crate::target::patch(&mut resolved.program, pid);
    } else if let Some(display) = crate::target::needs_target(&resolved.program) {
        return Err(Error::NoTarget(display.to_string()));
    }
    // ubacktrace(), usymname() & co: the user symbol tables (-d, --ldd).
    let exe = crate::uprobes::target_executable(opts.cmd.as_deref(), opts.target_pid);
    for w in crate::ustack::attach(&mut resolved.program, exe.as_deref())? {
        eprintln!("WARNING: {w}");
    }
    let prog = &resolved.program;
    let t_resolved = Instant::now();
    let image = vm_spec::image::build(prog, &resolved.symbols)?;
    let device = Device::open()?;
    let session = device.load(&image).map_err(|e| placed_refusal(prog, e))?;
    let info = session.info().map_err(ioctl_err("STP_IOC_INFO"))?;
    let mut rings = map_rings(&session, &info)?;
    let t_loaded = Instant::now();

    let out = match &opts.output {
        Some(path) => OutFile::create(path, opts.size_limit).map_err(|err| Error::Create {
            path: path.display().to_string(),
            err,
        })?,
        None => OutFile::stdout(),
    };
    let mut pr = Printer::new(prog, BufWriter::with_capacity(1 << 16, out), io::stderr());
    pr.system = Some(crate::system::Runner::default());
    pr.switch_file = Some(Box::new(|w: &mut BufWriter<OutFile>| {
        w.flush()?;
        w.get_mut().switch()
    }));
    let signals = SignalPipe::install().map_err(Error::Signals)?;
    let how = Drive {
        stop: &STOP_REQUESTED,
        wake_fd: signals.rd.as_raw_fd(),
        timeout: opts.timeout.map(Duration::from_secs),
        ready_file: opts.ready_file.as_deref(),
        child: child.as_ref(),
        // input.char / input.line: the standard input feeds them.
        input_fd: prog
            .probes
            .iter()
            .any(|p| {
                matches!(
                    u32::from(p.kind),
                    abi::STP_PROBE_INPUT_CHAR | abi::STP_PROBE_INPUT_LINE
                )
            })
            .then_some(libc::STDIN_FILENO),
    };
    if verbose {
        let mut line = String::from("stapvm:");
        if let Some(c) = compile_time {
            line.push_str(&format!(" compile {:.1} ms,", ms(c)));
        }
        line.push_str(&format!(
            " resolve {:.1} ms, load {:.1} ms ({} bytes image, {} probes, {} CPUs x {} ring pages)",
            ms(t_resolved - t0),
            ms(t_loaded - t_resolved),
            image.len(),
            prog.probes.len(),
            info.nr_cpus,
            info.ring_pages,
        ));
        pr.message(&line);
        let files = procfs_files(prog);
        if !files.is_empty() {
            pr.message(&format!(
                "stapvm: procfs files in /proc/stapvm/{}/: {}",
                std::process::id(),
                files.join(", ")
            ));
        }
    }
    let out = drive(&session, &mut rings, &mut pr, prog, &how)?;
    if verbose {
        let st = &out.status;
        pr.message(&format!(
            "stapvm: start {:.1} ms, ran {:.1} ms, stopped by {}: hits {}, skipped {}, dropped {}, errors {}, probes armed {}",
            ms(out.started - t_loaded),
            ms(out.started.elapsed()),
            match out.reason {
                StopReason::Exit => match st.exit_requested {
                    abi::STP_EXIT_OVERLOAD => "the overload breaker",
                    abi::STP_EXIT_DEADMAN => "the deadman",
                    _ => "exit()",
                },
                StopReason::Signal => "signal",
                StopReason::Timeout => "-T timeout",
                StopReason::OutputClosed => "closed output",
                StopReason::Command => "-c command exit",
            },
            st.hits,
            st.skipped,
            st.dropped,
            st.errors,
            out.probes_armed
        ));
    }
    if verbose || opts.timing {
        // Per probe point, as stap -t's summary names them.
        match session.probe_stats(prog.probes.len()) {
            Ok(stats) => {
                for line in output::probe_stats_lines(prog, &stats) {
                    pr.message(&line);
                }
            }
            Err(err) => pr.message(&format!(
                "WARNING: STP_IOC_PROBE_STATS failed: {}",
                errno_text(&err)
            )),
        }
    }
    Ok(out.exit_status)
}

/// A refusal by the module's policy (not the verifier: code 0, EPERM, e.g.
/// lockdown) names an instruction: the script's place of that instruction
/// is added to the message, as stap places its errors.
fn placed_refusal(prog: &Program, mut e: crate::device::LoadError) -> crate::device::LoadError {
    if e.code != 0 || e.errno != libc::EPERM {
        return e;
    }
    let mut first = 0usize;
    for h in &prog.handlers {
        let pc = e.err_where as usize;
        if pc < first + h.code.len() {
            if let Some(l) = h.locs.get(pc - first).filter(|l| l.line != 0) {
                e.log = format!("{} at {}:{}:{}", e.log, prog.source_name, l.line, l.col);
            }
            break;
        }
        first += h.code.len();
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::fake::{record, FakeRing};
    use std::cell::{Cell, RefCell};
    use vm_spec::program::*;

    /// A session in memory: START and STOP write what begin and end probes
    /// would print into the ring.
    struct FakeControl<'r> {
        ring: &'r FakeRing,
        on_start: Vec<Vec<u8>>,
        on_stop: Vec<Vec<u8>>,
        status: Cell<abi::stp_status>,
        globals: Vec<i64>,
        start_fails: bool,
        failed_probe: Option<u32>,
        calls: RefCell<Vec<&'static str>>,
    }

    impl<'r> FakeControl<'r> {
        fn new(ring: &'r FakeRing) -> Self {
            FakeControl {
                ring,
                on_start: vec![],
                on_stop: vec![],
                status: Cell::new(abi::stp_status::default()),
                globals: vec![],
                start_fails: false,
                failed_probe: None,
                calls: RefCell::new(vec![]),
            }
        }
    }

    impl Control for FakeControl<'_> {
        fn start(&self) -> Result<(), StartError> {
            self.calls.borrow_mut().push("start");
            for r in &self.on_start {
                assert!(self.ring.produce(r));
            }
            if self.start_fails {
                return Err(StartError {
                    err: io::Error::from_raw_os_error(libc::ENOENT),
                    failed_probe: self.failed_probe,
                    failed_err: if self.failed_probe.is_some() {
                        -libc::ENOENT
                    } else {
                        0
                    },
                });
            }
            Ok(())
        }
        fn stop(&self) -> io::Result<()> {
            self.calls.borrow_mut().push("stop");
            for r in &self.on_stop {
                assert!(self.ring.produce(r));
            }
            Ok(())
        }
        fn status(&self) -> io::Result<abi::stp_status> {
            Ok(self.status.get())
        }
        fn globals(&self, count: usize) -> io::Result<Vec<i64>> {
            self.calls.borrow_mut().push("globals");
            Ok(self.globals.iter().copied().take(count).collect())
        }
        fn poll_fd(&self) -> RawFd {
            -1
        }
    }

    fn prog() -> Program {
        Program {
            source_name: "t.stp".into(),
            source: "global n\nprobe begin { n = 1/0 }\n".into(),
            limits: default_limits(),
            globals: vec![Global {
                name: "n".into(),
                ty: GlobalType::Long,
                print_at_exit: true,
            }],
            formats: vec![Format {
                text: "%s %d\n".into(),
                args: vec![ArgKind::Str, ArgKind::Int],
            }],
            handlers: vec![Handler {
                ctx: abi::STP_CTX_BEGIN as u8,
                code: vec![Insn::default()],
                locs: vec![SrcLoc { line: 2, col: 20 }],
                probe_point: "begin".into(),
                ..Default::default()
            }],
            probes: vec![Probe {
                kind: abi::STP_PROBE_KPROBE as u8,
                flags: 0,
                handler: 0,
                target: ProbeTarget::None,
                maxactive: 0,
                period_ns: 0,
                randomize: 0,
                perf: None,
                watch: None,
                netfilter: None,
                uprobe: None,
                display: "kernel.function(\"nosuch\")".into(),
            }],
            ..Default::default()
        }
    }

    #[test]
    fn a_policy_refusal_names_the_scripts_place() {
        let mut p = prog();
        p.handlers.push(Handler {
            code: vec![Insn::default(); 3],
            locs: vec![
                SrcLoc::default(),
                SrcLoc { line: 7, col: 3 },
                SrcLoc::default(),
            ],
            ..Default::default()
        });
        let refusal = |code, errno, at| crate::device::LoadError {
            errno,
            code,
            err_where: at,
            log: "locked down".into(),
        };
        // Instruction 2 is the second handler's second one.
        let e = placed_refusal(&p, refusal(0, libc::EPERM, 2));
        assert_eq!(e.log, "locked down at t.stp:7:3");
        // A place without a location, a verifier error (its `where` may
        // be a table entry) and another errno are left as they are.
        for (code, errno, at) in [
            (0, libc::EPERM, 3),
            (5, libc::EPERM, 2),
            (0, libc::EINVAL, 2),
            (0, libc::EPERM, 99),
        ] {
            let e = placed_refusal(&p, refusal(code, errno, at));
            assert_eq!(e.log, "locked down", "{code} {errno} {at}");
        }
    }

    fn printf(time: u64, s: &str, n: i64) -> Vec<u8> {
        let mut p = (s.len() as u32).to_le_bytes().to_vec();
        p.extend_from_slice(s.as_bytes());
        p.resize(p.len().div_ceil(8) * 8, 0);
        p.extend_from_slice(&n.to_le_bytes());
        record(abi::STP_REC_PRINTF as u16, 0, time, &p)
    }

    fn exit_rec(time: u64) -> Vec<u8> {
        record(abi::STP_REC_EXIT as u16, 0, time, &[])
    }

    fn error_rec(time: u64) -> Vec<u8> {
        let mut p = 0u32.to_le_bytes().to_vec();
        p.extend_from_slice(&0u32.to_le_bytes());
        p.extend_from_slice(&0u64.to_le_bytes());
        record(
            abi::STP_REC_ERROR as u16,
            abi::STP_RTE_DIVZERO as u16,
            time,
            &p,
        )
    }

    struct Run {
        out: String,
        err: String,
        result: Result<Outcome, Error>,
    }

    fn run_fake(ctl: &FakeControl, ring: &FakeRing, how: &Drive) -> Run {
        let p = prog();
        let mut rings = Rings::new(vec![Consumer::new(ring, 0, ring.size)]);
        let mut out = Vec::new();
        let mut err = Vec::new();
        let result = {
            let mut pr = Printer::new(&p, &mut out, &mut err);
            drive(ctl, &mut rings, &mut pr, &p, how)
        };
        Run {
            out: String::from_utf8(out).unwrap(),
            err: String::from_utf8(err).unwrap(),
            result,
        }
    }

    fn how(stop: &AtomicBool) -> Drive<'_> {
        Drive {
            stop,
            wake_fd: -1,
            timeout: Some(Duration::from_secs(5)),
            ready_file: None,
            child: None,
            input_fd: None,
        }
    }

    #[test]
    fn exit_record_stops_then_end_output_and_globals() {
        let ring = FakeRing::new(4096);
        let mut ctl = FakeControl::new(&ring);
        ctl.on_start = vec![printf(1, "begin", 1), exit_rec(2)];
        ctl.on_stop = vec![printf(3, "end", 2)];
        ctl.globals = vec![5];
        let stop = AtomicBool::new(false);
        let r = run_fake(&ctl, &ring, &how(&stop));
        let o = r.result.unwrap();
        assert_eq!(o.reason, StopReason::Exit);
        assert_eq!(o.exit_status, 0);
        assert_eq!(r.out, "begin 1\nend 2\nn=5\n");
        assert_eq!(r.err, "");
        assert_eq!(*ctl.calls.borrow(), vec!["start", "stop", "globals"]);
    }

    #[test]
    fn errors_abort_without_globals_and_print_the_summary() {
        let ring = FakeRing::new(4096);
        let mut ctl = FakeControl::new(&ring);
        ctl.on_start = vec![error_rec(1)];
        ctl.status.set(abi::stp_status {
            state: abi::STP_STATE_ERROR,
            errors: 1,
            exit_requested: 1,
            ..Default::default()
        });
        let stop = AtomicBool::new(false);
        let r = run_fake(&ctl, &ring, &how(&stop));
        let o = r.result.unwrap();
        assert_eq!(o.reason, StopReason::Exit);
        assert_eq!(o.exit_status, 1);
        assert_eq!(r.out, "");
        assert_eq!(
            r.err,
            "ERROR: division by 0 near operator '/' at t.stp:2:20\n\
             WARNING: Number of errors: 1, skipped probes: 0\n"
        );
        assert_eq!(*ctl.calls.borrow(), vec!["start", "stop"]);
    }

    #[test]
    fn command_exit_ends_the_session() {
        let ring = FakeRing::new(4096);
        let ctl = FakeControl::new(&ring);
        let stop = AtomicBool::new(false);
        let child = crate::target::TargetChild::spawn("true").unwrap();
        let h = Drive {
            timeout: Some(Duration::from_secs(20)),
            child: Some(&child),
            ..how(&stop)
        };
        let t = Instant::now();
        let o = run_fake(&ctl, &ring, &h).result.unwrap();
        assert_eq!(o.reason, StopReason::Command);
        assert!(t.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn timeout_and_ready_file() {
        let ring = FakeRing::new(4096);
        let mut ctl = FakeControl::new(&ring);
        ctl.on_start = vec![printf(1, "armed", 0)];
        let stop = AtomicBool::new(false);
        let ready = std::env::temp_dir().join(format!("stapvm-ready-{}", std::process::id()));
        let _ = std::fs::remove_file(&ready);
        let h = Drive {
            timeout: Some(Duration::from_millis(150)),
            ready_file: Some(&ready),
            ..how(&stop)
        };
        let t = Instant::now();
        let r = run_fake(&ctl, &ring, &h);
        let o = r.result.unwrap();
        assert_eq!(o.reason, StopReason::Timeout);
        assert!(t.elapsed() >= Duration::from_millis(150));
        assert!(t.elapsed() < Duration::from_secs(2));
        assert!(ready.exists());
        std::fs::remove_file(&ready).unwrap();
        assert_eq!(r.out, "armed 0\nn=0\n");
    }

    #[test]
    fn stop_request_drains_and_stops() {
        let ring = FakeRing::new(4096);
        let mut ctl = FakeControl::new(&ring);
        ctl.on_stop = vec![printf(9, "bye", 0)];
        let stop = AtomicBool::new(true);
        let r = run_fake(&ctl, &ring, &how(&stop));
        assert_eq!(r.result.unwrap().reason, StopReason::Signal);
        assert!(r.out.starts_with("bye 0\n"));
    }

    #[test]
    fn start_failure_still_prints_begin_output() {
        let ring = FakeRing::new(4096);
        let mut ctl = FakeControl::new(&ring);
        ctl.on_start = vec![printf(1, "partial", 0)];
        ctl.start_fails = true;
        let stop = AtomicBool::new(false);
        let r = run_fake(&ctl, &ring, &how(&stop));
        assert_eq!(r.out, "partial 0\n");
        let e = r.result.unwrap_err();
        assert_eq!(
            e.to_string(),
            "the kernel could not start the session (arming the probes failed): \
             ENOENT (No such file or directory)"
        );
    }

    #[test]
    fn start_failure_names_the_probe_point() {
        let ring = FakeRing::new(4096);
        let mut ctl = FakeControl::new(&ring);
        ctl.start_fails = true;
        ctl.failed_probe = Some(0);
        let stop = AtomicBool::new(false);
        let r = run_fake(&ctl, &ring, &how(&stop));
        assert_eq!(
            r.result.unwrap_err().to_string(),
            "probe point 'kernel.function(\"nosuch\")' could not be armed: \
             ENOENT (No such file or directory)"
        );
        // EPERM from a kprobe: its address is in stapvm.ko (probes.c
        // refuses to probe the module's own code).
        let e = start_error(
            &prog(),
            crate::device::StartError {
                err: io::Error::from_raw_os_error(libc::EPERM),
                failed_probe: Some(0),
                failed_err: -libc::EPERM,
            },
        );
        assert!(
            e.to_string().starts_with(
                "probe point 'kernel.function(\"nosuch\")' could not be armed: it is in \
                 stapvm's own module (stapvm.ko)"
            ),
            "{e}"
        );
        // An index the program does not have: the plain message.
        ctl.failed_probe = Some(7);
        let r = run_fake(&ctl, &ring, &how(&stop));
        assert!(matches!(r.result, Err(Error::Start(_))));
    }

    #[test]
    fn signal_handler_sets_the_flag_and_wakes_the_pipe() {
        let pipe = SignalPipe::install().unwrap();
        on_signal(libc::SIGTERM);
        assert!(STOP_REQUESTED.load(Ordering::SeqCst));
        let mut b = [0u8; 4];
        // SAFETY: reading into a live local buffer from our own pipe.
        let n = unsafe { libc::read(pipe.rd.as_raw_fd(), b.as_mut_ptr().cast(), b.len()) };
        assert_eq!(n, 1);
        STOP_REQUESTED.store(false, Ordering::SeqCst);
        // Restore the default dispositions for the rest of the test binary.
        // SAFETY: resetting SIGINT/SIGTERM to SIG_DFL is always valid.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
        }
    }
}
