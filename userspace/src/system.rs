//! `system(cmd)`: the commands STP_REC_SYSTEM records carry, run as stap's
//! stapio runs them, with `/bin/sh -c`, the consumer's standard streams
//! inherited.
//!
//! Ordering (what stapvm guarantees): the script output of every record
//! before the SYSTEM record is flushed before the command starts; output
//! of the records after it is written once the command has exited, or
//! after [`WAIT`] if it is still running (then it goes on in the
//! background, and its later output may interleave with the script's).
//! So a quick command (`echo`, `date`) prints exactly where the script
//! called system(), and a slow one holds the ring consumer up for at most
//! [`WAIT`]. Commands finished in the background are reaped at the next
//! SYSTEM record and when the session ends.
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the consumer waits for a command before going on without it.
pub const WAIT: Duration = Duration::from_millis(1000);

/// Poll interval while waiting for a command.
const POLL: Duration = Duration::from_millis(2);

/// Commands started and still running in the background.
#[derive(Default)]
pub struct Runner {
    running: Vec<Child>,
}

impl Runner {
    /// Starts `cmd` with `/bin/sh -c` and waits up to [`WAIT`] for it. A
    /// command that cannot be started gives the message for stderr.
    pub fn run(&mut self, cmd: &[u8]) -> Option<String> {
        self.reap();
        let text = String::from_utf8_lossy(cmd).into_owned();
        let mut child = match Command::new("/bin/sh")
            .arg("-c")
            .arg(&text)
            .stdin(Stdio::null())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => return Some(format!("WARNING: system(\"{text}\") failed: {e}")),
        };
        let start = Instant::now();
        loop {
            match child.try_wait() {
                Ok(Some(_)) | Err(_) => return None,
                Ok(None) if start.elapsed() >= WAIT => break,
                Ok(None) => std::thread::sleep(POLL),
            }
        }
        self.running.push(child);
        None
    }

    /// Reaps the background commands that have exited.
    pub fn reap(&mut self) {
        self.running
            .retain_mut(|c| matches!(c.try_wait(), Ok(None)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quick_command_has_run_when_run_returns() {
        let dir = std::env::temp_dir().join(format!("stapvm-system-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let mut r = Runner::default();
        let cmd = format!("echo from-shell > '{}'", dir.display());
        assert_eq!(r.run(cmd.as_bytes()), None);
        assert_eq!(std::fs::read_to_string(&dir).unwrap(), "from-shell\n");
        assert!(r.running.is_empty());
        let _ = std::fs::remove_file(&dir);
    }

    #[test]
    fn a_slow_command_goes_on_in_the_background() {
        let mut r = Runner::default();
        let t = Instant::now();
        assert_eq!(r.run(b"sleep 3"), None);
        let waited = t.elapsed();
        assert!(waited >= WAIT && waited < WAIT * 2, "{waited:?}");
        assert_eq!(r.running.len(), 1);
        for c in &mut r.running {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
