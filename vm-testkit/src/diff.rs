//! Differential comparison of the two interpreters: the C core (vm.c, the
//! code stapvm.ko runs, through [`HostSession`]) and the Rust reference
//! interpreter (`vm_refvm`). [`check_case`] runs every handler run of
//! a generated [`Case`] on both, with the same [`HostEnv`], and compares
//! after each run: how the run ended (error code, handler, pc, address),
//! every register the run wrote when it ended with RET, MAXACTION fuel
//! left, the exit flag, the raw bytes of every record (time stamps
//! included: the host clock is deterministic), the globals, the ring's drop
//! count and the clock; at the end of the case, every map's entries (keys,
//! value and insertion number, through `HostSession::map_entries`, the
//! code behind MAP_READ) against the reference VM's model. Statistics are
//! kept for `Case::cpus` simulated CPUs and each run has its CPU id.
//!
//! Used by `tests/differential.rs` and by the `differential` fuzz target.
use crate::gen::Case;
use crate::host::HostSession;
use std::fmt::Write as _;
use thiserror::Error;
use vm_refvm::{Outcome, RefProgram, RefSession};
use vm_spec::abi;
use vm_spec::core::verify_image;
use vm_spec::image::build_stand_in;

/// Counters over compared runs, to show what a campaign exercised.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Cases compared.
    pub cases: u64,
    /// Handler runs compared.
    pub runs: u64,
    /// Runs by how they ended: index `abi::STP_RTE_*` (0 = RET).
    pub outcomes: Vec<u64>,
    /// Records compared.
    pub records: u64,
    /// Records dropped because the ring was full.
    pub dropped: u64,
    /// Runs that executed EXIT.
    pub exits: u64,
    /// Instructions executed (reference VM).
    pub steps: u64,
    /// Instructions generated.
    pub insns: u64,
    /// Map entries compared at the ends of the cases.
    pub map_entries: u64,
    /// Runs that ended skipped (a map lock not taken; never in user space).
    pub skipped: u64,
}

impl Summary {
    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &Summary) {
        self.cases += other.cases;
        self.runs += other.runs;
        if self.outcomes.len() < other.outcomes.len() {
            self.outcomes.resize(other.outcomes.len(), 0);
        }
        for (a, b) in self.outcomes.iter_mut().zip(&other.outcomes) {
            *a += b;
        }
        self.records += other.records;
        self.dropped += other.dropped;
        self.exits += other.exits;
        self.steps += other.steps;
        self.insns += other.insns;
        self.map_entries += other.map_entries;
        self.skipped += other.skipped;
    }

    /// One line per counter, with run-time error names.
    pub fn render(&self) -> String {
        let mut s = format!(
            "cases {} runs {} insns {} steps {} records {} dropped {} exits {} map entries {} skipped {}\n",
            self.cases,
            self.runs,
            self.insns,
            self.steps,
            self.records,
            self.dropped,
            self.exits,
            self.map_entries,
            self.skipped
        );
        for (k, n) in self.outcomes.iter().enumerate() {
            let name = if k == 0 {
                "RET"
            } else {
                vm_spec::tables::RUNTIME_ERRORS
                    .get(k)
                    .map_or("?", |e| e.name)
            };
            let _ = writeln!(s, "  {name:<10} {n}");
        }
        s
    }
}

/// A difference between the interpreters, or a case that could not run.
#[derive(Debug, Error)]
pub enum Mismatch {
    /// The generator produced a program the verifier refuses (a generator
    /// bug, or a verifier that became stricter).
    #[error("seed {seed}: generated program refused: {error}\n{listing}")]
    Rejected {
        /// The case's seed.
        seed: u64,
        /// The verifier's complaint.
        error: vm_spec::core::VerifyError,
        /// Disassembly of the program.
        listing: String,
    },
    /// The image could not be built or loaded.
    #[error("seed {seed}: setup failed: {what}")]
    Setup {
        /// The case's seed.
        seed: u64,
        /// What failed.
        what: String,
    },
    /// The interpreters disagree.
    #[error("seed {seed}: run {run} (handler {handler}): {what}\n{listing}")]
    Differ {
        /// The case's seed.
        seed: u64,
        /// Index into `Case::runs`.
        run: usize,
        /// Handler index.
        handler: u32,
        /// The first difference found.
        what: String,
        /// Disassembly of the program and the environment.
        listing: String,
    },
}

fn hex(b: &[u8]) -> String {
    b.iter().fold(String::new(), |mut s, x| {
        let _ = write!(s, "{x:02x}");
        s
    })
}

fn listing(case: &Case) -> String {
    // Long constant strings would bury the code: cut every line.
    let mut s: String = vm_spec::disasm::disassemble(&case.program)
        .lines()
        .map(|l| match l.char_indices().nth(140) {
            Some((k, _)) => format!("{}...\n", &l[..k]),
            None => format!("{l}\n"),
        })
        .collect();
    let e = &case.env;
    let _ = writeln!(
        s,
        "env: pid {} tid {} ppid {} uid {} euid {} gid {} cpu {} jiffies {} retval {} args {:?} wall_ns {} execname {:?}",
        e.pid, e.tid, e.ppid, e.uid, e.euid, e.gid, e.cpu, e.jiffies, e.retval, e.args, e.wall_ns, e.execname
    );
    for (a, b) in &e.memory {
        let _ = writeln!(s, "mem: {a:#x} +{}", b.len());
    }
    let _ = writeln!(s, "runs: {:?}", case.runs);
    let _ = writeln!(s, "cpus: {}, run cpus: {:?}", case.cpus, case.run_cpus);
    for (k, st) in case.program.stats.iter().enumerate() {
        let _ = writeln!(
            s,
            "stat {k}: {:?} variance {} shift {}",
            st.hist, st.variance, st.shift
        );
    }
    for (k, m) in case.program.maps.iter().enumerate() {
        let _ = writeln!(
            s,
            "map {k}: keys {:?} value {:?} capacity {} sized {} wrap {}",
            m.keys, m.value, m.capacity, m.sized, m.wrap
        );
    }
    s
}

fn first_record_diff(c: &[Vec<u8>], r: &[Vec<u8>]) -> Option<String> {
    if c == r {
        return None;
    }
    for (k, (x, y)) in c.iter().zip(r).enumerate() {
        if x != y {
            return Some(format!(
                "record {k} differs:\n  C:   {}\n  ref: {}",
                hex(x),
                hex(y)
            ));
        }
    }
    Some(format!(
        "record counts differ: C {} ref {}",
        c.len(),
        r.len()
    ))
}

/// Runs `case` on both interpreters and compares them after every run.
pub fn check_case(case: &Case) -> Result<Summary, Mismatch> {
    let seed = case.seed;
    let setup = |what: String| Mismatch::Setup { seed, what };
    let image = build_stand_in(&case.program, vm_spec::image::StandIns::Named)
        .map_err(|e| setup(e.to_string()))?;
    if let Err(error) = verify_image(&image) {
        return Err(Mismatch::Rejected {
            seed,
            error,
            listing: listing(case),
        });
    }
    let mut c = HostSession::new(&image).map_err(|e| setup(e.to_string()))?;
    let mut r = RefSession::new(RefProgram::from_image(&image).map_err(|e| setup(e.to_string()))?);
    c.set_cpus(case.cpus);
    r.set_cpus(case.cpus);
    let mut sum = Summary {
        cases: 1,
        outcomes: vec![0; abi::STP_RTE__COUNT as usize],
        insns: case
            .program
            .handlers
            .iter()
            .map(|h| h.code.len() as u64)
            .sum(),
        ..Default::default()
    };
    for (run, &h) in case.runs.iter().enumerate() {
        let differ = |what: String| Mismatch::Differ {
            seed,
            run,
            handler: h,
            what,
            listing: listing(case),
        };
        let mut env = case.env.clone();
        if let Some(&cpu) = case.run_cpus.get(run) {
            env.cpu = cpu;
        }
        let cres = c.run_handler(h, &env);
        let rep = r.run_handler(h, &env).map_err(|e| setup(e.to_string()))?;
        let c_outcome = match &cres {
            Ok(()) => Outcome::Ret,
            Err(e) => Outcome::Error {
                code: e.code,
                handler: e.handler,
                pc: e.pc,
                addr: e.addr,
            },
        };
        if c_outcome != rep.outcome {
            return Err(differ(format!(
                "outcome: C {c_outcome:?}, ref {:?}",
                rep.outcome
            )));
        }
        if rep.outcome == Outcome::Ret {
            // Every register the run wrote, as RET left it (after an error
            // the C core may have clobbered a register it did not finish).
            let (cr, cs) = c.registers();
            for (k, v) in rep.r.iter().enumerate() {
                if let Some(v) = v {
                    if cr.get(k) != Some(v) {
                        return Err(differ(format!(
                            "r{k} at RET: C {:?}, ref {v:#x}",
                            cr.get(k)
                        )));
                    }
                }
            }
            for (k, v) in rep.s.iter().enumerate() {
                if let Some(v) = v {
                    if cs.get(k) != Some(v) {
                        return Err(differ(format!(
                            "s{k} at RET: C {:?}, ref {:?}",
                            cs.get(k).map(|x| String::from_utf8_lossy(x).into_owned()),
                            String::from_utf8_lossy(v)
                        )));
                    }
                }
            }
        }
        if c.fuel_left() != rep.fuel_left {
            return Err(differ(format!(
                "fuel left: C {}, ref {}",
                c.fuel_left(),
                rep.fuel_left
            )));
        }
        if !c.bad_records().is_empty() {
            return Err(differ(format!(
                "C records that do not decode: {:?}",
                c.bad_records()
            )));
        }
        let (crec, rrec) = (c.take_raw_records(), r.take_records());
        if let Some(d) = first_record_diff(&crec, &rrec) {
            return Err(differ(d));
        }
        if c.globals() != r.globals() {
            return Err(differ(format!(
                "globals: C {:?}, ref {:?}",
                c.globals(),
                r.globals()
            )));
        }
        if c.dropped() != r.dropped() {
            return Err(differ(format!(
                "dropped: C {}, ref {}",
                c.dropped(),
                r.dropped()
            )));
        }
        if c.clock() != r.clock() {
            return Err(differ(format!("clock: C {}, ref {}", c.clock(), r.clock())));
        }
        if c.exit_requested() != r.exit_requested() {
            return Err(differ(format!(
                "exit requested: C {}, ref {}",
                c.exit_requested(),
                r.exit_requested()
            )));
        }
        sum.runs += 1;
        let k = match rep.outcome {
            Outcome::Error { code, .. } => code as usize,
            _ => 0,
        };
        if let Some(n) = sum.outcomes.get_mut(k) {
            *n += 1;
        }
        sum.records += crec.len() as u64;
        sum.exits += u64::from(rep.exit_requested);
        sum.steps += rep.steps;
    }
    sum.dropped = r.dropped();
    sum.skipped = c.skipped();
    if c.skipped() != 0 {
        return Err(Mismatch::Differ {
            seed,
            run: case.runs.len(),
            handler: 0,
            what: format!(
                "C runs skipped: {} (the reference VM never skips)",
                c.skipped()
            ),
            listing: listing(case),
        });
    }
    // The maps as the case left them, in insertion order.
    for (k, decl) in case.program.maps.iter().enumerate() {
        let mut ce = c
            .map_entries(k, decl)
            .ok_or_else(|| setup(format!("map {k}: MAP_READ output does not decode")))?;
        ce.sort_by_key(|e| e.seq);
        let re = r
            .map_entries(k)
            .ok_or_else(|| setup(format!("map {k}: not in the reference VM")))?;
        if ce != re {
            let first = ce
                .iter()
                .zip(&re)
                .position(|(x, y)| x != y)
                .unwrap_or(ce.len().min(re.len()));
            return Err(Mismatch::Differ {
                seed,
                run: case.runs.len(),
                handler: 0,
                what: format!(
                    "map {k} at the end: C {} entries, ref {}; first difference at {first}: C {:?}, ref {:?}",
                    ce.len(),
                    re.len(),
                    ce.get(first),
                    re.get(first)
                ),
                listing: listing(case),
            });
        }
        sum.map_entries += ce.len() as u64;
    }
    Ok(sum)
}
