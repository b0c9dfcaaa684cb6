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
//! is `return=%#x` of `$return`.
//!
//! Pretty-printing: `$$parms$` / `$$vars$` (and `$$`) are the same chain
//! with `%s` of `$__stp_parm<i>$` (`$$`); `$$locals$` is `""`. A target
//! value with a `$` / `$$` suffix (`$x$`, `$p->a$$`, `@cast(p, "T")->m$`)
//! becomes `__stp_pretty(x)` / `__stp_pretty_deep(x)` of the same value
//! without the suffix (lowered to PRETTY, `resolve::Builtin::Pretty`);
//! `$$return$` is `return=%s` of `$return$`.
use super::{bodies_mut, walk_exprs_mut, Gen};
use crate::ast::*;

/// How many parameters `$$parms` lists: the x86-64 SysV integer argument
/// registers (di, si, dx, cx, r8, r9).
const MAX_PARMS: usize = 6;

/// The expression listing parameters `i..` (`sep` before each but the
/// first of the whole list); `pretty`: each value pretty-printed (`""`,
/// `"$"` or `"$$"`, the listing's own suffix).
fn parms_text(i: usize, pretty: &str) -> String {
    if i >= MAX_PARMS {
        return "\"\"".to_string();
    }
    let sep = if i == 0 { "" } else { " " };
    let words: Vec<String> = (0..4)
        .map(|w| format!("@defined($__stp_parm{i}->__stp_name{w})"))
        .collect();
    let conv = if pretty.is_empty() { "%#x" } else { "%s" };
    format!(
        "(@defined($__stp_parm{i}) ? sprintf(\"{sep}%s={conv}\", __stp_parm_name({}), $__stp_parm{i}{pretty}) . {} : \"\")",
        words.join(", "),
        parms_text(i + 1, pretty)
    )
}

/// The text that replaces listing `name` (with its `$$`), if it is one
/// this module rewrites.
fn replacement(name: &str) -> Option<String> {
    match name {
        "$$parms" | "$$vars" => Some(parms_text(0, "")),
        "$$parms$" | "$$vars$" => Some(parms_text(0, "$")),
        "$$parms$$" | "$$vars$$" => Some(parms_text(0, "$$")),
        "$$locals" | "$$locals$" | "$$locals$$" => Some("\"\"".to_string()),
        "$$return" => Some("sprintf(\"return=%#x\", $return)".to_string()),
        "$$return$" => Some("sprintf(\"return=%s\", $return$)".to_string()),
        "$$return$$" => Some("sprintf(\"return=%s\", $return$$)".to_string()),
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
        walk_exprs_mut(body, &mut |e| pretty(e, g));
    }
}

/// `e` with a pretty-printing suffix (`$x$`, `$x->a$$`, `@cast(...)->m$`)
/// as `__stp_pretty(e without it)` (`_deep` for `$$`); any other `e` as it
/// is.
fn pretty(e: &mut Expr, g: &mut Gen) {
    let deep = match &mut e.kind {
        ExprKind::Target(n) if !n.starts_with("$$") => {
            let base = n.trim_end_matches('$');
            let suffix = n.len() - base.len();
            if base.len() < 2 || suffix == 0 || suffix > 2 {
                return;
            }
            let deep = suffix == 2;
            *n = base.to_string();
            deep
        }
        ExprKind::Deref { comps, .. } => {
            // `->name$` lexes as one identifier, `name$`.
            if let Some(TargetComp::Field(f, span)) = comps.last() {
                let base = f.trim_end_matches('$');
                let suffix = f.len() - base.len();
                if (1..=2).contains(&suffix) && !base.is_empty() {
                    let (base, span) = (base.to_string(), *span);
                    comps.pop();
                    comps.push(TargetComp::Field(base, span));
                    comps.push(TargetComp::Pretty(suffix == 2, span));
                }
            }
            let Some(TargetComp::Pretty(deep, _)) = comps.last() else {
                return;
            };
            let deep = *deep;
            // `@cast(p, "T")$` stays a chain of no member: the struct at p.
            comps.pop();
            deep
        }
        _ => return,
    };
    let name = if deep {
        "__stp_pretty_deep"
    } else {
        "__stp_pretty"
    };
    let mut call = g.expr(&format!("{name}(0)"), e.span);
    if let ExprKind::Call { args, .. } = &mut call.kind {
        if let Some(a) = args.first_mut() {
            std::mem::swap(a, e);
        }
    }
    *e = call;
}
