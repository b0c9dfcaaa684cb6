//! The one runner of the compiler's integration tests: a script (or a
//! program) run on the C core in user space (`HostSession`, the code
//! stapvm.ko runs) as stapvm runs it: begin probes, probes that hit
//! (`RunOptions::fire`), timer probes, end probes; `RunOptions` says how.
use super::{build_with, check};
use compiler::Options;
use vm_spec::abi;
use vm_spec::program::Program;
use vm_testkit::host::HostError;
use vm_testkit::host::HostSession;
use vm_testkit::HostEnv;

/// How `run_begin_end` / `run_program` run a script. The default: one
/// CPU, the default `HostEnv`, no timer probe run, no extra check.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// What the compiler is given (`-D` defines, script arguments).
    pub compile: Options,
    /// The simulated task and memory of every handler run (a timer run's
    /// `cpu` is its own, see `cpus`).
    pub env: HostEnv,
    /// Handlers fired once each, in order, after the begin probes, as if
    /// their probe had hit (a kprobe, a tracepoint ...).
    pub fire: Vec<u32>,
    /// Simulated CPUs (`HostSession::set_cpus`); timer run `i` is on CPU
    /// `i % cpus`.
    pub cpus: u32,
    /// Timer handler runs at most. Timers fire in the order they fall due
    /// (each every `period_ns` of simulated time) until a handler calls
    /// `exit()`, this many ran, or the next one is due after `timer_ns`.
    pub timers: usize,
    /// Simulated time after which no timer fires.
    pub timer_ns: u64,
    /// Check the program with the verifier (`verify`, `image`) first.
    pub check: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            compile: Options::default(),
            env: HostEnv::default(),
            fire: Vec::new(),
            cpus: 1,
            timers: 0,
            timer_ns: u64::MAX,
            check: false,
        }
    }
}

/// A finished run: the program, the session after its end probes, and the
/// message of every run-time error, in order.
pub struct Ran {
    /// The program that ran.
    pub program: Program,
    /// The session (output, maps) after the end probes.
    pub session: HostSession,
    /// One message per handler run that ended in an error.
    pub errors: Vec<String>,
}

impl Ran {
    /// Everything the handlers printed.
    pub fn output(&self) -> String {
        String::from_utf8_lossy(&self.session.output()).into_owned()
    }

    /// The output, then `at_exit` (what stapvm prints at exit, e.g.
    /// `arrays_at_exit`), then one `ERROR: <message>` line per run-time
    /// error.
    pub fn report(&self, at_exit: &str) -> String {
        let mut out = self.output();
        out.push_str(at_exit);
        for e in &self.errors {
            out.push_str(&format!("ERROR: {e}\n"));
        }
        out
    }

    /// The output; panics (with the script) if a handler failed.
    pub fn ok(&self) -> String {
        assert!(
            self.errors.is_empty(),
            "{}: {:?}",
            self.program.source,
            self.errors
        );
        self.output()
    }
}

/// Compiles `src` with `opts.compile` and runs it as `run_program` does;
/// panics if it does not compile or load.
pub fn run_begin_end(src: &str, opts: &RunOptions) -> Ran {
    let prog = build_with(src, &opts.compile).program;
    run_program(&prog, opts).expect("verifies")
}

/// Runs `prog` on the C core in user space (`HostSession`, the code
/// stapvm.ko runs), as stapvm does: begin probes, the handlers of
/// `opts.fire`, timer probes (`opts.timers`), then end probes. An error
/// ends one handler run, not the others. `Err` if the session refuses the
/// program.
pub fn run_program(prog: &Program, opts: &RunOptions) -> Result<Ran, HostError> {
    if opts.check {
        check(prog);
    }
    let mut s = HostSession::from_program(prog)?;
    s.set_cpus(opts.cpus);
    let cpus = s.cpus();
    let mut env = opts.env.clone();
    let mut errors = s.run_probes_of_kind(abi::STP_PROBE_BEGIN, &env);
    for &h in &opts.fire {
        errors.extend(s.run_handler(h, &env).err());
    }
    // (next due, period, handler) of each timer probe.
    let mut timers: Vec<(u64, u64, u32)> = prog
        .probes
        .iter()
        .filter(|p| u32::from(p.kind) == abi::STP_PROBE_TIMER)
        .map(|p| (p.period_ns, p.period_ns, p.handler))
        .collect();
    let mut runs = 0;
    while !s.exit_requested() && !timers.is_empty() && runs < opts.timers {
        timers.sort_by_key(|t| t.0);
        let (due, period, h) = timers[0];
        if due > opts.timer_ns {
            break;
        }
        env.cpu = (runs as u32 % cpus).into();
        errors.extend(s.run_handler(h, &env).err());
        timers[0].0 = due.saturating_add(period);
        runs += 1;
    }
    env.cpu = opts.env.cpu;
    errors.extend(s.run_probes_of_kind(abi::STP_PROBE_END, &env));
    Ok(Ran {
        program: prog.clone(),
        session: s,
        errors: errors.into_iter().map(|e| e.message).collect(),
    })
}

/// The arrays written and never read, as stapvm prints them at exit.
pub fn arrays_at_exit(prog: &Program, s: &HostSession) -> String {
    let mut out = String::new();
    for (i, m) in prog.maps.iter().enumerate() {
        if m.print_at_exit {
            let e = s.map_entries(i, m).expect("map");
            out.push_str(&vm_spec::maps::exit_text(m, &e));
        }
    }
    out
}
