//! stap's `-v` pass lines on standard error, with this process's numbers:
//!
//! ```text
//! Pass 1: parsed user script and 2 library scripts using 9512virt/5120res/4096shr/3324data kb, in 0usr/0sys/1real ms.
//! Pass 2: analyzed script: 1 probe, 0 functions, 0 embeds, 0 globals using ... kb, in 0usr/0sys/0real ms.
//! Pass 3: translated to bytecode: 1 handler, 3 instructions using ... kb, in 0usr/0sys/0real ms.
//! Pass 4: verified and wrote "x.stpb" in 0usr/0sys/0real ms.   (run: "verified the bytecode")
//! Pass 5: starting run.
//! Pass 5: run completed in 10usr/20sys/1003real ms.
//! ```
//!
//! The shape is stap's (main.cxx: `getmemusage()`, `TIMESPRINT`): memory
//! from /proc/self/statm (virtual, resident, shared, data, in kB), CPU time
//! from getrusage (this process, all threads) and wall-clock time, each
//! pass measured from the end of the one before. Pass 3 is the lowering to
//! bytecode (stap's translation to C), pass 4 the verifier and the `.stpb`
//! file (stap's module build). The compiler reports its passes through
//! `compiler::PassHook`.
use compiler::PassReport;
use std::time::Instant;

/// CPU and wall-clock time at one moment.
#[derive(Debug, Clone, Copy)]
pub struct Stamp {
    /// User CPU time of the process, in microseconds.
    pub user_us: u64,
    /// System CPU time of the process, in microseconds.
    pub sys_us: u64,
    /// Wall clock.
    pub real: Instant,
}

impl Stamp {
    /// Now.
    pub fn now() -> Stamp {
        // SAFETY: getrusage writes into the zeroed struct it is given and
        // has no other effect.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above; RUSAGE_SELF is always valid.
        let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } == 0;
        let us = |tv: libc::timeval| {
            u64::try_from(tv.tv_sec).unwrap_or(0) * 1_000_000
                + u64::try_from(tv.tv_usec).unwrap_or(0)
        };
        Stamp {
            user_us: if ok { us(ru.ru_utime) } else { 0 },
            sys_us: if ok { us(ru.ru_stime) } else { 0 },
            real: Instant::now(),
        }
    }
}

/// stap's `in Uusr/Ssys/Rreal ms.`: the CPU and wall-clock milliseconds
/// from `from` to `to`.
pub fn times_text(from: &Stamp, to: &Stamp) -> String {
    format!(
        "in {}usr/{}sys/{}real ms.",
        to.user_us.saturating_sub(from.user_us) / 1000,
        to.sys_us.saturating_sub(from.sys_us) / 1000,
        to.real.saturating_duration_since(from.real).as_millis()
    )
}

/// The process's memory, as stap reads it from /proc/self/statm, in kB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Memory {
    /// Virtual size.
    pub virt: u64,
    /// Resident.
    pub res: u64,
    /// Resident and shared (file-backed).
    pub shr: u64,
    /// Data and stack.
    pub data: u64,
}

impl Memory {
    /// Parses statm's text (pages: size resident shared text lib data dt).
    pub fn from_statm(text: &str, page_size: u64) -> Option<Memory> {
        let f: Vec<u64> = text
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        let kb = |i: usize| f.get(i).map(|p| p * page_size / 1024);
        Some(Memory {
            virt: kb(0)?,
            res: kb(1)?,
            shr: kb(2)?,
            data: kb(5)?,
        })
    }

    /// This process's, if /proc/self/statm can be read.
    pub fn now() -> Option<Memory> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let page = u64::try_from(page).ok().filter(|&p| p > 0)?;
        Memory::from_statm(&std::fs::read_to_string("/proc/self/statm").ok()?, page)
    }
}

/// stap's `using Vvirt/Rres/Sshr/Ddata kb, ` ("" without /proc).
pub fn memory_text(m: Option<Memory>) -> String {
    m.map_or(String::new(), |m| {
        format!(
            "using {}virt/{}res/{}shr/{}data kb, ",
            m.virt, m.res, m.shr, m.data
        )
    })
}

/// `n thing` or `n things`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The pass line of a compiler report, without its `using ... in ...`
/// tail (`None` for `Verified`: pass 4's line is the caller's, once the
/// program is written).
pub fn report_head(r: &PassReport) -> Option<String> {
    Some(match r {
        PassReport::Parsed { library_files } => format!(
            "Pass 1: parsed user script and {}",
            count(*library_files, "library script", "library scripts")
        ),
        PassReport::Analyzed {
            probes,
            functions,
            embeds,
            globals,
        } => format!(
            "Pass 2: analyzed script: {}, {}, {}, {}",
            count(*probes, "probe", "probes"),
            count(*functions, "function", "functions"),
            count(*embeds, "embed", "embeds"),
            count(*globals, "global", "globals"),
        ),
        PassReport::Lowered {
            handlers,
            instructions,
        } => format!(
            "Pass 3: translated to bytecode: {}, {}",
            count(*handlers, "handler", "handlers"),
            count(*instructions, "instruction", "instructions"),
        ),
        PassReport::Started | PassReport::Verified => return None,
    })
}

/// The passes of one command: prints each pass's line on standard error
/// (when on) and remembers when the last pass ended.
#[derive(Debug)]
pub struct PassLog {
    on: bool,
    /// Passes printed: a command prints up to this one (stap -p N).
    last_pass: u8,
    since: Stamp,
}

impl PassLog {
    /// A log that prints passes up to `last_pass` when `on` (`-v`),
    /// measuring from now.
    pub fn new(on: bool, last_pass: u8) -> PassLog {
        PassLog {
            on,
            last_pass,
            since: Stamp::now(),
        }
    }

    /// Whether it prints.
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// The line of a compiler report (`None` for `Verified` or a pass past
    /// `last_pass`), measured from the end of the pass before; the next
    /// pass is measured from now.
    pub fn line(&mut self, r: &PassReport) -> Option<String> {
        let pass = match r {
            PassReport::Started => {
                self.since = Stamp::now();
                return None;
            }
            PassReport::Parsed { .. } => 1,
            PassReport::Analyzed { .. } => 2,
            PassReport::Lowered { .. } => 3,
            PassReport::Verified => 4,
        };
        let head = report_head(r).filter(|_| pass <= self.last_pass)?;
        let now = Stamp::now();
        let line = format!(
            "{head} {}{}",
            memory_text(Memory::now()),
            times_text(&self.since, &now)
        );
        self.since = Stamp::now();
        Some(line)
    }

    /// Prints the line of a compiler report, if on.
    pub fn report(&mut self, r: &PassReport) {
        if self.on {
            if let Some(line) = self.line(r) {
                eprintln!("{line}");
            }
        }
    }

    /// Prints pass 4's line (`what`: `verified and wrote "x.stpb"`),
    /// measured from the end of pass 3, if on.
    pub fn pass4(&mut self, what: &str) {
        if self.on && self.last_pass >= 4 {
            let now = Stamp::now();
            eprintln!("Pass 4: {what} {}", times_text(&self.since, &now));
            self.since = Stamp::now();
        }
    }

    /// Prints `Pass 5: starting run.` and measures the run from now.
    pub fn start_run(&mut self) {
        if self.on {
            eprintln!("Pass 5: starting run.");
        }
        self.since = Stamp::now();
    }

    /// Prints `Pass 5: run completed in ...`, if on.
    pub fn run_completed(&mut self) {
        if self.on {
            eprintln!(
                "Pass 5: run completed {}",
                times_text(&self.since, &Stamp::now())
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn statm_in_kb() {
        let m = Memory::from_statm("2378 1280 1024 200 0 831 0\n", 4096).unwrap();
        assert_eq!(
            m,
            Memory {
                virt: 9512,
                res: 5120,
                shr: 4096,
                data: 3324
            }
        );
        assert_eq!(
            memory_text(Some(m)),
            "using 9512virt/5120res/4096shr/3324data kb, "
        );
        assert_eq!(memory_text(None), "");
        assert!(Memory::from_statm("1 2 3", 4096).is_none());
        assert!(Memory::from_statm("1 2 x 4 5 6 7", 4096).is_none());
        // This process's: resident within virtual.
        let now = Memory::now().unwrap();
        assert!(now.res > 0 && now.res <= now.virt, "{now:?}");
    }

    #[test]
    fn times_in_ms() {
        let a = Stamp {
            user_us: 1_000_000,
            sys_us: 500,
            real: Instant::now(),
        };
        let b = Stamp {
            user_us: 1_012_999,
            sys_us: 2_600,
            real: a.real + Duration::from_millis(15),
        };
        assert_eq!(times_text(&a, &b), "in 12usr/2sys/15real ms.");
        // CPU time moves forward.
        let x = Stamp::now();
        let mut n = 0u64;
        for i in 0..5_000_000u64 {
            n = n.wrapping_add(i * i);
        }
        std::hint::black_box(n);
        let y = Stamp::now();
        assert!(y.user_us + y.sys_us > x.user_us + x.sys_us);
    }

    #[test]
    fn report_lines_in_stap_shape() {
        let h = |r| report_head(&r).unwrap();
        assert_eq!(
            h(PassReport::Parsed { library_files: 1 }),
            "Pass 1: parsed user script and 1 library script"
        );
        assert_eq!(
            h(PassReport::Analyzed {
                probes: 1,
                functions: 2,
                embeds: 0,
                globals: 1
            }),
            "Pass 2: analyzed script: 1 probe, 2 functions, 0 embeds, 1 global"
        );
        assert_eq!(
            h(PassReport::Lowered {
                handlers: 2,
                instructions: 14
            }),
            "Pass 3: translated to bytecode: 2 handlers, 14 instructions"
        );
        assert!(report_head(&PassReport::Verified).is_none());
        assert!(report_head(&PassReport::Started).is_none());
        let mut log = PassLog::new(true, 2);
        let line = log.line(&PassReport::Parsed { library_files: 3 }).unwrap();
        let tail = line
            .strip_prefix("Pass 1: parsed user script and 3 library scripts using ")
            .unwrap();
        assert!(
            tail.contains("virt/") && tail.ends_with("real ms."),
            "{line}"
        );
        // Past the last pass: nothing.
        assert!(log
            .line(&PassReport::Lowered {
                handlers: 1,
                instructions: 1
            })
            .is_none());
    }
}
