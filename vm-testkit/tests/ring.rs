//! The producer side of a ring (ring.c) through `HostRing`: reserve and
//! commit, drops when full, wakeups, wrapping records, and hostile
//! consumer positions that must never make reserve point outside the data.
use vm_spec::records::{self, Record};
use vm_testkit::host::HostRing;

/// A 16-byte EXIT record with time stamp `t`.
fn exit_rec(t: u64) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&16u32.to_le_bytes());
    v.extend_from_slice(&3u16.to_le_bytes());
    v.extend_from_slice(&0u16.to_le_bytes());
    v.extend_from_slice(&t.to_le_bytes());
    v
}

fn put(r: &mut HostRing, t: u64) -> bool {
    match r.reserve(16) {
        Some(off) => {
            r.write(off, &exit_rec(t));
            r.commit(16);
            true
        }
        None => false,
    }
}

#[test]
fn full_ring_drops_and_counts() {
    let mut r = HostRing::new(64);
    for t in 0..4 {
        assert!(put(&mut r, t));
    }
    assert!(!put(&mut r, 4));
    assert!(!put(&mut r, 5));
    assert_eq!(r.dropped(), 2);
    assert_eq!(r.producer_pos(), 64);
    let got = r.drain(&[]);
    assert_eq!(got.len(), 4);
    assert_eq!(got[3], Ok(Record::Exit { time_ns: 3 }));
    assert_eq!(r.consumer_pos(), 64);
    assert!(put(&mut r, 6));
    assert_eq!(r.dropped(), 2);
}

#[test]
fn bad_lengths_are_refused() {
    let mut r = HostRing::new(64);
    assert_eq!(r.reserve(0), None);
    assert_eq!(r.reserve(12), None);
    assert_eq!(r.reserve(72), None);
    assert_eq!(r.dropped(), 3);
    assert_eq!(r.reserve(64), Some(0));
}

#[test]
fn records_that_wrap_are_contiguous() {
    let mut r = HostRing::new(64);
    // Move the positions to 48, then write a 32-byte record over the end.
    for t in 0..3 {
        assert!(put(&mut r, t));
    }
    r.drain(&[]);
    let off = r.reserve(32).unwrap();
    assert_eq!(off, 48);
    let mut rec = Vec::new();
    rec.extend_from_slice(&32u32.to_le_bytes());
    rec.extend_from_slice(&2u16.to_le_bytes());
    rec.extend_from_slice(&1u16.to_le_bytes());
    rec.extend_from_slice(&9u64.to_le_bytes());
    rec.extend_from_slice(&[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]);
    r.write(off, &rec);
    r.commit(32);
    assert_eq!(
        r.drain(&[]),
        vec![Ok(Record::Error {
            code: 1,
            handler: 1,
            pc: 2,
            addr: 3,
            time_ns: 9,
            msg: Vec::new(),
        })]
    );
    // The next record starts at offset 16 of the first copy.
    assert_eq!(r.reserve(16), Some(16));
}

#[test]
fn wakeup_only_when_the_consumer_caught_up() {
    let mut r = HostRing::new(256);
    assert!(put(&mut r, 0));
    assert_eq!(r.wakeups(), 1);
    assert!(put(&mut r, 1));
    assert_eq!(r.wakeups(), 1);
    r.drain(&[]);
    assert!(put(&mut r, 2));
    assert_eq!(r.wakeups(), 2);
}

#[test]
fn hostile_consumer_positions_never_move_writes_outside() {
    let size = 128u64;
    let mut r = HostRing::new(size);
    let mut x: u64 = 0x853c49e6748fea9b;
    let mut accepted = 0;
    for step in 0..20000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let prod = r.producer_pos();
        let cons = match step % 6 {
            0 => x,
            1 => prod.wrapping_add(x % 64),
            2 => prod.wrapping_sub(size + 8 + x % 64),
            3 => u64::MAX - (x % 16),
            4 => prod.wrapping_sub(x % (size + 1)),
            _ => prod,
        };
        r.set_consumer_pos(cons);
        let len = (((x >> 8) % 20) * 8) as u32;
        let before = r.dropped();
        match r.reserve(len) {
            Some(off) => {
                let sane = cons <= prod && prod - cons + u64::from(len) <= size;
                assert!(sane, "accepted cons {cons} prod {prod} len {len}");
                assert!((off as u64) < size);
                assert!(off as u64 + u64::from(len) <= 2 * size);
                let fill = vec![0xa5u8; len as usize];
                r.write(off, &fill);
                r.commit(len);
                accepted += 1;
            }
            None => assert_eq!(r.dropped(), before + 1),
        }
    }
    assert!(accepted > 1000, "{accepted}");
    assert_eq!(records::record_len(&[0; 3]), None);
}
