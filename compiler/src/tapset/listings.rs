//! Target variable listings: `$$parms`, `$$vars`, `$$locals` and
//! `$$return` in probe bodies, rewritten into stap text before `entry`.
//!
//! stap builds `$$parms` from DWARF at translation time; stapvm has no
//! DWARF, and the parameters' names and types are known only on the target
//! (BTF, read by the loader). So `$$parms` becomes a chain over the
//! first `MAX_PARMS` parameters `i` (the six x86-64 register arguments; a
//! seventh and later parameter is not listed), each printed only when it
//! exists: `@defined($__stp_parm<i>) ? sprintf("%s=%#x", NAME_i,
//! $__stp_parm<i>) . <the rest> : ""`. `$__stp_parm<i>` is a reserved
//! target variable the loader (userspace/src/targetvars.rs) resolves to
//! the function's `i`-th parameter, whatever its name; `NAME_i` is
//! `__stp_parm_name(w0, w1, w2, w3)` (library.stp) of four load-time
//! constants, `@defined($__stp_parm<i>->__stp_name<w>)`, which the loader
//! sets to bytes `8w..8w+8` of the parameter's name (little-endian, so the
//! name is at most 32 bytes). Since parameters are contiguous, the chain
//! nests: parameter `i` is printed only after `i - 1`.
//!
//! `$$vars` is `$$parms` (BTF has no locals), `$$locals` is `""` (stap
//! prints nothing for a function without locals information), `$$return`
//! is `return=%#x` of `$return`. The pretty-printing forms (`$$parms$`,
//! `$$vars$$`) are left to `resolve`, which refuses them.
use super::{bodies_mut, walk_exprs_mut, Gen};
use crate::ast::*;

/// How many parameters `$$parms` lists: the x86-64 SysV integer argument
/// registers (di, si, dx, cx, r8, r9).
const MAX_PARMS: usize = 6;

/// The expression listing parameters `i..` (`sep` before each but the
/// first of the whole list).
fn parms_text(i: usize) -> String {
    if i >= MAX_PARMS {
        return "\"\"".to_string();
    }
    let sep = if i == 0 { "" } else { " " };
    let words: Vec<String> = (0..4)
        .map(|w| format!("@defined($__stp_parm{i}->__stp_name{w})"))
        .collect();
    format!(
        "(@defined($__stp_parm{i}) ? sprintf(\"{sep}%s=%#x\", __stp_parm_name({}), $__stp_parm{i}) . {} : \"\")",
        words.join(", "),
        parms_text(i + 1)
    )
}

/// The text that replaces listing `name` (with its `$$`), if it is one
/// this module rewrites.
fn replacement(name: &str) -> Option<String> {
    match name {
        "$$parms" | "$$vars" => Some(parms_text(0)),
        "$$locals" => Some("\"\"".to_string()),
        "$$return" => Some("sprintf(\"return=%#x\", $return)".to_string()),
        _ => None,
    }
}

/// Rewrites the listings in every probe and function body of `s`.
pub(crate) fn rewrite(s: &mut Script, g: &mut Gen) {
    for body in bodies_mut(s) {
        walk_exprs_mut(body, &mut |e| {
            let ExprKind::Target(n) = &e.kind else {
                return;
            };
            if let Some(text) = replacement(n) {
                *e = g.expr(&text, e.span);
            }
        });
    }
}
