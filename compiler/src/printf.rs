//! stap's printf format grammar (staptree.cxx `string_to_components`):
//! `%[flag][width][.precision][l]conv`, one flag character at most, width
//! and precision digits or `*` (each `*` takes one long argument).
//!
//! Computes the kinds of the arguments a format takes, in order. Needs only
//! the format text (escapes decoded). Used by the parser (a bad format is a
//! parse error there, as in stap), by `passes::types` (argument count and
//! kinds) and by `passes::lower` (the `Format` table entry).
use vm_spec::program::ArgKind;

/// The argument kinds `format` takes, or stap's parse error message.
pub fn parse(format: &str) -> Result<Vec<ArgKind>, &'static str> {
    let b = format.as_bytes();
    let mut args = Vec::new();
    let mut k = 0;
    while k < b.len() {
        if b[k] != b'%' {
            k += 1;
            continue;
        }
        if k + 1 >= b.len() || b[k + 1] == b'%' {
            k += 2;
            continue;
        }
        k += 1;
        let mut started = false;
        if matches!(b[k], b'0' | b'+' | b'-' | b' ' | b'#') {
            started = true;
            k += 1;
        }
        width_or_precision(b, &mut k, &mut args, &mut started);
        if k < b.len() && b[k] == b'.' {
            k += 1;
            width_or_precision(b, &mut k, &mut args, &mut started);
        }
        if k < b.len() && b[k] == b'l' {
            k += 1;
        }
        if k >= b.len() {
            if started {
                return Err("trailing incomplete print format conversion");
            }
            break;
        }
        match b[k] {
            b's' => args.push(ArgKind::Str),
            b'b' | b'c' | b'd' | b'i' | b'u' | b'o' | b'x' | b'X' | b'p' | b'm' | b'M' => {
                args.push(ArgKind::Int)
            }
            _ => return Err("invalid or missing conversion specifier"),
        }
        k += 1;
    }
    Ok(args)
}

/// The width (or, after the `.`, the precision) at `b[*k]`, if any: `*`
/// (one long argument, pushed on `args`) or digits. Moves `*k` past it and
/// sets `started` when there is one.
fn width_or_precision(b: &[u8], k: &mut usize, args: &mut Vec<ArgKind>, started: &mut bool) {
    if *k < b.len() && b[*k] == b'*' {
        args.push(ArgKind::Int);
        *started = true;
        *k += 1;
    } else {
        while *k < b.len() && b[*k].is_ascii_digit() {
            *started = true;
            *k += 1;
        }
    }
}

/// True when `format` uses `%m`/`%M` (memory dumps, not supported yet).
pub fn uses_memory(format: &str) -> bool {
    let b = format.as_bytes();
    let mut k = 0;
    while k < b.len() {
        if b[k] == b'%' {
            if k + 1 < b.len() && b[k + 1] == b'%' {
                k += 2;
                continue;
            }
            let mut j = k + 1;
            while j < b.len() && !b[j].is_ascii_alphabetic() {
                j += 1;
            }
            if j < b.len() && b[j] == b'l' {
                j += 1;
            }
            if j < b.len() && (b[j] == b'm' || b[j] == b'M') {
                return true;
            }
            k = j;
        }
        k += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use ArgKind::{Int, Str};

    #[test]
    fn conversions_and_their_kinds() {
        assert_eq!(
            parse("%s (%d) %%open %-5x %08.3lu %c %p %i %o %X %b\n"),
            Ok(vec![Str, Int, Int, Int, Int, Int, Int, Int, Int, Int])
        );
        assert_eq!(parse("%*.*s"), Ok(vec![Int, Int, Str]));
        assert_eq!(parse("100%"), Ok(vec![]));
    }

    #[test]
    fn bad_formats() {
        assert_eq!(parse("%q"), Err("invalid or missing conversion specifier"));
        assert_eq!(
            parse("%-#x"),
            Err("invalid or missing conversion specifier")
        );
        assert_eq!(
            parse("%5"),
            Err("trailing incomplete print format conversion")
        );
    }

    #[test]
    fn memory_conversions_are_spotted() {
        assert!(uses_memory("%.*M"));
        assert!(!uses_memory("%%M %d"));
    }
}
