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
//! Given .stpb files (the guest harness passes every case it compiled),
//! it also mutates each of those programs' images: CORPUS_PER_PROGRAM
//! refused mutations of each, and up to CORPUS_ACCEPTED accepted ones in
//! all, written the same way (`corpus-NAME-N-KIND`).
//!
//! usage: gen-hostile OUTDIR [PROGRAM.stpb | NAME=PATH ...]
use std::fs;
use std::path::Path;
use std::process::ExitCode;

use stapvm_tests::hostile::{
    corpus_mutations, errno_name, hostile, mutations, stpb_image, valid_images, Mutated,
};
use vm_spec::tables::VERIFY_ERRORS;

/// Refused and accepted mutations of the hand-made images written for the
/// guest.
const REFUSED_MUTATIONS: usize = 240;
const ACCEPTED_MUTATIONS: usize = 40;
/// Refused mutations of each compiled program, and accepted ones in all.
const CORPUS_PER_PROGRAM: usize = 3;
const CORPUS_ACCEPTED: usize = 40;

/// The `.expect` of a mutation: its errno name and whole log message, or
/// `run`.
fn mutation_expect(m: &Mutated) -> String {
    match &m.refusal {
        Some((code, msg)) => {
            let info = &VERIFY_ERRORS[*code as usize];
            format!("{}\n{}\n", errno_name(info.errno), msg)
        }
        None => "run\n".to_string(),
    }
}

fn write(dir: &Path, name: &str, img: &[u8], expect: &str) -> std::io::Result<()> {
    fs::write(dir.join(format!("{name}.img")), img)?;
    fs::write(dir.join(format!("{name}.expect")), expect)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(out) = args.next() else {
        eprintln!("usage: gen-hostile OUTDIR [PROGRAM.stpb | NAME=PATH ...]");
        return ExitCode::from(2);
    };
    let programs: Vec<String> = args.collect();
    let dir = Path::new(&out);
    let run = || -> std::io::Result<(usize, usize, usize, usize)> {
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
        let mut muts = mutations(REFUSED_MUTATIONS, ACCEPTED_MUTATIONS);
        // Each program once: NAME=PATH, or PATH whose stem is the name.
        let mut bases = Vec::new();
        for p in &programs {
            let (stem, path) = match p.split_once('=') {
                Some((name, path)) => (name.to_string(), Path::new(path)),
                None => {
                    let path = Path::new(p);
                    let stem = path
                        .file_stem()
                        .map_or_else(|| "program".into(), |s| s.to_string_lossy().into_owned());
                    (stem, path)
                }
            };
            match stpb_image(&fs::read(path)?) {
                Ok(img) => bases.push((stem, img)),
                Err(e) => eprintln!("gen-hostile: {p}: no image ({e}); left out"),
            }
        }
        let ncorpus = bases.len();
        muts.extend(corpus_mutations(
            &bases,
            CORPUS_PER_PROGRAM,
            CORPUS_ACCEPTED,
        ));
        for m in &muts {
            write(dir, &m.name, &m.image, &mutation_expect(m))?;
        }
        Ok((hostile.len(), muts.len(), ncorpus, valid.len()))
    };
    match run() {
        Ok((n, nmut, ncorpus, nvalid)) => {
            println!(
                "gen-hostile: {n} hostile, {nmut} mutated (of {ncorpus} compiled programs and \
                 the hand-made images) and {nvalid} valid images in {out}"
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gen-hostile: {out}: {e}");
            ExitCode::FAILURE
        }
    }
}
