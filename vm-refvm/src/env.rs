//! The simulated environment a handler runs against in user space: the
//! current task, its memory, registers and stack. Both virtual machines of
//! the differential test read it: the reference VM of this crate directly,
//! and the C core through the test kit's `HostSession`, which copies it
//! into the user-space `struct stp_host_env` (vm-spec/csrc/host.c).
use crate::vm::PAGE_SIZE;
use std::collections::BTreeMap;

/// The simulated current task and memory of one handler run (for the C
/// core: the user-space `struct stp_host_env`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostEnv {
    /// `pid()`.
    pub pid: i64,
    /// `tid()`.
    pub tid: i64,
    /// `ppid()`.
    pub ppid: i64,
    /// `uid()`.
    pub uid: i64,
    /// `euid()`.
    pub euid: i64,
    /// `gid()`.
    pub gid: i64,
    /// `cpu()`.
    pub cpu: i64,
    /// `jiffies()`.
    pub jiffies: i64,
    /// `execname()` (cut at MAXSTRINGLEN - 1 bytes and at a NUL).
    pub execname: String,
    /// `$return` in return probes.
    pub retval: i64,
    /// Function arguments at entry (`ARG` helper); others read as 0.
    pub args: [i64; 6],
    /// `gettimeofday_ns()`.
    pub wall_ns: u64,
    /// Readable memory, kernel and user alike: (address, bytes). Mapping is
    /// page-granular as in a real address space: every 4 KiB page touched
    /// by a range is readable, zero where no range gives bytes.
    pub memory: Vec<(u64, Vec<u8>)>,
    /// `addr()`: the probed or interrupted instruction pointer.
    pub ip: u64,
    /// `user_mode()`.
    pub user_mode: bool,
    /// `pexecname()` (cut as `execname`).
    pub pexecname: String,
    /// `backtrace()`: the kernel stack, innermost frame first.
    pub stack: Vec<u64>,
    /// `task_current()`: the address of the current task_struct (its
    /// members are read from `memory`).
    pub task: u64,
    /// `egid()`.
    pub egid: i64,
    /// `HZ()`.
    pub hz: i64,
    /// `get_cycles()`.
    pub cycles: u64,
    /// CPUs online besides `cpu` (the CPU_ONLINE helper): bit c for CPU c.
    pub online_mask: u64,
    /// The pseudo-random number the RANDOM helper (`randint`) reduces.
    pub random: u32,
}

impl HostEnv {
    /// `memory` as the address space maps it: every page a range touches,
    /// by page number, [`PAGE_SIZE`] bytes each, zero where no range gives
    /// bytes and later ranges winning; bytes past the top of the address
    /// space do not exist. The reference VM reads these pages; the test
    /// kit hands them to the C core as its memory regions.
    pub fn pages(&self) -> BTreeMap<u64, Vec<u8>> {
        let mut pages: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        for (start, bytes) in &self.memory {
            // One page-bounded slice at a time.
            let mut k = 0usize;
            while k < bytes.len() {
                let Some(a) = start.checked_add(k as u64) else {
                    break;
                };
                let off = (a % PAGE_SIZE) as usize;
                let take = (PAGE_SIZE as usize - off).min(bytes.len() - k);
                pages
                    .entry(a / PAGE_SIZE)
                    .or_insert_with(|| vec![0; PAGE_SIZE as usize])[off..off + take]
                    .copy_from_slice(&bytes[k..k + take]);
                k += take;
            }
        }
        pages
    }
}
