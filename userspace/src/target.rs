//! stap's target process: `-x PID` sets `target()`; `-c CMD` starts CMD
//! held before exec, sets `target()` to its PID, lets it exec once the
//! probes are armed and ends the session when it exits (stap's
//! `_stp_target`, staprun's `-c`). `target()` is a constant of the program
//! (`Program::target_konst`) that `patch` fills in before the image is
//! built.
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use thiserror::Error;
use vm_spec::program::Program;

/// Starting the `-c` command failed.
#[derive(Debug, Error)]
pub enum Error {
    /// The command holds a NUL byte.
    #[error("-c command contains a NUL byte")]
    Nul,
    /// pipe() or fork() failed.
    #[error("cannot start the -c command: {0}")]
    Spawn(io::Error),
}

/// Puts `pid` where the program reads `target()`, and into the `perf.*
/// .process` probes (abi.h `STP_PROBE_F_PERF_TASK`), which count in it.
pub fn patch(prog: &mut Program, pid: i64) {
    if let Some(k) = prog.target_konst {
        if let Some(slot) = prog.konsts.get_mut(k as usize) {
            *slot = pid;
        }
    }
    for p in &mut prog.probes {
        if let Some(perf) = p.perf.as_mut().filter(|_| counts_in_target(p.flags)) {
            perf.pid = i32::try_from(pid).unwrap_or(0);
        }
        // `process` without a path: the target's executable, its hits.
        if let Some(u) = p.uprobe.as_mut().filter(|u| u.target) {
            u.pid = i32::try_from(pid).unwrap_or(0);
        }
    }
}

fn counts_in_target(flags: u8) -> bool {
    flags & vm_spec::abi::STP_PROBE_F_PERF_TASK as u8 != 0
}

/// The first probe point that counts in the target process (`perf.*
/// .process`) and so needs one (`-x`/`-c`), as written.
pub fn needs_target(prog: &Program) -> Option<&str> {
    prog.probes
        .iter()
        .find(|p| counts_in_target(p.flags) || p.uprobe.as_ref().is_some_and(|u| u.target))
        .map(|p| p.display.as_str())
}

/// The `-c` command: forked, waiting on a pipe before it execs.
pub struct TargetChild {
    /// Its PID (`target()`).
    pub pid: libc::pid_t,
    /// Writing one byte lets it exec; closing without writing makes it
    /// exit without running the command.
    go: std::cell::Cell<Option<OwnedFd>>,
    /// Reaped already.
    done: std::cell::Cell<bool>,
}

impl TargetChild {
    /// Forks the child that will run `/bin/sh -c "exec CMD"` (so the
    /// command keeps the PID `target()` names) once `release` is called.
    pub fn spawn(cmd: &str) -> Result<Self, Error> {
        let sh = CString::new("/bin/sh").map_err(|_| Error::Nul)?;
        let dash_c = CString::new("-c").map_err(|_| Error::Nul)?;
        let script = CString::new(format!("exec {cmd}")).map_err(|_| Error::Nul)?;
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(Error::Spawn(io::Error::last_os_error()));
        }
        // SAFETY: pipe2 returned two fresh descriptors we now own.
        let (rd, wr) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: the child only calls async-signal-safe functions (close,
        // read, execv, _exit) before exec; every argument was built above.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(Error::Spawn(io::Error::last_os_error()));
        }
        if pid == 0 {
            // SAFETY: see above; the child never returns from this block.
            unsafe {
                libc::close(wr.as_raw_fd());
                let mut b = 0u8;
                let n = libc::read(rd.as_raw_fd(), (&mut b as *mut u8).cast(), 1);
                if n == 1 {
                    let argv = [
                        sh.as_ptr(),
                        dash_c.as_ptr(),
                        script.as_ptr(),
                        std::ptr::null(),
                    ];
                    libc::execv(sh.as_ptr(), argv.as_ptr());
                }
                libc::_exit(127);
            }
        }
        drop(rd);
        Ok(TargetChild {
            pid,
            go: std::cell::Cell::new(Some(wr)),
            done: std::cell::Cell::new(false),
        })
    }

    /// Lets the command exec (the probes are armed).
    pub fn release(&self) {
        if let Some(fd) = self.go.take() {
            let b = 1u8;
            // SAFETY: one byte from a live buffer into our own pipe end.
            unsafe { libc::write(fd.as_raw_fd(), (&b as *const u8).cast(), 1) };
        }
    }

    /// True once the command has exited (reaps it).
    pub fn exited(&self) -> bool {
        if self.done.get() {
            return true;
        }
        let mut status = 0;
        // SAFETY: waits for our own child without blocking.
        let r = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        if r == self.pid || r < 0 {
            self.done.set(true);
        }
        self.done.get()
    }
}

impl Drop for TargetChild {
    /// A command never released (START failed) exits without running;
    /// either way it is reaped when it has ended.
    fn drop(&mut self) {
        drop(self.go.take());
        self.exited();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn patch_sets_the_target_constant() {
        let mut p = Program {
            konsts: vec![7, 0],
            target_konst: Some(1),
            ..Default::default()
        };
        patch(&mut p, 1234);
        assert_eq!(p.konsts, vec![7, 1234]);
    }

    #[test]
    fn child_waits_for_release_then_runs() {
        let dir = std::env::temp_dir().join(format!("stapvm-target-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let c = TargetChild::spawn(&format!("echo $$ > {}", dir.display())).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert!(!c.exited(), "must wait for release");
        assert!(!dir.exists());
        c.release();
        let t = Instant::now();
        while !c.exited() && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(c.exited());
        let pid: i32 = std::fs::read_to_string(&dir)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(pid, c.pid, "the command keeps the PID target() names");
        let _ = std::fs::remove_file(&dir);
    }
}
