//! The local time zone of tzinfo.stp (`tz_gmtoff()`, `tz_name()`,
//! `tz_ctime()`): constants of the program (`Program::tz_konsts`) that
//! `patch` fills in from the loader's own local time before the image is
//! built, as stap's staprun passes its time zone to the module at startup;
//! and the loader's pid and uid (`stp_pid()`, `is_myproc()`), likewise.
use vm_spec::program::Program;

/// The local time zone now: (seconds west of UTC, abbreviation), from
/// libc's `localtime_r` (the `TZ` variable, else /etc/localtime); UTC
/// where it fails.
pub fn local() -> (i64, String) {
    // SAFETY: time(NULL) only returns the time.
    let now = unsafe { libc::time(std::ptr::null_mut()) };
    // SAFETY: an all-zero `tm` is a valid value (tm_zone a null pointer).
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call; localtime_r calls
    // tzset itself and writes only `tm`.
    if unsafe { libc::localtime_r(&now, &mut tm) }.is_null() {
        return (0, "UTC".to_string());
    }
    let name = if tm.tm_zone.is_null() {
        String::new()
    } else {
        // SAFETY: tm_zone points to a NUL-terminated string of libc's
        // time zone data, alive for the process.
        unsafe { std::ffi::CStr::from_ptr(tm.tm_zone) }
            .to_string_lossy()
            .into_owned()
    };
    // c_long is i64 on the 64-bit targets stapvm supports.
    (-tm.tm_gmtoff, name)
}

/// `name`'s first 8 bytes packed little-endian (the first byte lowest),
/// as the tapset's `tz_name()` unpacks them.
pub fn pack_name(name: &str) -> i64 {
    let mut b = [0u8; 8];
    for (d, s) in b.iter_mut().zip(name.bytes()) {
        *d = s;
    }
    i64::from_le_bytes(b)
}

/// Puts the time zone (`west` seconds west of UTC, `name`) where the
/// program reads it.
pub fn patch_with(prog: &mut Program, west: i64, name: &str) {
    if let Some([off, nm]) = prog.tz_konsts {
        for (k, v) in [(off, west), (nm, pack_name(name))] {
            if let Some(slot) = prog.konsts.get_mut(k as usize) {
                *slot = v;
            }
        }
    }
}

/// Puts the loader's pid and real uid where `stp_pid()` and
/// `is_myproc()` read them (`Program::loader_konsts`), like the time
/// zone a fact of the loading process that the module cannot know.
pub fn patch_loader(prog: &mut Program, pid: i64, uid: i64) {
    if let Some([p, u]) = prog.loader_konsts {
        for (k, v) in [(p, pid), (u, uid)] {
            if let Some(slot) = prog.konsts.get_mut(k as usize) {
                *slot = v;
            }
        }
    }
}

/// Puts the local time zone (`local`) where the program reads it; a
/// program without tzinfo.stp functions is left as it is.
pub fn patch(prog: &mut Program) {
    if prog.tz_konsts.is_some() {
        let (west, name) = local();
        patch_with(prog, west, &name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_packed_low_byte_first() {
        assert_eq!(pack_name("CET"), 0x54_45_43);
        assert_eq!(pack_name(""), 0);
        assert_eq!(pack_name("ABCDEFGHIJ"), i64::from_le_bytes(*b"ABCDEFGH"));
    }

    #[test]
    fn patch_fills_both_constants() {
        let mut p = Program {
            konsts: vec![7, 0, 0],
            tz_konsts: Some([2, 1]),
            ..Default::default()
        };
        patch_with(&mut p, -3600, "CET");
        assert_eq!(p.konsts, vec![7, 0x54_45_43, -3600]);
    }

    #[test]
    fn patch_loader_fills_pid_and_uid() {
        let mut p = Program {
            konsts: vec![7, 0, 0],
            loader_konsts: Some([1, 2]),
            ..Default::default()
        };
        patch_loader(&mut p, 4242, 1000);
        assert_eq!(p.konsts, vec![7, 4242, 1000]);
        // A program that asks for neither is left alone.
        let mut q = Program {
            konsts: vec![7],
            ..Default::default()
        };
        patch_loader(&mut q, 4242, 1000);
        assert_eq!(q.konsts, vec![7]);
    }

    #[test]
    fn tz_environment_sets_the_offset() {
        // A POSIX TZ string gives the offset west of UTC directly. No other
        // test of this crate reads the environment's TZ or local time.
        std::env::set_var("TZ", "XYZ5");
        let (west, name) = local();
        std::env::remove_var("TZ");
        assert_eq!((west, name.as_str()), (5 * 3600, "XYZ"));
    }
}
