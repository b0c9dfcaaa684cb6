//! The simulated environment a handler runs against in user space: the
//! current task, its memory, registers and stack. Both virtual machines of
//! the differential test read it: the reference VM of this crate directly,
//! and the C core through the test kit's `HostSession`, which copies it
//! into the user-space `struct stp_host_env` (vm-spec/csrc/host.c).

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
