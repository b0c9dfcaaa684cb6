//! gen-hostile: writes the images of the guest's `hostile-images` case.
//!
//! Each hostile image is a valid image (built by `vm_spec::image::build`
//! from a hand-made `Program`) with one thing broken, either in the program
//! (bad code, bad descriptors) or in the bytes (header, sections, limits).
//! For each one it writes `NAME.img` and `NAME.expect`: two lines, the errno
//! name the LOAD ioctl must fail with (from `STP_VERIFY_ERRORS`) and a
//! piece of the log message that names the problem.
//!
//! Then seeded mutations of valid images (`stapvm_tests::hostile::
//! mutations`): a refused one's `.expect` holds its errno name and the
//! whole message the verifier gives; an accepted one's says `run` (the
//! guest loads it, starts it, stops it and closes it).
//!
//! It also writes the valid images of the guest's ioctl cases
//! (`stapvm_tests::hostile::valid_images`: a timer, a kprobe, a kretprobe,
//! a kprobe on a symbol no kernel has, a timer that never fires during a
//! test, a timer whose tick divides by zero); their `.expect` says
//! `accepted`.
//!
//! usage: gen-hostile OUTDIR
use std::fs;
use std::path::Path;
use std::process::ExitCode;

use stapvm_tests::hostile::{errno_name, hostile, mutations, valid_images};
use vm_spec::tables::VERIFY_ERRORS;

/// Refused and accepted mutations written for the guest.
const REFUSED_MUTATIONS: usize = 240;
const ACCEPTED_MUTATIONS: usize = 40;

fn write(dir: &Path, name: &str, img: &[u8], expect: &str) -> std::io::Result<()> {
    fs::write(dir.join(format!("{name}.img")), img)?;
    fs::write(dir.join(format!("{name}.expect")), expect)
}

fn main() -> ExitCode {
    let Some(out) = std::env::args().nth(1) else {
        eprintln!("usage: gen-hostile OUTDIR");
        return ExitCode::from(2);
    };
    let dir = Path::new(&out);
    let run = || -> std::io::Result<(usize, usize, usize)> {
        fs::create_dir_all(dir)?;
        let valid = valid_images();
        for (name, img) in &valid {
            write(dir, name, img, "accepted\n")?;
        }
        let hostile = hostile();
        for h in &hostile {
            let info = &VERIFY_ERRORS[h.code as usize];
            let expect = format!("{}\n{}\n", errno_name(info.errno), h.fragment);
            write(dir, &h.name, &h.image, &expect)?;
        }
        let muts = mutations(REFUSED_MUTATIONS, ACCEPTED_MUTATIONS);
        for m in &muts {
            let expect = match &m.refusal {
                Some((code, msg)) => {
                    let info = &VERIFY_ERRORS[*code as usize];
                    format!("{}\n{msg}\n", errno_name(info.errno))
                }
                None => "run\n".to_string(),
            };
            write(dir, &m.name, &m.image, &expect)?;
        }
        Ok((hostile.len(), muts.len(), valid.len()))
    };
    match run() {
        Ok((n, nmut, nvalid)) => {
            println!("gen-hostile: {n} hostile, {nmut} mutated and {nvalid} valid images in {out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gen-hostile: {out}: {e}");
            ExitCode::FAILURE
        }
    }
}
