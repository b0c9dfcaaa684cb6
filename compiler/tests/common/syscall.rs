//! The simulated state at the entry of a syscall wrapper (`__x64_sys_*`),
//! as the syscall tapset reads it: ARG 0 points at a `struct pt_regs`
//! holding the syscall's number and arguments; what they point at (a path,
//! a sockaddr) is user memory at `USER`.
use vm_testkit::HostEnv;

/// Where the fake `struct pt_regs` lives.
pub const REGS: u64 = 0x10000;
/// Where the syscall's user memory (`user` of `syscall_env`) lives.
pub const USER: u64 = 0x20000;

/// Offsets in `struct pt_regs` (x86-64) of the argument registers di, si,
/// dx, r10, r8, r9, in argument order.
const ARG_OFFSETS: [usize; 6] = [112, 104, 96, 56, 72, 64];
/// Offset of `orig_ax` (the syscall number) in `struct pt_regs`.
const ORIG_AX: usize = 120;
/// Size of `struct pt_regs`.
const PT_REGS_SIZE: usize = 168;

/// The entry of syscall `nr` with arguments `args`, and `user` at `USER`;
/// the rest of the `HostEnv` is the default.
pub fn syscall_env(nr: i64, args: [i64; 6], user: &[u8]) -> HostEnv {
    let mut regs = vec![0u8; PT_REGS_SIZE];
    let fields = ARG_OFFSETS.into_iter().zip(args).chain([(ORIG_AX, nr)]);
    for (off, v) in fields {
        regs[off..off + 8].copy_from_slice(&v.to_le_bytes());
    }
    HostEnv {
        args: [REGS as i64, 0, 0, 0, 0, 0],
        memory: vec![(REGS, regs), (USER, user.to_vec())],
        ..Default::default()
    }
}
