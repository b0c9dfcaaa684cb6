//! The consumer side of the per-CPU rings (abi.h "Rings"): BPF-ringbuf
//! layout, one producer (the kernel) per ring. The consumer reads
//! `producer_pos` with acquire ordering, walks the records between its
//! position and the producer's, validates every header, copies the records
//! out into a batch and publishes its new `consumer_pos` with a
//! store-release. A malformed record stops reading that ring for good (the
//! producer is the kernel; a bad record means a bug, never something to
//! guess past) and is reported.
//!
//! Wakeups: the kernel wakes a poller only when its commit found the
//! consumer caught up. Publishing `consumer_pos` and then sleeping in
//! poll() is safe without a fence here: the kernel's poll puts a full
//! barrier between that store and its check of `producer_pos`, the partner
//! of the one the producer puts between its store of `producer_pos` and
//! its check of `consumer_pos` (kmod/core/ring.c, kmod/session.c).
//!
//! The memory is abstracted by `RingMemory` so the walk is unit-tested on a
//! fake ring in a `Vec`; `MappedRing` is the real mmap of a session.
use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use thiserror::Error;
use vm_spec::abi;

/// Bytes of a record header (`struct stp_rec_hdr`).
pub const REC_HDR_LEN: usize = std::mem::size_of::<abi::stp_rec_hdr>();
/// Where the header's `len` and `time_ns` lie.
const REC_LEN_AT: usize = std::mem::offset_of!(abi::stp_rec_hdr, len);
const REC_TIME_AT: usize = std::mem::offset_of!(abi::stp_rec_hdr, time_ns);

/// What a ring consumer needs from the ring's memory.
pub trait RingMemory {
    /// `producer_pos`, read with acquire ordering.
    fn producer_pos(&self) -> u64;
    /// `consumer_pos` (only this process writes it).
    fn consumer_pos(&self) -> u64;
    /// Publishes `consumer_pos` with release ordering.
    fn set_consumer_pos(&self, pos: u64);
    /// The data area: the ring's `size` bytes mapped twice in a row.
    fn data(&self) -> &[u8];
}

/// A ring that cannot be read any further.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RingError {
    /// A record header is malformed.
    #[error("ring of CPU {cpu}: bad record at position {pos} (length {len}); the rest of this ring's output is lost")]
    BadRecord {
        /// The ring's CPU.
        cpu: u32,
        /// Position of the bad record.
        pos: u64,
        /// The length it claims.
        len: u32,
    },
    /// The producer position is behind the consumer or more than a ring ahead.
    #[error("ring of CPU {cpu}: producer position {prod} inconsistent with consumer position {cons}; the rest of this ring's output is lost")]
    BadPosition {
        /// The ring's CPU.
        cpu: u32,
        /// Producer position.
        prod: u64,
        /// Consumer position.
        cons: u64,
    },
}

/// Where one record of a batch lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecRef {
    /// `time_ns` of its header, the merge key.
    pub time_ns: u64,
    /// The ring (CPU) it came from.
    pub cpu: u32,
    /// Offset in `Batch::buf`.
    pub off: usize,
    /// Length in bytes (header included).
    pub len: usize,
}

/// Records copied out of the rings, to be merged by time.
#[derive(Debug, Default)]
pub struct Batch {
    buf: Vec<u8>,
    recs: Vec<RecRef>,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every record (keeps the allocations).
    pub fn clear(&mut self) {
        self.buf.clear();
        self.recs.clear();
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.recs.len()
    }

    /// True when there are no records.
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// Appends one record (its bytes, header included).
    pub fn push(&mut self, cpu: u32, time_ns: u64, rec: &[u8]) {
        self.recs.push(RecRef {
            time_ns,
            cpu,
            off: self.buf.len(),
            len: rec.len(),
        });
        self.buf.extend_from_slice(rec);
    }

    /// Orders the records by `time_ns`; records with equal times keep
    /// their ring order (the sort is stable, and each ring is in order).
    pub fn sort_by_time(&mut self) {
        self.recs.sort_by_key(|r| r.time_ns);
    }

    /// The records, in their current order, with their place.
    pub fn iter(&self) -> impl Iterator<Item = (&RecRef, &[u8])> + '_ {
        self.recs
            .iter()
            .map(move |r| (r, &self.buf[r.off..r.off + r.len]))
    }
}

/// Reads a little-endian u32 at `off` (the caller checked the bounds).
fn le_u32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

/// Reads a little-endian u64 at `off` (the caller checked the bounds).
fn le_u64(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(a)
}

/// The consumer of one ring.
#[derive(Debug)]
pub struct Consumer<M: RingMemory> {
    mem: M,
    cpu: u32,
    size: u64,
    broken: bool,
}

impl<M: RingMemory> Consumer<M> {
    /// A consumer of the ring of `cpu` whose data area is `size` bytes (a
    /// power of two; `mem.data()` holds it twice).
    pub fn new(mem: M, cpu: u32, size: u64) -> Self {
        let broken = !size.is_power_of_two() || (mem.data().len() as u64) < 2 * size;
        Consumer {
            mem,
            cpu,
            size,
            broken,
        }
    }

    /// True once a bad record stopped this ring.
    #[cfg(test)]
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Copies every complete record into `batch` and frees its space in the
    /// ring. Returns the number of records copied, or the error that stopped
    /// the ring (records before it are in `batch` and consumed).
    pub fn drain(&mut self, batch: &mut Batch) -> Result<usize, RingError> {
        if self.broken {
            return Ok(0);
        }
        let prod = self.mem.producer_pos();
        let mut cons = self.mem.consumer_pos();
        if prod < cons || prod - cons > self.size {
            self.broken = true;
            return Err(RingError::BadPosition {
                cpu: self.cpu,
                prod,
                cons,
            });
        }
        let data = self.mem.data();
        let mask = self.size - 1;
        let mut n = 0;
        let mut result = Ok(0);
        while cons < prod {
            let off = (cons & mask) as usize;
            let avail = prod - cons;
            let len = if avail >= REC_HDR_LEN as u64 {
                le_u32(data, off + REC_LEN_AT)
            } else {
                0
            };
            let len64 = u64::from(len);
            if avail < REC_HDR_LEN as u64
                || len64 < REC_HDR_LEN as u64
                || len64 % 8 != 0
                || len64 > self.size
                || len64 > avail
            {
                self.broken = true;
                result = Err(RingError::BadRecord {
                    cpu: self.cpu,
                    pos: cons,
                    len,
                });
                break;
            }
            // The data is mapped twice in a row, so a record of at most
            // `size` bytes starting below `size` never wraps.
            let rec = &data[off..off + len as usize];
            let time_ns = le_u64(rec, REC_TIME_AT);
            batch.push(self.cpu, time_ns, rec);
            cons += len64;
            n += 1;
        }
        self.mem.set_consumer_pos(cons);
        result.map(|_: usize| n)
    }
}

/// One ring of a session, mapped: the consumer page read-write, the
/// producer page and the (twice-mapped) data read-only.
#[derive(Debug)]
pub struct MappedRing {
    cons: memmap2::MmapMut,
    prod: memmap2::Mmap,
    page_size: usize,
}

impl MappedRing {
    /// Maps the ring of `cpu` as abi.h lays it out.
    pub fn map(file: &File, info: &abi::stp_session_info, cpu: u32) -> io::Result<Self> {
        let page = info.page_size as u64;
        let base = u64::from(cpu) * u64::from(info.ring_stride_pages) * page;
        let data_len = (1 + 2 * u64::from(info.ring_pages)) * page;
        let data_len = usize::try_from(data_len)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "ring too large"))?;
        // SAFETY: the session fd maps kernel pages that stay valid while the
        // mapping exists (the kernel keeps the ring until the last mapping
        // is gone). The consumer page is only ever accessed through
        // AtomicU64 below; nothing else in this process maps it.
        let cons = unsafe {
            memmap2::MmapOptions::new()
                .offset(base)
                .len(page as usize)
                .map_mut(file)?
        };
        // SAFETY: as above; this mapping is read-only and read only through
        // the acquire load of producer_pos and the data slice, whose bytes
        // below producer_pos the kernel does not touch until user space
        // moves consumer_pos past them.
        let prod = unsafe {
            memmap2::MmapOptions::new()
                .offset(base + page)
                .len(data_len)
                .map(file)?
        };
        Ok(MappedRing {
            cons,
            prod,
            page_size: page as usize,
        })
    }

    fn cons_atomic(&self) -> &AtomicU64 {
        // SAFETY: the mapping is page-aligned (so 8-aligned), at least 8
        // bytes long and lives as long as `self`; AtomicU64 has the layout
        // of u64 and tolerates the kernel's concurrent reads.
        unsafe { &*(self.cons.as_ptr() as *const AtomicU64) }
    }

    fn prod_atomic(&self) -> &AtomicU64 {
        // SAFETY: as for `cons_atomic`; the producer page starts the
        // read-only mapping and the kernel updates it with a store-release.
        unsafe { &*(self.prod.as_ptr() as *const AtomicU64) }
    }
}

impl RingMemory for MappedRing {
    fn producer_pos(&self) -> u64 {
        self.prod_atomic().load(Ordering::Acquire)
    }
    fn consumer_pos(&self) -> u64 {
        self.cons_atomic().load(Ordering::Relaxed)
    }
    fn set_consumer_pos(&self, pos: u64) {
        // Release: the records' bytes are read before the producer, whose
        // load-acquire of consumer_pos in stp_ring_reserve pairs with this,
        // may reuse their room. No fence after it: this process sleeps only
        // in poll(), whose check for data is the kernel's
        // (stp_session_poll), and that check puts the full barrier between
        // this store and its load of producer_pos which pairs with the one
        // in stp_ring_commit, so no wakeup is lost.
        self.cons_atomic().store(pos, Ordering::Release)
    }
    fn data(&self) -> &[u8] {
        &self.prod[self.page_size..]
    }
}

/// A ring in ordinary memory, written like the kernel writes it: for tests.
#[cfg(test)]
pub mod fake {
    use super::*;
    use std::cell::UnsafeCell;

    /// A fake ring: positions and a twice-mapped data area emulated by
    /// writing every byte at both copies. Producing takes `&self` (as the
    /// kernel writes while user space holds its mapping); tests are
    /// single-threaded and never produce while a consumer reads.
    #[derive(Debug)]
    pub struct FakeRing {
        /// consumer_pos.
        pub cons: AtomicU64,
        /// producer_pos.
        pub prod: AtomicU64,
        /// 2 * size bytes.
        data: Box<[UnsafeCell<u8>]>,
        /// Data size.
        pub size: u64,
    }

    impl FakeRing {
        /// An empty ring of `size` bytes.
        pub fn new(size: u64) -> Self {
            FakeRing {
                cons: AtomicU64::new(0),
                prod: AtomicU64::new(0),
                data: (0..2 * size).map(|_| UnsafeCell::new(0)).collect(),
                size,
            }
        }

        /// Writes raw bytes at the producer position (both copies) and
        /// publishes them. Returns false when they do not fit.
        pub fn produce(&self, bytes: &[u8]) -> bool {
            let prod = self.prod.load(Ordering::Relaxed);
            let cons = self.cons.load(Ordering::Relaxed);
            if prod + bytes.len() as u64 - cons > self.size {
                return false;
            }
            for (i, &b) in bytes.iter().enumerate() {
                let at = ((prod + i as u64) % self.size) as usize;
                // SAFETY: single-threaded tests; no slice from `data()` is
                // alive while a test produces.
                unsafe {
                    *self.data[at].get() = b;
                    *self.data[at + self.size as usize].get() = b;
                }
            }
            self.prod
                .store(prod + bytes.len() as u64, Ordering::Release);
            true
        }
    }

    /// A record: header with `len`, `type`, `id`, `time`, then `payload`
    /// padded to 8 bytes.
    pub fn record(ty: u16, id: u16, time: u64, payload: &[u8]) -> Vec<u8> {
        let len = (REC_HDR_LEN + payload.len()).div_ceil(8) * 8;
        let mut r = Vec::with_capacity(len);
        r.extend_from_slice(&(len as u32).to_le_bytes());
        r.extend_from_slice(&ty.to_le_bytes());
        r.extend_from_slice(&id.to_le_bytes());
        r.extend_from_slice(&time.to_le_bytes());
        r.extend_from_slice(payload);
        r.resize(len, 0);
        r
    }

    impl RingMemory for &FakeRing {
        fn producer_pos(&self) -> u64 {
            self.prod.load(Ordering::Acquire)
        }
        fn consumer_pos(&self) -> u64 {
            self.cons.load(Ordering::Relaxed)
        }
        fn set_consumer_pos(&self, pos: u64) {
            self.cons.store(pos, Ordering::Release)
        }
        fn data(&self) -> &[u8] {
            // SAFETY: UnsafeCell<u8> has the layout of u8; see `produce`.
            unsafe { std::slice::from_raw_parts(self.data.as_ptr().cast(), self.data.len()) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fake::*;
    use super::*;

    fn drain(ring: &FakeRing, cpu: u32, batch: &mut Batch) -> Result<usize, RingError> {
        Consumer::new(ring, cpu, ring.size).drain(batch)
    }

    #[test]
    fn drains_records_and_advances_consumer() {
        let ring = FakeRing::new(256);
        let a = record(1, 0, 10, b"abc");
        let b = record(3, 0, 20, &[]);
        assert!(ring.produce(&a));
        assert!(ring.produce(&b));
        let mut batch = Batch::new();
        assert_eq!(drain(&ring, 0, &mut batch), Ok(2));
        assert_eq!(
            ring.cons.load(Ordering::Relaxed),
            (a.len() + b.len()) as u64
        );
        let recs: Vec<_> = batch.iter().collect();
        assert_eq!(recs[0].1, &a[..]);
        assert_eq!(recs[0].0.time_ns, 10);
        assert_eq!(recs[1].1, &b[..]);
        // Nothing new: nothing copied.
        let mut batch = Batch::new();
        assert_eq!(drain(&ring, 0, &mut batch), Ok(0));
    }

    #[test]
    fn records_straddling_the_end_come_out_whole() {
        let ring = FakeRing::new(64);
        let mut batch = Batch::new();
        // 40 + 40 bytes: the second record crosses the 64-byte boundary.
        for t in 0..5u64 {
            let r = record(1, t as u16, t, &[t as u8; 24]);
            assert_eq!(r.len(), 40);
            assert!(ring.produce(&r));
            batch.clear();
            assert_eq!(drain(&ring, 0, &mut batch), Ok(1));
            assert_eq!(batch.iter().next().unwrap().1, &r[..]);
        }
    }

    #[test]
    fn merges_rings_by_time() {
        let r0 = FakeRing::new(256);
        let r1 = FakeRing::new(256);
        for t in [1u64, 4, 5] {
            r0.produce(&record(1, 0, t, &[]));
        }
        for t in [2u64, 3, 6] {
            r1.produce(&record(1, 1, t, &[]));
        }
        let mut batch = Batch::new();
        drain(&r0, 0, &mut batch).unwrap();
        drain(&r1, 1, &mut batch).unwrap();
        batch.sort_by_time();
        let times: Vec<u64> = batch.iter().map(|(r, _)| r.time_ns).collect();
        assert_eq!(times, vec![1, 2, 3, 4, 5, 6]);
        let cpus: Vec<u32> = batch.iter().map(|(r, _)| r.cpu).collect();
        assert_eq!(cpus, vec![0, 1, 1, 0, 0, 1]);
    }

    #[test]
    fn bad_records_stop_the_ring() {
        for bad_len in [0u32, 8, 20, 512, 1000] {
            let ring = FakeRing::new(256);
            let good = record(1, 0, 1, &[]);
            ring.produce(&good);
            let mut bad = record(1, 0, 2, &[0; 16]);
            bad[0..4].copy_from_slice(&bad_len.to_le_bytes());
            ring.produce(&bad);
            ring.produce(&record(1, 0, 3, &[]));
            let mut batch = Batch::new();
            let mut c = Consumer::new(&ring, 7, ring.size);
            let err = c.drain(&mut batch).unwrap_err();
            assert_eq!(
                err,
                RingError::BadRecord {
                    cpu: 7,
                    pos: good.len() as u64,
                    len: bad_len
                }
            );
            assert_eq!(batch.len(), 1, "the good record before it is kept");
            assert!(c.is_broken());
            assert_eq!(c.drain(&mut batch), Ok(0));
        }
    }

    #[test]
    fn record_longer_than_what_was_produced_is_bad() {
        let ring = FakeRing::new(256);
        let mut r = record(1, 0, 1, &[]);
        r[0..4].copy_from_slice(&64u32.to_le_bytes());
        ring.produce(&r);
        let mut batch = Batch::new();
        assert!(matches!(
            drain(&ring, 0, &mut batch),
            Err(RingError::BadRecord { len: 64, .. })
        ));
    }

    #[test]
    fn inconsistent_positions_are_reported() {
        let ring = FakeRing::new(256);
        ring.prod.store(1024, Ordering::Relaxed);
        let mut batch = Batch::new();
        assert!(matches!(
            drain(&ring, 2, &mut batch),
            Err(RingError::BadPosition {
                cpu: 2,
                prod: 1024,
                cons: 0
            })
        ));
        let ring = FakeRing::new(256);
        ring.cons.store(16, Ordering::Relaxed);
        assert!(matches!(
            drain(&ring, 0, &mut batch),
            Err(RingError::BadPosition { .. })
        ));
    }

    #[test]
    fn a_full_ring_drains_completely() {
        let ring = FakeRing::new(128);
        let mut n = 0;
        while ring.produce(&record(1, 0, n, &[])) {
            n += 1;
        }
        assert_eq!(n, 8);
        let mut batch = Batch::new();
        assert_eq!(drain(&ring, 0, &mut batch), Ok(8));
        assert!(ring.produce(&record(1, 0, 99, &[])));
    }
}
