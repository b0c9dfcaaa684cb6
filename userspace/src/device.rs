//! The kernel interface: `/dev/stapvm` and the ioctls of abi.h (LOAD, INFO,
//! START, STOP, STATUS, GLOBALS, PROBE_STATS, MAP_READ, INPUT), wrapped with libc. Every unsafe block is
//! an ioctl on a descriptor this module owns, with arguments that live for
//! the whole call.
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use thiserror::Error;
use vm_spec::abi;
use vm_spec::tables::{self, VERIFY_ERRORS};

/// The device node of stapvm.ko.
pub const DEVICE_PATH: &str = "/dev/stapvm";

/// Why `/dev/stapvm` could not be opened.
#[derive(Debug, Error)]
pub enum OpenError {
    /// The module is not loaded.
    #[error("stapvm.ko is not loaded (no {DEVICE_PATH})")]
    NotLoaded,
    /// Not allowed (root / CAP_SYS_ADMIN needed).
    #[error("permission denied opening {DEVICE_PATH} (stapvm needs root or CAP_SYS_ADMIN)")]
    Permission,
    /// Anything else.
    #[error("cannot open {DEVICE_PATH}: {0}")]
    Other(io::Error),
}

/// The kernel refused a program (LOAD failed).
#[derive(Debug, Error)]
#[error("{log} ({})", errno_name(*.errno))]
pub struct LoadError {
    /// errno of the ioctl.
    pub errno: i32,
    /// `enum stp_verify_error` reported by the verifier (0 when the failure
    /// was not the verifier's, e.g. EFAULT or ENOMEM).
    pub code: u32,
    /// Instruction or entry index of the problem.
    pub err_where: u32,
    /// The kernel's log message (or the verifier's table message, or the
    /// errno's text when the kernel wrote none).
    pub log: String,
}

/// START failed.
#[derive(Debug)]
pub struct StartError {
    /// errno of the ioctl.
    pub err: io::Error,
    /// The index (in the image's probes) of the probe that could not be
    /// armed, when a probe failed.
    pub failed_probe: Option<u32>,
    /// The negative errno arming that probe returned (0 when none did).
    pub failed_err: i32,
}

impl StartError {
    /// The errno of the failure: the probe's own when a probe failed,
    /// else the ioctl's.
    pub fn errno(&self) -> Option<i32> {
        if self.failed_probe.is_some() && self.failed_err < 0 {
            Some(-self.failed_err)
        } else {
            self.err.raw_os_error()
        }
    }
}

/// The name of an errno value (`EINVAL`), or `E?` when not one of those the
/// module returns.
pub fn errno_name(errno: i32) -> &'static str {
    const NAMES: &[(i32, &str)] = &[
        (libc::EPERM, "EPERM"),
        (libc::ENOENT, "ENOENT"),
        (libc::EINTR, "EINTR"),
        (libc::EIO, "EIO"),
        (libc::ENXIO, "ENXIO"),
        (libc::E2BIG, "E2BIG"),
        (libc::ENOEXEC, "ENOEXEC"),
        (libc::EBADF, "EBADF"),
        (libc::EAGAIN, "EAGAIN"),
        (libc::ENOMEM, "ENOMEM"),
        (libc::EACCES, "EACCES"),
        (libc::EFAULT, "EFAULT"),
        (libc::EBUSY, "EBUSY"),
        (libc::EEXIST, "EEXIST"),
        (libc::ENODEV, "ENODEV"),
        (libc::EINVAL, "EINVAL"),
        (libc::EMFILE, "EMFILE"),
        (libc::ENOTTY, "ENOTTY"),
        (libc::ENOSPC, "ENOSPC"),
        (libc::ERANGE, "ERANGE"),
        (libc::ENOSYS, "ENOSYS"),
        (libc::EPROTO, "EPROTO"),
        (libc::EBADMSG, "EBADMSG"),
        (libc::EOVERFLOW, "EOVERFLOW"),
        (libc::EOPNOTSUPP, "EOPNOTSUPP"),
        (libc::ESRCH, "ESRCH"),
        // kprobes: not an instruction boundary (absolute statements).
        (libc::EILSEQ, "EILSEQ"),
        (libc::ETXTBSY, "ETXTBSY"),
    ];
    NAMES
        .iter()
        .find(|(n, _)| *n == errno)
        .map(|(_, s)| *s)
        .unwrap_or("E?")
}

/// Issues one ioctl whose argument is a pointer (or nothing, when `arg` is
/// null); returns its non-negative result or the errno.
fn ioctl_ptr(fd: &impl AsRawFd, request: u64, arg: *mut libc::c_void) -> io::Result<i32> {
    // SAFETY: `fd` is an open descriptor owned by the caller for the whole
    // call; `arg` is null or points to a live, properly sized `#[repr(C)]`
    // struct of abi.h (the type the request number encodes), which the
    // kernel reads or writes only for the duration of the call.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), request as _, arg) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// Issues one ioctl whose argument is `arg`, the `#[repr(C)]` struct of
/// abi.h that `request` encodes (see `ioctl_ptr`).
fn ioctl_arg<T>(fd: &impl AsRawFd, request: u64, arg: &mut T) -> io::Result<i32> {
    ioctl_ptr(fd, request, std::ptr::from_mut(arg).cast())
}

/// Issues one ioctl that fills in a `T` (the struct of abi.h `request`
/// encodes) and returns it.
fn ioctl_read<T: Default>(fd: &impl AsRawFd, request: u64) -> io::Result<T> {
    let mut out = T::default();
    ioctl_arg(fd, request, &mut out)?;
    Ok(out)
}

/// `/dev/stapvm`, open.
#[derive(Debug)]
pub struct Device {
    file: File,
}

impl Device {
    /// Opens `/dev/stapvm`.
    pub fn open() -> Result<Self, OpenError> {
        Self::open_path(DEVICE_PATH)
    }

    /// Opens a device node at `path` (tests, alternative nodes).
    pub fn open_path(path: &str) -> Result<Self, OpenError> {
        match OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(path)
        {
            Ok(file) => Ok(Device { file }),
            Err(e) => Err(match e.raw_os_error() {
                Some(libc::ENOENT | libc::ENODEV | libc::ENXIO) => OpenError::NotLoaded,
                Some(libc::EACCES | libc::EPERM) => OpenError::Permission,
                _ => OpenError::Other(e),
            }),
        }
    }

    /// LOAD: verifies `image` in the kernel and creates a session.
    pub fn load(&self, image: &[u8]) -> Result<Session, LoadError> {
        let mut log = vec![0u8; abi::STP_LOG_MAX as usize];
        let mut args = abi::stp_load_args {
            args_size: std::mem::size_of::<abi::stp_load_args>() as u32,
            flags: 0,
            image: image.as_ptr() as u64,
            image_size: u32::try_from(image.len()).unwrap_or(u32::MAX),
            log_size: log.len() as u32,
            log: log.as_mut_ptr() as u64,
            err_code: 0,
            err_where: 0,
        };
        match ioctl_arg(&self.file, tables::IOC_LOAD, &mut args) {
            Ok(fd) => {
                // SAFETY: a successful LOAD returns a new descriptor that
                // nothing else owns; ownership passes to the OwnedFd.
                let owned = unsafe { OwnedFd::from_raw_fd(fd) };
                Ok(Session {
                    file: File::from(owned),
                })
            }
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
                let mut text = String::from_utf8_lossy(&log[..end]).trim().to_string();
                if text.is_empty() {
                    text = match VERIFY_ERRORS.get(args.err_code as usize) {
                        Some(v) if args.err_code != 0 => v.msg.to_string(),
                        _ => e.to_string(),
                    };
                }
                Err(LoadError {
                    errno,
                    code: args.err_code,
                    err_where: args.err_where,
                    log: text,
                })
            }
        }
    }
}

/// One loaded program (the session fd). Dropping it closes the fd, which
/// makes the module disarm everything.
#[derive(Debug)]
pub struct Session {
    file: File,
}

impl Session {
    /// The session descriptor, for mmap and poll.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// INFO: ring geometry.
    pub fn info(&self) -> io::Result<abi::stp_session_info> {
        ioctl_read(&self.file, tables::IOC_INFO)
    }

    /// START: runs begin probes and arms the others; on failure, says
    /// which probe could not be armed.
    pub fn start(&self) -> Result<(), StartError> {
        let mut args = abi::stp_start_args {
            args_size: std::mem::size_of::<abi::stp_start_args>() as u32,
            flags: 0,
            failed_probe: abi::STP_START_NO_PROBE,
            failed_err: 0,
        };
        match ioctl_arg(&self.file, tables::IOC_START, &mut args) {
            Ok(_) => Ok(()),
            Err(err) => Err(StartError {
                err,
                failed_probe: (args.failed_probe != abi::STP_START_NO_PROBE)
                    .then_some(args.failed_probe),
                failed_err: args.failed_err,
            }),
        }
    }

    /// INPUT: feeds the input probes (`input.char`, `input.line`) with
    /// the first bytes of `buf` (at most `STP_INPUT_CHUNK`); returns how
    /// many were taken, 0 once the session runs no more handlers.
    pub fn input(&self, buf: &[u8]) -> io::Result<usize> {
        let mut args = abi::stp_input_args {
            buf: buf.as_ptr() as u64,
            len: u32::try_from(buf.len()).unwrap_or(u32::MAX),
            flags: 0,
        };
        ioctl_arg(&self.file, tables::IOC_INPUT, &mut args).map(|n| n as usize)
    }

    /// STOP: disarms and runs end probes.
    pub fn stop(&self) -> io::Result<()> {
        ioctl_ptr(&self.file, tables::IOC_STOP, std::ptr::null_mut()).map(drop)
    }

    /// STATUS: counters summed over CPUs.
    pub fn status(&self) -> io::Result<abi::stp_status> {
        ioctl_read(&self.file, tables::IOC_STATUS)
    }

    /// GLOBALS: the values of the first `count` global scalars.
    pub fn globals(&self, count: usize) -> io::Result<Vec<i64>> {
        let mut values = vec![0i64; count];
        let mut args = abi::stp_globals_args {
            values: values.as_mut_ptr() as u64,
            count: u32::try_from(count).unwrap_or(u32::MAX),
            reserved: 0,
        };
        if count > 0 {
            ioctl_arg(&self.file, tables::IOC_GLOBALS, &mut args)?;
            values.truncate(args.count as usize);
        }
        Ok(values)
    }

    /// MAP_READ: every entry of map `map` (index into the image's MAPS),
    /// read in chunks from a cursor (abi.h).
    pub fn map_entries(
        &self,
        map: usize,
        decl: &vm_spec::program::MapDecl,
    ) -> io::Result<Vec<vm_spec::maps::MapEntry>> {
        let mut buf = vec![0u64; 1 << 15];
        let mut out = Vec::new();
        let mut cursor = 0u32;
        while cursor != abi::STP_MAP_READ_END {
            let mut args = abi::stp_map_read_args {
                args_size: std::mem::size_of::<abi::stp_map_read_args>() as u32,
                map: u32::try_from(map).unwrap_or(u32::MAX),
                buf: buf.as_mut_ptr() as u64,
                buf_size: u32::try_from(buf.len() * 8).unwrap_or(u32::MAX),
                cursor,
                count: 0,
                flags: 0,
            };
            ioctl_arg(&self.file, tables::IOC_MAP_READ, &mut args)?;
            // SAFETY: buf is buf.len() * 8 initialised bytes.
            let bytes =
                unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), buf.len() * 8) };
            let entries = vm_spec::maps::parse_entries(bytes, args.count as usize, decl)
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "bad MAP_READ entry"))?;
            out.extend(entries);
            if args.count == 0 && args.cursor == cursor {
                break;
            }
            cursor = args.cursor;
        }
        Ok(out)
    }

    /// PROBE_STATS: hits and skipped hits of the first `count` probes
    /// (image order).
    pub fn probe_stats(&self, count: usize) -> io::Result<Vec<abi::stp_probe_stat>> {
        let mut stats = vec![abi::stp_probe_stat::default(); count];
        let mut args = abi::stp_probe_stats_args {
            args_size: std::mem::size_of::<abi::stp_probe_stats_args>() as u32,
            flags: 0,
            stats: stats.as_mut_ptr() as u64,
            count: u32::try_from(count).unwrap_or(u32::MAX),
            reserved: 0,
        };
        ioctl_arg(&self.file, tables::IOC_PROBE_STATS, &mut args)?;
        stats.truncate(count.min(args.count as usize));
        Ok(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_names() {
        assert_eq!(errno_name(libc::EINVAL), "EINVAL");
        assert_eq!(errno_name(libc::ENOEXEC), "ENOEXEC");
        assert_eq!(errno_name(libc::E2BIG), "E2BIG");
        assert_eq!(errno_name(9999), "E?");
        // Every errno the verifier may return has a name.
        for v in VERIFY_ERRORS.iter().skip(1) {
            assert_ne!(errno_name(v.errno), "E?", "{}", v.name);
        }
    }

    #[test]
    fn missing_device_is_not_loaded() {
        let e = Device::open_path("/nonexistent/stapvm").unwrap_err();
        assert!(matches!(e, OpenError::NotLoaded));
        assert_eq!(e.to_string(), "stapvm.ko is not loaded (no /dev/stapvm)");
    }

    #[test]
    fn ioctls_on_a_regular_file_fail_cleanly() {
        // A regular file is not the device: every ioctl is ENOTTY, never a crash.
        let file = File::open("/proc/self/status").unwrap();
        let dev = Device { file };
        let err = dev.load(b"STPI").unwrap_err();
        assert_eq!(err.errno, libc::ENOTTY);
        assert!(err.to_string().ends_with("(ENOTTY)"), "{err}");
        let s = Session {
            file: File::open("/proc/self/status").unwrap(),
        };
        assert!(s.info().is_err());
        assert!(s.status().is_err());
        let e = s.start().unwrap_err();
        assert_eq!(e.failed_probe, None);
        assert_eq!(e.errno(), Some(libc::ENOTTY));
        assert!(s.probe_stats(3).is_err());
        assert!(s.globals(2).is_err());
        assert_eq!(s.globals(0).unwrap(), Vec::<i64>::new());
    }

    #[test]
    fn load_error_display() {
        let e = LoadError {
            errno: libc::ENOEXEC,
            code: 3,
            err_where: 0,
            log: "bad magic: not a stapvm image".into(),
        };
        assert_eq!(e.to_string(), "bad magic: not a stapvm image (ENOEXEC)");
    }
}
