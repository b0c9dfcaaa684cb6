//! String helpers of the string opcodes (STOL, SREPL, STEXT/STEXTN, STOK),
//! mirroring kmod/core's string helpers.

/// STOL (opcodes.h): the kernel's simple_strtol on a counted string.
pub(super) fn strtol(s: &[u8], base: u64) -> i64 {
    let (neg, mut t) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    let hex_prefix = |t: &[u8]| t.len() >= 2 && t[0] == b'0' && (t[1] == b'x' || t[1] == b'X');
    let base = match base {
        // "0x" picks 16 only with something after it.
        0 if hex_prefix(t) && t.len() > 2 => 16,
        0 if t.first() == Some(&b'0') => 8,
        0 => 10,
        b => b,
    };
    if base == 16 && hex_prefix(t) {
        t = &t[2..];
    }
    let mut v: u64 = 0;
    for &c in t {
        let d = match c {
            b'0'..=b'9' => u64::from(c - b'0'),
            b'a'..=b'z' => u64::from(c - b'a') + 10,
            b'A'..=b'Z' => u64::from(c - b'A') + 10,
            _ => break,
        };
        if d >= base {
            break;
        }
        v = v.wrapping_mul(base).wrapping_add(d);
    }
    if neg {
        v.wrapping_neg() as i64
    } else {
        v as i64
    }
}

/// SREPL (opcodes.h): every `from` in `s`, left to right without
/// overlap, replaced by `to`; an empty `from` changes nothing; at most
/// `cap` bytes.
pub(super) fn replace(s: &[u8], from: &[u8], to: &[u8], cap: usize) -> Vec<u8> {
    if from.is_empty() {
        return s.to_vec();
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() && out.len() < cap {
        if s[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out.truncate(cap);
    out
}

/// One character of STEXTN's input: a code point of a valid 2..4-byte
/// UTF-8 sequence and its length, or the first byte and 1.
pub(super) fn utf8_char(s: &[u8]) -> (u32, usize) {
    let b = s[0];
    let (n, lead) = match b {
        _ if b & 0xe0 == 0xc0 => (2, b & 0x1f),
        _ if b & 0xf0 == 0xe0 => (3, b & 0x0f),
        _ if b & 0xf8 == 0xf0 => (4, b & 0x07),
        _ => return (u32::from(b), 1),
    };
    if s.len() < n || s[1..n].iter().any(|&x| x & 0xc0 != 0x80) {
        return (u32::from(b), 1);
    }
    let c = s[1..n]
        .iter()
        .fold(u32::from(lead), |c, &x| (c << 6) | u32::from(x & 0x3f));
    let least = [0, 0, 0x80, 0x800, 0x10000][n];
    if c < least || (0xd800..=0xdfff).contains(&c) || c > 0x10ffff {
        return (u32::from(b), 1);
    }
    (c, n)
}

/// STEXTN (opcodes.h): stap's `_stp_text_str` of `s` with the output
/// budget `len` (when in `[1, cap]`, else `cap`), in quotes when `quoted`.
pub(super) fn text_strn(s: &[u8], cap: usize, len: i64, quoted: bool) -> Vec<u8> {
    let mut budget: i64 = if len >= 1 && len <= cap as i64 {
        len
    } else {
        cap as i64
    };
    let mut out = Vec::new();
    if quoted {
        budget = budget.max(5) - 2;
        out.push(b'"');
    }
    // The first escape that the "..." of a quoted cut could split.
    let mut first_esc: Option<(usize, usize)> = None;
    let mut i = 0;
    let mut last = 0u32;
    while i < s.len() {
        let (c, n) = utf8_char(&s[i..]);
        last = c;
        if budget <= 0 {
            break;
        }
        i += n;
        let e: Vec<u8> = if n > 1 {
            if c <= 0xffff {
                format!("\\u{c:04X}").into_bytes()
            } else {
                format!("\\U{c:08X}").into_bytes()
            }
        } else {
            match c {
                0x07 => b"\\a".to_vec(),
                0x08 => b"\\b".to_vec(),
                0x0c => b"\\f".to_vec(),
                0x0a => b"\\n".to_vec(),
                0x0d => b"\\r".to_vec(),
                0x09 => b"\\t".to_vec(),
                0x0b => b"\\v".to_vec(),
                0x22 => b"\\\"".to_vec(),
                0x5c => b"\\\\".to_vec(),
                0x20..=0x7e => vec![c as u8],
                _ => format!("\\{c:03o}").into_bytes(),
            }
        };
        let num = e.len() as i64;
        if num > 1 && first_esc.is_none() && budget - 3 < num {
            first_esc = Some((out.len(), e.len()));
        }
        if budget < num {
            break;
        }
        out.extend_from_slice(&e);
        budget -= num;
    }
    if quoted {
        if last != 0 && i < s.len() {
            let cut = (out.len() as i64 + budget - 3).max(0) as usize;
            let at = match first_esc {
                Some((e, n)) if e < cut && cut < e + n => e,
                _ => cut,
            };
            out.truncate(at);
            out.extend_from_slice(b"\"...");
        } else {
            out.push(b'"');
        }
    }
    out
}

/// STOK (opcodes.h): stap's `tokenize` on the session's tokenizer.
pub(super) fn tokenize(tok: &mut (Vec<u8>, Option<usize>), input: &[u8], delim: &[u8]) -> Vec<u8> {
    if !input.is_empty() {
        *tok = (input.to_vec(), Some(0));
    }
    while let Some(start) = tok.1 {
        let rest = tok.0.get(start..).unwrap_or_default();
        let n = rest.iter().position(|b| delim.contains(b));
        tok.1 = n.map(|n| start + n + 1);
        let token = &rest[..n.unwrap_or(rest.len())];
        if !token.is_empty() {
            return token.to_vec();
        }
    }
    Vec::new()
}
