//! Associative arrays on the user-space side: decoding the entries
//! `STP_IOC_MAP_READ` (and `HostSession::map_entries`) copy out (abi.h:
//! `struct stp_map_rec`, then keys and value), and the lines stap prints
//! for an array written and never read when the session ends.
use crate::program::{ArgKind, MapDecl, MapValue};
use std::cmp::Ordering;

/// One key or value of an entry.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Val {
    /// A 64-bit integer.
    Int(i64),
    /// A string (bytes).
    Str(Vec<u8>),
}

/// One entry of a map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapEntry {
    /// Insertion number: older entries have smaller ones.
    pub seq: u64,
    /// The keys, in key order.
    pub keys: Vec<Val>,
    /// The value.
    pub value: Val,
}

fn take<const N: usize>(b: &[u8], at: &mut usize) -> Option<[u8; N]> {
    let s = b.get(*at..*at + N)?;
    *at += N;
    s.try_into().ok()
}

fn val(b: &[u8], at: &mut usize, is_str: bool) -> Option<Val> {
    if is_str {
        let n = u32::from_le_bytes(take::<4>(b, at)?) as usize;
        let s = b.get(*at..*at + n)?.to_vec();
        *at += (4 + n).div_ceil(8) * 8 - 4;
        Some(Val::Str(s))
    } else {
        Some(Val::Int(i64::from_le_bytes(take::<8>(b, at)?)))
    }
}

/// Decodes `count` entries of a MAP_READ buffer for map `decl`; `None`
/// when the bytes do not have the layout abi.h describes.
pub fn parse_entries(buf: &[u8], count: usize, decl: &MapDecl) -> Option<Vec<MapEntry>> {
    let mut out = Vec::with_capacity(count);
    let mut at = 0usize;
    for _ in 0..count {
        let start = at;
        let len = u32::from_le_bytes(take::<4>(buf, &mut at)?) as usize;
        take::<4>(buf, &mut at)?;
        let seq = u64::from_le_bytes(take::<8>(buf, &mut at)?);
        let mut keys = Vec::with_capacity(decl.keys.len());
        for k in &decl.keys {
            keys.push(val(buf, &mut at, *k == ArgKind::Str)?);
        }
        let value = val(buf, &mut at, decl.value == MapValue::Str)?;
        if at - start != len {
            return None;
        }
        out.push(MapEntry { seq, keys, value });
    }
    Some(out)
}

/// A string as stap's `%#s` prints it: quoted, with C escapes.
pub fn quoted(s: &[u8]) -> String {
    let mut out = String::from("\"");
    for &c in s {
        match c {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            0x20..=0x7e => out.push(c as char),
            _ => out.push_str(&format!("\\{c:03o}")),
        }
    }
    out.push('"');
    out
}

fn show(v: &Val) -> String {
    match v {
        Val::Int(i) => i.to_string(),
        Val::Str(s) => quoted(s),
    }
}

/// The entries in the order stap prints a global array at exit
/// (`foreach ([k...] in a-)`): values descending, ties oldest first.
pub fn sort_for_exit(entries: &mut [MapEntry]) {
    entries.sort_by(|a, b| match b.value.cmp(&a.value) {
        Ordering::Equal => a.seq.cmp(&b.seq),
        o => o,
    });
}

/// The lines stap prints for array `decl` at exit: `name[k1,"k2"]=v`.
pub fn exit_text(decl: &MapDecl, entries: &[MapEntry]) -> String {
    let mut e = entries.to_vec();
    sort_for_exit(&mut e);
    let mut out = String::new();
    for x in &e {
        let keys: Vec<String> = x.keys.iter().map(show).collect();
        out.push_str(&format!(
            "{}[{}]={}\n",
            decl.name,
            keys.join(","),
            show(&x.value)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_order_and_format() {
        let decl = MapDecl {
            name: "a".into(),
            keys: vec![ArgKind::Int, ArgKind::Str],
            ..Default::default()
        };
        let e = |seq, k: i64, s: &str, v| MapEntry {
            seq,
            keys: vec![Val::Int(k), Val::Str(s.as_bytes().to_vec())],
            value: Val::Int(v),
        };
        let text = exit_text(
            &decl,
            &[e(1, 1, "x", 5), e(2, 2, "y\n", 7), e(3, 3, "z", 5)],
        );
        assert_eq!(text, "a[2,\"y\\n\"]=7\na[1,\"x\"]=5\na[3,\"z\"]=5\n");
    }
}
