//! Safe wrappers over the C VM core (kmod/core/*.c, built for user space by
//! build.rs with `csrc/stp_env.h`): the verifier (`verify_image`, the
//! compiler's last pass; `VerifiedImage` for runners that keep the
//! verified program) and stap's printf formatting (`format`, the CLI's
//! output). The raw bindings (`ffi`) are public for the test kit's
//! user-space runner (vm-testkit's `HostSession`).

/// The raw bindings of `kmod/core/stp_core.h` (bindgen; ABI types come from
/// [`crate::abi`]).
#[allow(
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    dead_code,
    missing_docs,
    clippy::all
)]
pub mod ffi {
    include!(concat!(env!("OUT_DIR"), "/core_ffi.rs"));
}

use crate::records::FmtArg;

/// Formats `fmt` with `args` the way SystemTap's printf does (the C core's
/// `stp_format`, the same code the kernel uses for `sprintf`).
pub fn format(fmt: &str, args: &[FmtArg]) -> Vec<u8> {
    format_bytes(fmt.as_bytes(), args)
}

/// [`format`] for a format text that is not UTF-8.
pub fn format_bytes(fmt: &[u8], args: &[FmtArg]) -> Vec<u8> {
    let cargs: Vec<ffi::stp_fmt_arg> = args
        .iter()
        .map(|a| match a {
            FmtArg::Int(v) => ffi::stp_fmt_arg {
                is_str: 0,
                len: 0,
                i: *v,
                s: std::ptr::null(),
            },
            FmtArg::Str(s) => ffi::stp_fmt_arg {
                is_str: 1,
                len: u32::try_from(s.len()).unwrap_or(u32::MAX),
                i: 0,
                s: s.as_ptr().cast(),
            },
        })
        .collect();
    let fmt_len = u32::try_from(fmt.len()).unwrap_or(u32::MAX);
    let nargs = u32::try_from(cargs.len()).unwrap_or(u32::MAX);
    let mut out = vec![0u8; 256];
    for _ in 0..2 {
        let size = u32::try_from(out.len()).unwrap_or(u32::MAX);
        // SAFETY: fmt is valid for fmt_len bytes, every string argument for
        // its len bytes, out for size bytes; stp_format writes at most size
        // bytes and keeps no pointer.
        let n = unsafe {
            ffi::stp_format(
                fmt.as_ptr().cast(),
                fmt_len,
                cargs.as_ptr(),
                nargs,
                out.as_mut_ptr().cast(),
                size,
            )
        };
        let n = usize::try_from(n).unwrap_or(0);
        if n < out.len() {
            out.truncate(n);
            return out;
        }
        out = vec![0u8; n + 1];
    }
    out.pop();
    out
}

/// Why the verifier refused an image (`struct stp_verify_result`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("verifier: {message}")]
pub struct VerifyError {
    /// `enum stp_verify_error` (`abi::STP_VERR_*`).
    pub code: u32,
    /// The code's name from `STP_VERIFY_ERRORS` (`"BAD_JUMP"`).
    pub name: &'static str,
    /// Instruction index into CODE, or the index of the bad entry.
    pub at: u32,
    /// The verifier's message, e.g. `insn 12 (handler 0 pc 12): ...`.
    pub message: String,
}

/// What the verifier accepted: the sizes of the image's tables and its
/// limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedInfo {
    /// Instructions in CODE.
    pub ninsns: u32,
    /// Handlers.
    pub nhandlers: u32,
    /// Probes.
    pub nprobes: u32,
    /// 64-bit constants.
    pub nkonsts: u32,
    /// Constant strings.
    pub nstrs: u32,
    /// printf formats.
    pub nformats: u32,
    /// Global scalars.
    pub nglobals: u32,
    /// Limit values, indexed by `abi::STP_LIM_*`.
    pub limits: Vec<u32>,
}

/// An image copied into 8-aligned memory and verified; `prog` points into
/// `_buf`, whose heap block never moves while this value lives.
pub struct VerifiedImage {
    _buf: Vec<u64>,
    prog: ffi::stp_prog,
}

impl VerifiedImage {
    /// Verifies `image` (a copy of it) with the C verifier.
    pub fn new(image: &[u8]) -> Result<Self, VerifyError> {
        verify_owned(image)
    }

    /// The verified program: its tables point into this value's copy of
    /// the image, and every count and index in it is what verify.c proved.
    pub fn prog(&self) -> &ffi::stp_prog {
        &self.prog
    }

    /// The sizes and limits the verifier accepted.
    pub fn info(&self) -> VerifiedInfo {
        info_of(&self.prog)
    }
}

/// The sizes and limits of a verified program (its scalar fields only).
fn info_of(p: &ffi::stp_prog) -> VerifiedInfo {
    VerifiedInfo {
        ninsns: p.ninsns,
        nhandlers: p.nhandlers,
        nprobes: p.nprobes,
        nkonsts: p.nkonsts,
        nstrs: p.nstrs,
        nformats: p.nformats,
        nglobals: p.nglobals,
        limits: p.limits.to_vec(),
    }
}

fn verify_error(code: u32, at: u32, message: String) -> VerifyError {
    let name = crate::tables::VERIFY_ERRORS
        .get(code as usize)
        .map_or("UNKNOWN", |e| e.name);
    VerifyError {
        code,
        name,
        at,
        message,
    }
}

fn image_size(image: &[u8]) -> Result<u32, VerifyError> {
    u32::try_from(image.len()).map_err(|_| {
        verify_error(
            crate::abi::STP_VERR_TOO_BIG,
            0,
            format!("image of {} bytes is larger than 4 GiB", image.len()),
        )
    })
}

fn verify_owned(image: &[u8]) -> Result<VerifiedImage, VerifyError> {
    let size = image_size(image)?;
    let mut buf = vec![0u64; image.len().div_ceil(8)];
    // SAFETY: buf has at least image.len() bytes; u8 has no alignment.
    unsafe {
        std::ptr::copy_nonoverlapping(image.as_ptr(), buf.as_mut_ptr().cast::<u8>(), image.len());
    }
    let prog = verify_at(buf.as_ptr().cast(), size)?;
    Ok(VerifiedImage { _buf: buf, prog })
}

/// Runs the verifier on the `size` bytes at `image`, which must be
/// 8-aligned, a multiple of 8 bytes long and live while the returned
/// program's tables are used.
fn verify_at(image: *const u8, size: u32) -> Result<ffi::stp_prog, VerifyError> {
    let mut prog = ffi::stp_prog::default();
    let mut res = ffi::stp_verify_result {
        code: 0,
        where_: 0,
        msg: [0; crate::abi::STP_LOG_MAX as usize],
    };
    // SAFETY: the caller's image is 8-aligned and holds size bytes; prog
    // and res are valid for writes; stp_verify keeps no pointer to res
    // and only reads the image.
    let rc = unsafe { ffi::stp_verify(image.cast(), size, &mut prog, &mut res) };
    if rc != 0 {
        let msg: Vec<u8> = res
            .msg
            .iter()
            .take_while(|c| **c != 0)
            .map(|c| *c as u8)
            .collect();
        return Err(verify_error(
            res.code,
            res.where_,
            String::from_utf8_lossy(&msg).into_owned(),
        ));
    }
    Ok(prog)
}

/// Verifies an image with the C core's verifier (the same code stapvm.ko
/// runs on LOAD). An image not 8-aligned (or not a multiple of 8 bytes
/// long) is copied into an 8-aligned buffer first.
pub fn verify_image(image: &[u8]) -> Result<VerifiedInfo, VerifyError> {
    if image.as_ptr().align_offset(8) == 0 && image.len().is_multiple_of(8) {
        let size = image_size(image)?;
        // The program's tables point into `image`, which outlives this
        // call; only its scalar fields are read.
        return verify_at(image.as_ptr(), size).map(|p| info_of(&p));
    }
    verify_owned(image).map(|v| v.info())
}

/// Test hook: makes the next `n` scratch allocations of the calling thread
/// fail (the verifier then refuses with `NO_MEMORY`).
pub fn host_fail_next_allocs(n: u32) {
    // SAFETY: sets a thread-local counter; no memory is touched otherwise.
    unsafe { ffi::stp_host_fail_next_allocs(n) }
}

/// Bytes of function-frame memory for `nframes` frames at `maxstringlen`
/// (`stp_vm_frames_size()` of `kmod/core/stp_core.h`).
pub fn frames_size(nframes: u32, maxstringlen: u32) -> usize {
    let sb = (crate::abi::STP_MAX_SREGS as usize * (maxstringlen as usize + 1) + 7) & !7;
    nframes as usize * (std::mem::size_of::<ffi::stp_frame>() + sb)
}

/// Bytes of one CPU's regex group state at `maxstringlen`
/// (`stp_rx_state_size()` of `kmod/core/stp_core.h`): the struct and the
/// subject copy, rounded up to 8.
pub fn rx_state_size(maxstringlen: u32) -> usize {
    (std::mem::size_of::<ffi::stp_rx_state>() + maxstringlen as usize + 7) & !7
}
