//! The simulated address space (page-granular, as the user-space
//! environment of the C core maps it) and the record ring of one session.
use super::*;

// ---------------------------------------------------------------------
// Memory and ring

/// The readable memory of a [`HostEnv`]: its pages ([`HostEnv::pages`]:
/// every page touched by one of its ranges, zero where no range gives
/// bytes, later ranges winning).
#[derive(Debug, Default)]
pub(super) struct Memory {
    pub(super) pages: BTreeMap<u64, Vec<u8>>,
}

impl Memory {
    pub(super) fn new(env: &HostEnv) -> Self {
        Memory { pages: env.pages() }
    }

    /// `n` bytes at `addr`, or `None` if one of them is unmapped (a range
    /// that would run past the top of the address space faults).
    pub(super) fn read(&self, addr: u64, n: u64) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(n as usize);
        if n == 0 {
            return Some(out);
        }
        // The last byte, inclusive: a read may end exactly at 2^64.
        let last = addr.checked_add(n - 1)?;
        let mut a = addr;
        loop {
            let page = self.pages.get(&(a / PAGE_SIZE))?;
            let from = a % PAGE_SIZE;
            let take = (PAGE_SIZE - from).min(last - a + 1);
            out.extend_from_slice(&page[from as usize..(from + take) as usize]);
            match a.checked_add(take) {
                Some(next) if next <= last => a = next,
                _ => return Some(out),
            }
        }
    }
}

/// A ring of `size` data bytes with the producer rules of abi.h: a record
/// is dropped (and counted) when it does not fit between the consumer and
/// `size` bytes ahead of it.
#[derive(Debug)]
pub(super) struct Ring {
    pub(super) size: u64,
    pub(super) prod: u64,
    pub(super) cons: u64,
    pub(super) dropped: u64,
    pub(super) records: Vec<Vec<u8>>,
}

impl Ring {
    pub(super) fn reserve(&mut self, len: u64) -> bool {
        let used = self.prod - self.cons;
        if len == 0 || !len.is_multiple_of(8) || len > self.size || used + len > self.size {
            self.dropped += 1;
            return false;
        }
        true
    }

    pub(super) fn commit(&mut self, rec: Vec<u8>) {
        self.prod += rec.len() as u64;
        self.records.push(rec);
    }

    pub(super) fn drain(&mut self) -> Vec<Vec<u8>> {
        self.cons = self.prod;
        std::mem::take(&mut self.records)
    }
}
