//! SystemTap's printf in Rust, for the reference interpreter's SPRINTF
//! ([`crate::vm`]) only: written from the rules documented in
//! kmod/core/format.c and opcodes.h, not by calling the C formatter, so
//! that the differential test compares two implementations.
//!
//! The rules (stap's, where they differ from C's): conversions `%d %i`
//! (signed), `%u %x %X %o` (unsigned 64-bit), `%p` (`%#x`), `%c` (the low
//! byte; `%#c` escaped as `\n`, `\'`, `\033`), `%b` (the low 1, 2, 4 or 8
//! bytes, little-endian: the precision if one of those, else the width if
//! one of those, else 8; NUL bytes pad to the width), `%s` (a string; an integer argument prints as `%d`), `%%`; the
//! flags `- 0 + space #` in any number; width and precision as digits or
//! `*` (the next argument's integer; a negative `*` width means `-`, a
//! negative `*` precision means none), both clamped to 2^20; length
//! modifiers `l h z j t L q` skipped while the conversion spec is shorter
//! than 64 bytes; `#x` of 0 is `0x0`; `#o` always adds a leading `0`;
//! `0` pads also with a precision; `+` and space only for `%d %i`
//! (and `%s` of an integer). An unknown conversion is copied as written
//! without taking an argument, an incomplete one at the end of the text
//! is copied and ends the output, a missing argument is 0 or "".
//!
//! The output is cut at the caller's capacity, but every width counts
//! towards nothing else, so a huge width costs no memory.

/// Largest width or precision (format.c: `STP_FMT_MAX_WIDTH`).
pub const MAX_WIDTH: i64 = 1 << 20;

/// One argument of a format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg<'a> {
    /// A 64-bit integer.
    Int(i64),
    /// A counted byte string.
    Str(&'a [u8]),
}

impl Arg<'_> {
    /// The integer a `*` or a numeric conversion reads: a string's is 0.
    fn int(&self) -> i64 {
        match self {
            Arg::Int(v) => *v,
            Arg::Str(_) => 0,
        }
    }
}

/// Output cut at `cap` bytes.
struct Out {
    buf: Vec<u8>,
    cap: usize,
}

impl Out {
    fn room(&self) -> usize {
        self.cap.saturating_sub(self.buf.len())
    }

    fn bytes(&mut self, s: &[u8]) {
        let k = s.len().min(self.room());
        self.buf.extend_from_slice(&s[..k]);
    }

    fn fill(&mut self, c: u8, n: i64) {
        if n <= 0 {
            return;
        }
        let k = usize::try_from(n).unwrap_or(usize::MAX).min(self.room());
        self.buf.resize(self.buf.len() + k, c);
    }
}

/// Conversion flags of one spec.
#[derive(Debug, Clone, Copy, Default)]
struct Flags {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    special: bool,
}

/// A number in `base` (8, 10 or 16) with stap's padding rules.
#[allow(clippy::too_many_arguments)]
fn number(
    o: &mut Out,
    v: i64,
    base: u64,
    signed: bool,
    upper: bool,
    mut width: i64,
    prec: i64,
    f: Flags,
) {
    let zero = f.zero && !f.left;
    let mut mag = v as u64;
    let mut sign: Option<u8> = None;
    if signed {
        if v < 0 {
            sign = Some(b'-');
            mag = (v as u64).wrapping_neg();
        } else if f.plus {
            sign = Some(b'+');
        } else if f.space {
            sign = Some(b' ');
        }
    }
    if sign.is_some() {
        width -= 1;
    }
    let prefix: &[u8] = match (f.special, base) {
        (true, 16) if upper => b"0X",
        (true, 16) => b"0x",
        (true, 8) => b"0",
        _ => b"",
    };
    width -= prefix.len() as i64;
    let digits: Vec<u8> = {
        let set: &[u8; 16] = if upper {
            b"0123456789ABCDEF"
        } else {
            b"0123456789abcdef"
        };
        let mut d = Vec::new();
        loop {
            d.push(set[(mag % base) as usize]);
            mag /= base;
            if mag == 0 {
                break;
            }
        }
        d.reverse();
        d
    };
    let ndig = digits.len() as i64;
    let prec = prec.max(ndig);
    width -= prec;
    if !zero && !f.left {
        o.fill(b' ', width);
        width = 0;
    }
    if let Some(s) = sign {
        o.bytes(&[s]);
    }
    o.bytes(prefix);
    if !f.left {
        o.fill(if zero { b'0' } else { b' ' }, width);
        width = 0;
    }
    o.fill(b'0', prec - ndig);
    o.bytes(&digits);
    o.fill(b' ', width);
}

/// `s` padded with spaces to `width`, on the left unless `-`.
fn padded(o: &mut Out, s: &[u8], width: i64, f: Flags) {
    let pad = width - s.len() as i64;
    if !f.left {
        o.fill(b' ', pad);
    }
    o.bytes(s);
    if f.left {
        o.fill(b' ', pad);
    }
}

/// `%#c`: a C escape for `\a \b \f \n \r \t \v ' \\`, other printable
/// ASCII (also `"`) as is, any other byte as `\ooo`.
fn escaped(c: u8) -> Vec<u8> {
    let named = match c {
        0x07 => Some(b'a'),
        0x08 => Some(b'b'),
        0x0c => Some(b'f'),
        b'\n' => Some(b'n'),
        b'\r' => Some(b'r'),
        b'\t' => Some(b't'),
        0x0b => Some(b'v'),
        b'\'' | b'\\' => Some(c),
        _ => None,
    };
    match named {
        Some(e) => vec![b'\\', e],
        None if (0x20..0x7f).contains(&c) => vec![c],
        None => vec![
            b'\\',
            b'0' + (c >> 6),
            b'0' + ((c >> 3) & 7),
            b'0' + (c & 7),
        ],
    }
}

/// Decimal digits at `fmt[*i..]`, saturating at [`MAX_WIDTH`].
fn digits(fmt: &[u8], i: &mut usize) -> i64 {
    let mut v: i64 = 0;
    while let Some(c) = fmt.get(*i).filter(|c| c.is_ascii_digit()) {
        v = (v * 10 + i64::from(c - b'0')).min(MAX_WIDTH);
        *i += 1;
    }
    v
}

/// Formats `fmt` with `args` and returns at most `cap` bytes of the
/// result (what SPRINTF keeps of it).
pub fn format(fmt: &[u8], args: &[Arg], cap: usize) -> Vec<u8> {
    let mut o = Out {
        buf: Vec::new(),
        cap,
    };
    let mut next = 0usize;
    let mut take = || {
        let a = args.get(next).copied();
        next += 1;
        a
    };
    let mut i = 0usize;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            let end = fmt[i..]
                .iter()
                .position(|&c| c == b'%')
                .map_or(fmt.len(), |k| i + k);
            o.bytes(&fmt[i..end]);
            i = end;
            continue;
        }
        let start = i;
        i += 1;
        let mut f = Flags::default();
        while let Some(&c) = fmt.get(i) {
            match c {
                b'-' => f.left = true,
                b'0' => f.zero = true,
                b'+' => f.plus = true,
                b' ' => f.space = true,
                b'#' => f.special = true,
                _ => break,
            }
            i += 1;
        }
        let mut width;
        if fmt.get(i) == Some(&b'*') {
            i += 1;
            width = take().map_or(0, |a| a.int().clamp(-MAX_WIDTH, MAX_WIDTH));
            if width < 0 {
                width = -width;
                f.left = true;
            }
        } else {
            width = digits(fmt, &mut i);
        }
        let mut prec = -1;
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            if fmt.get(i) == Some(&b'*') {
                i += 1;
                prec = take().map_or(0, |a| a.int().clamp(-MAX_WIDTH, MAX_WIDTH));
                if prec < 0 {
                    prec = -1;
                }
            } else {
                prec = digits(fmt, &mut i);
            }
        }
        while i - start < 64 && fmt.get(i).is_some_and(|c| b"lhzjtLq".contains(c)) {
            i += 1;
        }
        let Some(&conv) = fmt.get(i) else {
            o.bytes(&fmt[start..]);
            break;
        };
        i += 1;
        if conv == b'%' {
            o.bytes(b"%");
            continue;
        }
        if !b"diuxXopcsb".contains(&conv) {
            o.bytes(&fmt[start..i]);
            continue;
        }
        let arg = take().unwrap_or(Arg::Str(b""));
        let n = arg.int();
        match conv {
            b'd' | b'i' => number(&mut o, n, 10, true, false, width, prec, f),
            b'u' => number(&mut o, n, 10, false, false, width, prec, f),
            b'x' => number(&mut o, n, 16, false, false, width, prec, f),
            b'X' => number(&mut o, n, 16, false, true, width, prec, f),
            b'o' => number(&mut o, n, 8, false, false, width, prec, f),
            b'p' => {
                let f = Flags { special: true, ..f };
                number(&mut o, n, 16, false, false, width, prec, f)
            }
            b'c' if f.special => padded(&mut o, &escaped(n as u8), width, f),
            b'c' => padded(&mut o, &[n as u8], width, f),
            b'b' => {
                let n = match (prec, width) {
                    (1 | 2 | 4 | 8, _) => prec,
                    (_, 1 | 2 | 4) => width,
                    _ => 8,
                };
                if !f.left {
                    o.fill(0, width - n);
                }
                o.bytes(&arg.int().to_le_bytes()[..n as usize]);
                if f.left {
                    o.fill(0, width - n);
                }
            }
            _ => match arg {
                Arg::Str(s) => {
                    let k = if prec >= 0 {
                        s.len().min(prec as usize)
                    } else {
                        s.len()
                    };
                    padded(&mut o, &s[..k], width, f)
                }
                Arg::Int(v) => number(&mut o, v, 10, true, false, width, prec, f),
            },
        }
    }
    o.buf
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(fmt: &str, args: &[Arg]) -> String {
        String::from_utf8(format(fmt.as_bytes(), args, 4096)).unwrap_or_default()
    }

    #[test]
    fn stap_rules() {
        assert_eq!(
            f("%#x %#o %p", &[Arg::Int(0), Arg::Int(0), Arg::Int(0)]),
            "0x0 00 0x0"
        );
        assert_eq!(f("%#o", &[Arg::Int(8)]), "010");
        assert_eq!(
            f("%05.3d|%-5d|%+d", &[Arg::Int(7), Arg::Int(-3), Arg::Int(4)]),
            "00007|-3   |+4"
        );
        assert_eq!(
            f(
                "%*d|%-*s|%.*s",
                &[
                    Arg::Int(-4),
                    Arg::Int(1),
                    Arg::Int(3),
                    Arg::Str(b"ab"),
                    Arg::Int(1),
                    Arg::Str(b"xyz")
                ]
            ),
            "1   |ab |x"
        );
        assert_eq!(f("%d %s|%q%lld%w%", &[]), "0 |%lld%w%");
        assert_eq!(f("%s", &[Arg::Int(-12)]), "-12");
        assert_eq!(format(b"%1000000d", &[Arg::Int(1)], 5), b"     ");
    }
}
