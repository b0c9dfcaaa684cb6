//! The helpers (helpers.h): CALLI/CALLS against the run's [`HostEnv`],
//! and the fault-safe string copy they share with the string opcodes.
use super::*;

impl Machine<'_> {
    /// A NUL-terminated string at `addr`, at most MAXSTRINGLEN - 1 bytes, read
    /// one page-bounded chunk at a time (helpers.h: nofault copies); a
    /// fault reports the address of the chunk that failed.
    pub(super) fn copy_string(&self, addr: u64) -> Result<Vec<u8>, u64> {
        let cap = u64::from(self.cap);
        let mut out = Vec::new();
        while (out.len() as u64) < cap {
            let a = addr.wrapping_add(out.len() as u64);
            let chunk = (PAGE_SIZE - a % PAGE_SIZE).min(cap - out.len() as u64);
            let bytes = self.mem.read(a, chunk).ok_or(a)?;
            if let Some(nul) = bytes.iter().position(|&b| b == 0) {
                out.extend_from_slice(&bytes[..nul]);
                return Ok(out);
            }
            out.extend_from_slice(&bytes);
        }
        Ok(out)
    }

    /// `bytes` bytes at `addr`, little-endian, sign-extended to 64 bits;
    /// `None` on a fault.
    fn read_signed(&self, addr: u64, bytes: u64) -> Option<u64> {
        let b = self.mem.read(addr, bytes)?;
        let mut a = [0u8; 8];
        a[..b.len()].copy_from_slice(&b);
        let shift = 64 - 8 * bytes;
        Some(((u64::from_le_bytes(a) << shift) as i64 >> shift) as u64)
    }

    /// The user-space environment's registers (csrc/stp_env.h): pt_regs
    /// word index -> the value it holds there (REGISTER, UARG).
    fn register_word(&self, w: u64) -> u64 {
        let e = self.env;
        match w {
            8 => e.args[5] as u64,
            9 => e.args[4] as u64,
            10 => e.retval as u64,
            11 => e.args[3] as u64,
            12 => e.args[2] as u64,
            13 => e.args[1] as u64,
            14 => e.args[0] as u64,
            16 => e.ip,
            _ => 0,
        }
    }

    pub(super) fn call_int(&mut self, insn: &Insn) -> Step<u64> {
        let e = self.env;
        let Ok(id) = u32::try_from(insn.imm) else {
            return Err(Stop::Hole(format!("helper {}", insn.imm)));
        };
        Ok(match id {
            abi::STP_HLP_PID => e.pid as u64,
            abi::STP_HLP_TID => e.tid as u64,
            abi::STP_HLP_PPID => e.ppid as u64,
            abi::STP_HLP_UID => e.uid as u64,
            abi::STP_HLP_EUID => e.euid as u64,
            abi::STP_HLP_GID => e.gid as u64,
            abi::STP_HLP_CPU => e.cpu as u64,
            abi::STP_HLP_GETTIMEOFDAY_NS => e.wall_ns,
            abi::STP_HLP_LOCAL_CLOCK_NS => self.tick(),
            abi::STP_HLP_JIFFIES => e.jiffies as u64,
            abi::STP_HLP_RETVAL => e.retval as u64,
            abi::STP_HLP_ADDR => e.ip,
            abi::STP_HLP_USER_MODE => u64::from(e.user_mode),
            abi::STP_HLP_USER_STRING_OK => {
                let addr = self.rd(insn.b)?;
                u64::from(self.copy_string(addr).is_ok())
            }
            abi::STP_HLP_MM_ARG => {
                // No mm in the user-space environment (helpers.h).
                self.rd(insn.b)?;
                0
            }
            abi::STP_HLP_ARG => {
                let n = self.rd(insn.b)?;
                usize::try_from(n)
                    .ok()
                    .and_then(|k| e.args.get(k))
                    .map_or(0, |v| *v as u64)
            }
            abi::STP_HLP_KERNEL_LONG
            | abi::STP_HLP_KERNEL_INT
            | abi::STP_HLP_KERNEL_SHORT
            | abi::STP_HLP_KERNEL_CHAR => {
                let addr = self.rd(insn.b)?;
                self.read_signed(addr, read_width(id))
                    .ok_or(Stop::Fault(abi::STP_RTE_KFAULT, addr))?
            }
            abi::STP_HLP_TASK_CURRENT => e.task,
            abi::STP_HLP_EGID => e.egid as u64,
            abi::STP_HLP_HZ => e.hz as u64,
            abi::STP_HLP_GET_CYCLES => e.cycles,
            abi::STP_HLP_CPU_ONLINE => {
                // helpers.h: the environment's cpu, or a bit of its mask.
                let c = self.rd(insn.b)? as i64;
                let bit = (0..64).contains(&c) && (e.online_mask >> c) & 1 == 1;
                u64::from(c == e.cpu || bit)
            }
            abi::STP_HLP_RANDOM => {
                // helpers.h: x % n (unsigned), 0 for n == 0.
                let n = self.rd(insn.b)?;
                u64::from(e.random).checked_rem(n).unwrap_or(0)
            }
            abi::STP_HLP_USER_LONG
            | abi::STP_HLP_USER_INT
            | abi::STP_HLP_USER_SHORT
            | abi::STP_HLP_USER_CHAR => {
                // helpers.h: 0 on a fault.
                let addr = self.rd(insn.b)?;
                self.read_signed(addr, read_width(id)).unwrap_or(0)
            }
            abi::STP_HLP_UARG => {
                // helpers.h UARG: the marker's spec, then the register,
                // the memory or the constant it names, cut and extended.
                let n = self.rd(insn.b)?;
                let outer = self.frames.first().map_or(self.handler, |f| f.handler);
                let Some(&(_, _, count, first)) = self.prog.probes.iter().find(|p| p.0 == outer)
                else {
                    return Ok(0);
                };
                if n == 0 {
                    return Ok(u64::from(count));
                }
                if n > u64::from(count) {
                    return Ok(0);
                }
                let a = self
                    .prog
                    .uargs
                    .get(first as usize + n as usize - 1)
                    .copied()
                    .unwrap_or(0);
                let size = (a >> abi::STP_UARG_SIZE_SHIFT) & 0xf;
                let disp = u64::from((a >> abi::STP_UARG_VALUE_SHIFT) as u32) as i32 as i64 as u64;
                let reg = self.register_word((a >> abi::STP_UARG_REG_SHIFT) & 0xff);
                let v = match (a & abi::STP_UARG_KIND_MASK as u64) as u32 {
                    abi::STP_UARG_CONST => disp,
                    abi::STP_UARG_REG => reg,
                    _ => self.read_signed(reg.wrapping_add(disp), size).unwrap_or(0),
                };
                if size < 8 {
                    let sh = 64 - 8 * size;
                    if a & u64::from(abi::STP_UARG_SIGNED) != 0 {
                        (((v << sh) as i64) >> sh) as u64
                    } else {
                        (v << sh) >> sh
                    }
                } else {
                    v
                }
            }
            abi::STP_HLP_REGISTER => {
                let w = self.rd(insn.b)?;
                self.register_word(w)
            }
            abi::STP_HLP_UADDR => {
                if e.user_mode {
                    e.ip
                } else {
                    0
                }
            }
            abi::STP_HLP_IS_RETURN => {
                // The probe handler's context, also inside a function.
                let outer = self.frames.first().map_or(self.handler, |f| f.handler);
                let ctx = self.prog.handlers.get(outer as usize).map(|h| h.ctx);
                u64::from(ctx == Some(abi::STP_CTX_KRETPROBE))
            }
            abi::STP_HLP_PID2TASK => {
                let nr = self.rd(insn.b)? as i64;
                if nr > 0 && nr == e.tid {
                    e.task
                } else {
                    0
                }
            }
            id if id < abi::STP_HLP__COUNT => {
                // A string helper through CALLI: the C core stops with BADOP.
                return Err(Stop::Fault(abi::STP_RTE_BADOP, 0));
            }
            _ => return Err(Stop::Hole(format!("helper {id}"))),
        })
    }

    pub(super) fn call_str(&mut self, insn: &Insn) -> Step<Vec<u8>> {
        let Ok(id) = u32::try_from(insn.imm) else {
            return Err(Stop::Hole(format!("helper {}", insn.imm)));
        };
        match id {
            abi::STP_HLP_EXECNAME | abi::STP_HLP_PEXECNAME => {
                let name = if id == abi::STP_HLP_EXECNAME {
                    &self.env.execname
                } else {
                    &self.env.pexecname
                };
                let mut v = name.as_bytes().to_vec();
                v.truncate(self.cap as usize);
                if let Some(nul) = v.iter().position(|&b| b == 0) {
                    v.truncate(nul);
                }
                Ok(v)
            }
            abi::STP_HLP_SYMNAME | abi::STP_HLP_SYMDATA => {
                // No symbols in user space: the hex form (helpers.h).
                let mut v = format!("{:#x}", self.rd(insn.b)?).into_bytes();
                v.truncate(self.cap as usize);
                Ok(v)
            }
            abi::STP_HLP_USYMNAME
            | abi::STP_HLP_USYMDATA
            | abi::STP_HLP_USYMFULL
            | abi::STP_HLP_USYMBRIEF
            | abi::STP_HLP_USYMSIMPLE
            | abi::STP_HLP_UMODNAME => {
                // No user symbols in user space: the forms of an unknown
                // address (helpers.h).
                let a = self.rd(insn.b)?;
                let mut v = match id {
                    abi::STP_HLP_UMODNAME => String::new(),
                    abi::STP_HLP_USYMFULL => format!(" {a:#x}\n"),
                    abi::STP_HLP_USYMBRIEF | abi::STP_HLP_USYMSIMPLE => format!("{a:#x}\n"),
                    _ => format!("{a:#x}"),
                }
                .into_bytes();
                v.truncate(self.cap as usize);
                Ok(v)
            }
            abi::STP_HLP_BACKTRACE | abi::STP_HLP_UBACKTRACE => {
                // Whole frames only, at most STP_MAX_BACKTRACE (helpers.h).
                let mut v = Vec::new();
                for f in self.env.stack.iter().take(abi::STP_MAX_BACKTRACE as usize) {
                    let one = format!("{}{f:#x}", if v.is_empty() { "" } else { " " });
                    if v.len() + one.len() > self.cap as usize {
                        break;
                    }
                    v.extend_from_slice(one.as_bytes());
                }
                Ok(v)
            }
            abi::STP_HLP_KERNEL_STRING | abi::STP_HLP_USER_STRING => {
                let addr = self.rd(insn.b)?;
                let code = if id == abi::STP_HLP_USER_STRING {
                    abi::STP_RTE_USTRFAULT
                } else {
                    abi::STP_RTE_KSTRFAULT
                };
                self.copy_string(addr).map_err(|a| Stop::Fault(code, a))
            }
            abi::STP_HLP_MODNAME => {
                // No symbols in user space: never known (helpers.h).
                self.rd(insn.b)?;
                Ok(Vec::new())
            }
            abi::STP_HLP_PP => {
                // The first probe of the handler run (helpers.h): its pp
                // string, cut.
                let outer = self.frames.first().map_or(self.handler, |f| f.handler);
                let mut v = self
                    .prog
                    .probes
                    .iter()
                    .find(|p| p.0 == outer)
                    .and_then(|p| self.prog.strings.get(p.1 as usize))
                    .cloned()
                    .unwrap_or_default();
                v.truncate(self.cap as usize);
                Ok(v)
            }
            id if id < abi::STP_HLP__COUNT => Err(Stop::Fault(abi::STP_RTE_BADOP, 0)),
            _ => Err(Stop::Hole(format!("helper {id}"))),
        }
    }
}

/// The width in bytes of the value a `kernel_*` or `user_*` read helper
/// (long, int, short, char) reads.
fn read_width(id: u32) -> u64 {
    match id {
        abi::STP_HLP_KERNEL_INT | abi::STP_HLP_USER_INT => 4,
        abi::STP_HLP_KERNEL_SHORT | abi::STP_HLP_USER_SHORT => 2,
        abi::STP_HLP_KERNEL_CHAR | abi::STP_HLP_USER_CHAR => 1,
        _ => 8,
    }
}
