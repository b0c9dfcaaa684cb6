//! stap's target_set.stp: the probes that keep `_target_set` (pid ->
//! parent pid: `target()` and its descendants), added before the syscall
//! rewrite when the script calls `target_set_pid` or `target_set_report`
//! without defining it (the functions and the global come from
//! `library.stp`). stap fills the set in `probe init` and follows
//! `process.begin` / `process.end`; here:
//!
//! - `probe begin` with the lowest sequence (before every script `begin`,
//!   as stap's `init`): `_target_set[target()] = pid()`; begin probes run
//!   in the START ioctl of the stapvm process, so `pid()` is stap's
//!   `stp_pid()`;
//! - the `sched_process_fork` tracepoint, in the parent before the child
//!   is woken: a child whose parent is in the set joins it before it can
//!   run (a new thread, same thread group, is no new process, which
//!   `process.begin` does not report either). The returns below come too
//!   late when the child runs first on another CPU (5.10 at 2 vCPUs: a
//!   child's sleep went unseen);
//! - the same from the return of `fork`, `vfork`, `clone` and `clone3` in
//!   the parent (stap's fallback probes when it has no `process.begin`;
//!   they set the same entries, and the user-space tests drive them);
//! - the `sched_process_exit` tracepoint of a thread-group leader
//!   (`process.end`): the process leaves the set.
use super::{names_in, Gen};
use crate::ast::*;

/// The functions whose calls bring the probes in.
const FUNCTIONS: [&str; 2] = ["target_set_pid", "target_set_report"];

/// The probes, in stap's language (CLONE_THREAD is 0x10000: bit 0 of byte 2
/// of clone3's `struct clone_args` flags).
const PROBES: &str = r#"
probe begin(-9223372036854775807) {
	if (target())
		_target_set[target()] = pid()
}
probe kernel.trace("sched_process_fork") {
	if (task_pid($child) != task_pid($parent) &&
	    (task_pid($child) == target() || [task_pid($parent)] in _target_set))
		_target_set[task_pid($child)] = task_pid($parent)
}
probe syscall.fork.return ?, syscall.vfork.return ? {
	if (retval > 0 && (retval == target() || [pid()] in _target_set))
		_target_set[retval] = pid()
}
probe syscall.clone.return ? {
	if (retval > 0 && !(ulong_arg(1) & 0x10000) &&
	    (retval == target() || [pid()] in _target_set))
		_target_set[retval] = pid()
}
probe syscall.clone3.return ? {
	if (retval > 0 && !(__user_u8(pointer_arg(1) + 2) & 1) &&
	    (retval == target() || [pid()] in _target_set))
		_target_set[retval] = pid()
}
probe kernel.trace("sched_process_exit") ? {
	if (tid() == pid())
		delete _target_set[pid()]
}
"#;

/// Appends the probes to `s` if it calls one of `FUNCTIONS` without
/// defining it.
pub(crate) fn add_probes(s: &mut Script, g: &mut Gen) {
    let mut called = false;
    let mut defined = false;
    for it in &mut s.items {
        let body = match it {
            Item::Probe(p) => Some(&mut p.body),
            Item::Function(f) => {
                defined |= FUNCTIONS.contains(&f.name.as_str());
                f.body.as_mut()
            }
            _ => None,
        };
        if let Some(b) = body {
            let (_, calls) = names_in(b);
            called |= calls.iter().any(|c| FUNCTIONS.contains(&c.as_str()));
        }
    }
    if called && !defined {
        s.items.extend(g.items(PROBES, Span::default()));
    }
}
