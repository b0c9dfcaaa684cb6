//! Seeded mutations of valid images, for testing the verifier: each one
//! breaks an image the way a hostile or corrupt file would (bit flips,
//! truncation, section descriptors swapped, overlapping, pointing past the
//! end or made huge so that `off + size` overflows 32 bits, table entries
//! with huge counts, offsets and sizes, jumps past the end or backwards,
//! unknown opcodes, limits at and past their bounds), then resealed (the
//! header's checksum made right again) so that the checks past the
//! checksum see them; the `corrupt` kind changes bytes without resealing,
//! as a damaged download would (refused by the checksum). Used by the
//! verifier's stream test (`vm-testkit/tests/verify.rs`: deep checks
//! reached, every accepted image run on the C core) and by `gen-hostile`
//! for the guest's ioctl test. Testing only.
use crate::gen::Rng;
use std::mem::{offset_of, size_of};
use vm_spec::abi::*;

const HDR: usize = size_of::<stp_image_hdr>();
const OFF_SEC: usize = offset_of!(stp_image_hdr, sec);
const OFF_LIMITS: usize = offset_of!(stp_image_hdr, limits);
const NSEC: u64 = STP_SEC__COUNT as u64;

/// 32-bit values that sit on the edges of size and offset arithmetic.
const EDGES: [u32; 14] = [
    0,
    1,
    7,
    8,
    0x7f,
    0xff,
    0xffff,
    0x1_0000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_fff8,
    0xffff_fffc,
    0xffff_ffff,
    STP_MAX_IMAGE_SIZE,
];

/// The kinds of mutation, by name (`Mutation::kind`).
pub const KINDS: [&str; 17] = [
    "corrupt",
    "bitflip",
    "bytes",
    "truncate",
    "extend",
    "section-swap",
    "section-huge",
    "section-overflow",
    "section-overlap",
    "section-mid-entry",
    "header-field",
    "limit",
    "entry-field",
    "jump",
    "opcode",
    "operand",
    "handler-overlap",
];

/// One mutated image.
#[derive(Debug, Clone)]
pub struct Mutation {
    /// What was done (one of `KINDS`).
    pub kind: &'static str,
    /// The bytes.
    pub image: Vec<u8>,
}

fn get32(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

fn put32(b: &mut [u8], o: usize, v: u32) {
    if o + 4 <= b.len() {
        b[o..o + 4].copy_from_slice(&v.to_le_bytes());
    }
}

/// (offset, size) of section `s`.
fn sec(b: &[u8], s: u64) -> (u32, u32) {
    let o = OFF_SEC + 8 * s as usize;
    (get32(b, o), get32(b, o + 4))
}

fn edge(rng: &mut Rng) -> u32 {
    rng.pick(&EDGES).unwrap_or(0)
}

/// Makes the header's total size agree with the buffer again, so that the
/// mutation reaches the checks past the header.
fn fix_total(b: &mut [u8]) {
    if b.len() >= HDR {
        let n = b.len() as u32;
        put32(b, offset_of!(stp_image_hdr, total_size), n);
    }
}

/// Entry `i` of the (valid) section `s`: its byte offset, if any.
fn entry(b: &[u8], s: u32, rng: &mut Rng, entry_size: usize) -> Option<usize> {
    let (off, size) = sec(b, u64::from(s));
    let n = size as usize / entry_size;
    if n == 0 {
        return None;
    }
    Some(off as usize + entry_size * rng.below(n as u64) as usize)
}

/// One mutation of `base` (a valid image) chosen by `rng`.
pub fn mutate(base: &[u8], rng: &mut Rng) -> Mutation {
    let mut b = base.to_vec();
    let k = rng.below(KINDS.len() as u64) as usize;
    let kind = KINDS[k];
    let len = b.len().max(1) as u64;
    match kind {
        "corrupt" => {
            // Not resealed (below): the checksum must catch it.
            let at = rng.below(len) as usize;
            if at < b.len() {
                b[at] ^= 1 + rng.below(255) as u8;
            }
            return Mutation { kind, image: b };
        }
        "bitflip" => {
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(len) as usize;
                if at < b.len() {
                    b[at] ^= 1 << rng.below(8);
                }
            }
        }
        "bytes" => {
            // Random bytes past the header's magic and version, so that
            // the table and code checks are reached.
            for _ in 0..1 + rng.below(3) {
                let at = 8 + rng.below(len.saturating_sub(8).max(1)) as usize;
                if at < b.len() {
                    b[at] = rng.next_u64() as u8;
                }
            }
            fix_total(&mut b);
        }
        "truncate" => {
            let n = rng.below(len) as usize;
            b.truncate(n);
            if rng.chance(1, 2) {
                fix_total(&mut b);
            }
        }
        "extend" => {
            let n = 1 + rng.below(64) as usize;
            b.resize(b.len() + n, rng.next_u64() as u8);
            if rng.chance(2, 3) {
                fix_total(&mut b);
            }
        }
        "section-swap" => {
            let (i, j) = (rng.below(NSEC), rng.below(NSEC));
            let (oi, oj) = (OFF_SEC + 8 * i as usize, OFF_SEC + 8 * j as usize);
            for d in 0..8 {
                b.swap(oi + d, oj + d);
            }
        }
        "section-huge" => {
            let s = rng.below(NSEC) as usize;
            let field = OFF_SEC + 8 * s + 4 * rng.below(2) as usize;
            put32(&mut b, field, edge(rng));
        }
        "section-overflow" => {
            // off + size wraps around 2^32 and lands inside the image.
            let s = rng.below(NSEC) as usize;
            let (off, _) = sec(&b, s as u64);
            let size = 0u32
                .wrapping_sub(off)
                .wrapping_add(8 * (1 + rng.below(4) as u32));
            put32(&mut b, OFF_SEC + 8 * s + 4, size);
        }
        "section-overlap" => {
            let (i, j) = (rng.below(NSEC), rng.below(NSEC));
            let (oj, _) = sec(&b, j);
            let shift = 8 * rng.below(3) as u32;
            put32(&mut b, OFF_SEC + 8 * i as usize, oj.wrapping_add(shift));
        }
        "section-mid-entry" => {
            // A section starting inside an entry (or an instruction) of
            // its own or another, or sized in half entries.
            let s = rng.below(NSEC) as usize;
            let (off, size) = sec(&b, s as u64);
            if rng.chance(1, 2) {
                put32(&mut b, OFF_SEC + 8 * s, off.wrapping_add(4));
            } else {
                put32(&mut b, OFF_SEC + 8 * s + 4, size.wrapping_add(4));
            }
        }
        "header-field" => {
            let fields = [
                offset_of!(stp_image_hdr, magic),
                offset_of!(stp_image_hdr, version),
                offset_of!(stp_image_hdr, total_size),
                offset_of!(stp_image_hdr, flags),
                offset_of!(stp_image_hdr, nglobals),
                offset_of!(stp_image_hdr, checksum),
            ];
            let f = rng.pick(&fields).unwrap_or(0);
            if f == offset_of!(stp_image_hdr, version) {
                // version and hdr_size share the word.
                let v = get32(&b, f) ^ (1 << rng.below(32));
                put32(&mut b, f, v);
            } else {
                put32(&mut b, f, edge(rng));
            }
        }
        "limit" => {
            let l = rng.below(u64::from(STP_LIM__COUNT)) as usize;
            let lim = vm_spec::limits::LIMITS[l];
            let vals = [
                0,
                lim.min.wrapping_sub(1),
                lim.min,
                lim.max,
                lim.max.wrapping_add(1),
                u32::MAX,
                lim.max / 3,
            ];
            put32(&mut b, OFF_LIMITS + 4 * l, rng.pick(&vals).unwrap_or(0));
        }
        "entry-field" => {
            // One 32-bit word of one table entry set to an edge value:
            // handler ranges, probe handlers and symbols, string offsets
            // and lengths, format counts, statistic and map sizes.
            let tables = [
                (STP_SEC_HANDLERS, size_of::<stp_handler_desc>()),
                (STP_SEC_PROBES, size_of::<stp_probe_desc>()),
                (STP_SEC_STRS, size_of::<stp_str_desc>()),
                (STP_SEC_FORMATS, size_of::<stp_format_desc>()),
                (STP_SEC_STATS, size_of::<stp_stat_desc>()),
                (STP_SEC_MAPS, size_of::<stp_map_desc>()),
                (STP_SEC_KONSTS, 8),
            ];
            let (s, es) = rng.pick(&tables).unwrap_or((STP_SEC_HANDLERS, 16));
            if let Some(o) = entry(&b, s, rng, es) {
                let w = o + 4 * rng.below(es as u64 / 4) as usize;
                let v = if rng.chance(1, 3) {
                    get32(&b, w) ^ (1 << rng.below(32))
                } else {
                    edge(rng)
                };
                put32(&mut b, w, v);
            }
        }
        "jump" => {
            // An instruction becomes a jump (or a LOOP) to somewhere:
            // past the end, onto itself, far back, just before/after
            // the handler's ends.
            if let Some(o) = entry(&b, STP_SEC_CODE, rng, 8) {
                let ops = [STP_OP_JMP, STP_OP_JZ, STP_OP_JNZ, STP_OP_LOOP];
                let op = rng.pick(&ops).unwrap_or(STP_OP_JMP);
                let imms = [
                    -1i32,
                    -2,
                    0,
                    1,
                    2,
                    3,
                    100,
                    -100,
                    i32::MAX,
                    i32::MIN,
                    (rng.below(64) as i32) - 32,
                ];
                b[o] = op as u8;
                b[o + 1] = 0;
                b[o + 2] = 0;
                b[o + 3] = 0;
                put32(&mut b, o + 4, rng.pick(&imms).unwrap_or(1) as u32);
            }
        }
        "opcode" => {
            if let Some(o) = entry(&b, STP_SEC_CODE, rng, 8) {
                b[o] = if rng.chance(1, 4) {
                    rng.next_u64() as u8
                } else {
                    rng.below(u64::from(STP_OP__COUNT)) as u8
                };
            }
        }
        "operand" => {
            if let Some(o) = entry(&b, STP_SEC_CODE, rng, 8) {
                let f = 1 + rng.below(4) as usize;
                if f == 4 {
                    let v = if rng.chance(1, 2) {
                        edge(rng)
                    } else {
                        get32(&b, o + 4)
                            .wrapping_add(rng.below(5) as u32)
                            .wrapping_sub(2)
                    };
                    put32(&mut b, o + 4, v);
                } else {
                    let vals = [0u8, 1, 2, 15, 16, 17, 63, 64, 255];
                    b[o + f] = rng.pick(&vals).unwrap_or(0);
                }
            }
        }
        _ => {
            // "handler-overlap": a handler's range moved onto another's,
            // or its count grown into the next one.
            let hs = size_of::<stp_handler_desc>();
            if let (Some(x), Some(y)) = (
                entry(&b, STP_SEC_HANDLERS, rng, hs),
                entry(&b, STP_SEC_HANDLERS, rng, hs),
            ) {
                if rng.chance(1, 2) {
                    let v = get32(&b, y);
                    put32(&mut b, x, v);
                } else {
                    let v = get32(&b, x + 4).wrapping_add(1 + rng.below(4) as u32);
                    put32(&mut b, x + 4, v);
                }
            }
        }
    }
    if kind != "header-field" || rng.chance(1, 2) {
        vm_spec::image::seal(&mut b);
    }
    Mutation { kind, image: b }
}
