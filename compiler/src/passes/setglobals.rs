//! stap's `-G NAME=VALUE` (`Target::global_inits`): the initial value of a
//! global, set at compile time as the global's initialiser.
//!
//! stap checks each `-G` against its safety pattern
//! (`^[a-z_][a-z0-9_]*=[a-z0-9_.-]+$`, case-insensitive: session.cxx),
//! then passes it to the module as a module parameter: a number for a
//! long global (the kernel's `simple_strtoull`, base 0: `0x1f`, `017`,
//! `-5`), the text for a string global. There the kernel ignores an
//! unknown parameter with a warning and refuses a value that does not
//! parse. stapvm has no module per script, so the value becomes the
//! global's initialiser (replacing the script's own `= literal`), and both
//! cases are errors: `-G` of a global the script does not have (arrays and
//! statistics are not parameters either), and a long global given text.
//!
//! Runs after `types` (the value's meaning depends on the global's type),
//! before `lower`, which emits the initialisers.
use super::resolve::Resolved;
use super::types::{Ty, Types};
use crate::ast::Literal;

/// stap's safety pattern for `-G`.
pub const PATTERN: &str = "^[a-z_][a-z0-9_]*=[a-z0-9_.-]+$";

/// Splits `-G` text at `=` if it matches stap's pattern.
fn split(opt: &str) -> Option<(&str, &str)> {
    let (name, value) = opt.split_once('=')?;
    let mut nc = name.chars();
    let first_ok = nc
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let name_ok = first_ok && nc.all(|c| c.is_ascii_alphanumeric() || c == '_');
    let value_ok = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    (name_ok && value_ok).then_some((name, value))
}

/// The kernel's reading of an int64 module parameter (`simple_strtoull`
/// with base 0, a leading `-` negating), but of the whole text; values
/// past `i64::MAX` wrap as stap's number literals do.
pub fn parse_number(text: &str) -> Option<i64> {
    let (neg, t) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (radix, digits) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (16, h)
    } else if t.len() > 1 && t.starts_with('0') {
        (8, &t[1..])
    } else {
        (10, t)
    };
    let v = u64::from_str_radix(digits, radix).ok()?;
    let v = v as i64;
    Some(if neg { v.wrapping_neg() } else { v })
}

/// Sets the initialiser of every global named by `opts`; the error text
/// (stap's layout, `ERROR: ...` lines) when one cannot be set.
pub fn apply(opts: &[String], res: &mut Resolved, types: &Types) -> Result<(), String> {
    let mut errors = String::new();
    for opt in opts {
        let Some((name, value)) = split(opt) else {
            errors.push_str(&format!(
                "ERROR: Safety pattern mismatch for -G parameter ('{opt}' vs. '{PATTERN}') rc=1\n"
            ));
            continue;
        };
        let found = res.globals.iter().position(|g| g.name == name);
        let Some(g) =
            found.filter(|&g| !res.globals[g].array && !res.stats.iter().any(|s| s.global == g))
        else {
            let what = if found.is_some() {
                "is an array or a statistic, not a scalar"
            } else {
                "is not a global of the script"
            };
            errors.push_str(&format!(
                "ERROR: -G {opt}: unknown parameter '{name}': '{name}' {what}\n"
            ));
            continue;
        };
        let span = res.globals[g].span;
        let init = match types.globals.get(g) {
            Some(Ty::Str) => Literal::Str(value.as_bytes().to_vec(), span),
            _ => match parse_number(value) {
                Some(v) => Literal::Num(v, span),
                None => {
                    errors.push_str(&format!(
                        "ERROR: -G {opt}: '{value}' invalid for parameter '{name}' (a number: decimal, 0x hex or 0 octal)\n"
                    ));
                    continue;
                }
            },
        };
        res.globals[g].init = Some(init);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stap_safety_pattern() {
        assert_eq!(split("size=65536"), Some(("size", "65536")));
        assert_eq!(split("Name_2=a.b-c"), Some(("Name_2", "a.b-c")));
        for bad in ["size", "=1", "2x=1", "x=", "x=a b", "x=\"q\"", "x y=1"] {
            assert_eq!(split(bad), None, "{bad}");
        }
    }

    #[test]
    fn numbers_as_the_kernel_reads_them() {
        assert_eq!(parse_number("65536"), Some(65536));
        assert_eq!(parse_number("0x1f"), Some(31));
        assert_eq!(parse_number("017"), Some(15));
        assert_eq!(parse_number("-5"), Some(-5));
        assert_eq!(parse_number("0"), Some(0));
        assert_eq!(parse_number("18446744073709551615"), Some(-1));
        for bad in ["", "-", "12abc", "0x", "09", "1.5", "abc"] {
            assert_eq!(parse_number(bad), None, "{bad}");
        }
    }
}
