//! Guru mode, which stapvm does not have: the one place that says why, and
//! what stap accepts only with `-g`.
//!
//! stap's guru mode (`-g`) lets a script run embedded C and write kernel
//! state. stapvm runs only bytecode that its verifier (and the module's)
//! proves safe, so every guru-only construct is refused with one reason,
//! `NO_GURU`, and a message that names the construct (`refusal`):
//!
//! - embedded C: `%{ %}` blocks, embedded-C function bodies and
//!   expressions (`NO_GURU_EMBEDDED`, once per script, parse.rs), and a
//!   call of an embedded-C function of a `-I` tapset file
//!   (`passes::usertapset`);
//! - `@kregister`, `@uregister`, `@kderef`, `@uderef` (parse/expr.rs);
//! - writes to target values: `$var = ...`, `$p->f++`, `$argv[1] = ...`,
//!   `@var("x") = ...`, `@cast(p, "T")->f = ...` (stap: "write to target
//!   variable not permitted; need stap -g"; `is_target_value`, used by
//!   the resolver's lvalue check);
//! - the tapset functions stap tags `/* guru */` or keeps in its guru
//!   tapsets (`GURU_FUNCTIONS`: `raise`, `panic`, `mdelay`,
//!   `set_kernel_*` ...), when the script does not define them itself;
//! - on the command line, `-g` itself and `--suppress-time-limits`
//!   (userspace/src/cli.rs).
use crate::ast::{Expr, ExprKind};

macro_rules! no_guru {
    () => {
        "stapvm runs only verified bytecode and has no guru mode (there is no -g)"
    };
}

/// Why guru-only constructs and `-g` are refused.
pub const NO_GURU: &str = no_guru!();

/// The one refusal of a script holding embedded C (`%{ %}`, a function
/// with an embedded-C body, an embedded-C expression), at its first block.
pub const NO_GURU_EMBEDDED: &str = concat!("embedded C cannot run: ", no_guru!());

/// The message refusing the guru-only construct `what`: `what`, then
/// `NO_GURU`.
pub fn refusal(what: &str) -> String {
    format!("{what}: {NO_GURU}")
}

/// The refusal of a write to a target value (stap's "write to target
/// variable not permitted; need stap -g").
pub fn target_write() -> String {
    refusal("write to target variable not permitted")
}

/// Tapset functions that stap lets only guru-mode scripts call
/// (tapset/linux/guru-delay.stp, guru-signal.stp, panic.stp,
/// conversions-guru.stp, uconversions-guru.stp, and the `/* guru */`
/// functions of logging.stp, task.stp and registers.stp).
pub const GURU_FUNCTIONS: &[&str] = &[
    "mdelay",
    "udelay",
    "raise",
    "panic",
    "printk",
    "dump_stack",
    "set_kernel_string",
    "set_kernel_string_n",
    "set_kernel_long",
    "set_kernel_int",
    "set_kernel_short",
    "set_kernel_char",
    "set_kernel_pointer",
    "set_user_string",
    "set_user_string_n",
    "set_user_string_arg",
    "set_user_long",
    "set_user_int",
    "set_user_short",
    "set_user_char",
    "set_user_pointer",
    "task_ns_pid",
    "task_ns_tid",
    "task_ns_gid",
    "task_ns_egid",
    "task_ns_uid",
    "task_ns_euid",
    "__get_kregs",
    "__get_uregs",
    "__set_kregs",
    "__set_uregs",
    // registers.stp's and errno.stp's writes of probe arguments and the
    // return value.
    "set_int_arg",
    "set_uint_arg",
    "set_long_arg",
    "set_ulong_arg",
    "set_longlong_arg",
    "set_ulonglong_arg",
    "set_pointer_arg",
    "set_s32_arg",
    "set_u32_arg",
    "set_s64_arg",
    "set_u64_arg",
    "set_returnval",
];

/// The refusal of a call of a guru-only tapset function.
pub fn function(name: &str) -> String {
    refusal(&format!("{name}() is guru-only"))
}

/// True when `e` is a target value (or an element or member of one), so
/// that assigning it writes kernel or user memory: `$var`, `$p->f`,
/// `$argv[i]`, `@var(...)`, `@cast(...)->f`, an autocast `x->f`.
pub fn is_target_value(e: &Expr) -> bool {
    let mut e = e;
    // Bounded by the expression's depth (the parser bounds nesting).
    loop {
        match &e.kind {
            ExprKind::Target(_) | ExprKind::Deref { .. } => return true,
            ExprKind::AtOp { op, .. } => return op == "@var" || op == "@cast",
            ExprKind::Index { base, .. } => e = base,
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refusal_gives_the_one_reason() {
        for m in [
            NO_GURU_EMBEDDED.to_string(),
            target_write(),
            function("raise"),
            refusal("x"),
        ] {
            assert!(m.ends_with(NO_GURU), "{m}");
        }
        assert_eq!(
            function("raise"),
            "raise() is guru-only: stapvm runs only verified bytecode and has no guru mode (there is no -g)"
        );
    }
}
