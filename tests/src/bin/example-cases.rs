//! example-cases: SystemTap's example scripts as QEMU guest cases, the
//! table-driven run of issue 10: every kernel-side example that compiles
//! runs for its `.meta` run time under a workload that fires its probes
//! (file I/O, fork/exec, loopback sockets, signals, sleeps: case-lib.sh's
//! `workload_mix`, with `workload_examples` beside it: futexes, semaphores,
//! huge pages, a TCP retransmission, an I/O scheduler; an NFS mount for
//! the NFS examples), and passes when stapvm exits 0 with no `ERROR` and its
//! `-v` summary shows its probes fired (`stapvm_tests::examples::judge`).
//!
//! usage:
//!   example-cases gen OUTDIR    writes OUTDIR/ex-NAME/ for each example
//!                               that compiles here (script.stp,
//!                               script-args, compile-args, args,
//!                               workload.sh, out-filter, merge-stderr,
//!                               self-exit, compare; kmods and setup.sh
//!                               for the NFS examples); prints the names,
//!                               and the examples left out with why on
//!                               standard error
//!   example-cases check OUT     judges the guest's (filtered) output:
//!                               exit 0 when it passes, else 1 with why
//!
//! The corpus is `vm_testkit::paths::corpus("stp-examples")`
//! (STAPVM_SHARED); without it `gen` writes nothing.
use std::fs;
use std::path::Path;
use std::process::ExitCode;

use stapvm_tests::examples::{examples, judge, Example};

/// The lines of stapvm's output the judgement needs (run-case keeps only
/// these, so a chatty example does not flood the serial console).
const OUT_FILTER: &str = "^(ERROR|WARNING|stapvm: )|: hits [0-9]+, skipped";

/// Writes the case of `ex` into `dir`.
fn write_case(ex: &Example, dir: &Path, me: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    fs::copy(&ex.script, dir.join("script.stp"))?;
    let defines: Vec<String> = ex
        .defines
        .iter()
        .map(|(n, v)| format!("-D {n}={v}"))
        .collect();
    fs::write(dir.join("compile-args"), defines.join(" ") + "\n")?;
    let mut sargs = String::new();
    for a in &ex.args {
        sargs.push_str(a);
        sargs.push('\n');
    }
    fs::write(dir.join("script-args"), sargs)?;
    if let Some(input) = &ex.stdin {
        fs::write(dir.join("stdin"), input)?;
    }
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    let mut args = format!("-v -T {}", ex.seconds);
    if ex.has_target_command || ex.wants_target {
        // The example's own command is rarely in the busybox guest (and
        // a script whose usage asks for -x gets one): the target runs
        // the workload instead.
        let target = dir.join("target.sh");
        fs::write(
            &target,
            "#!/bin/sh\n. /stapvm/case-lib.sh\nworkload_mix 1 10\n",
        )?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&target, fs::Permissions::from_mode(0o755))?;
        }
        args.push_str(&format!(
            " -c /cases/{}/target.sh",
            name.unwrap_or_default()
        ));
    }
    if let Some(pid) = ex.target_pid {
        args.push_str(&format!(" -x {pid}"));
    }
    fs::write(dir.join("args"), args + "\n")?;
    // What the probes need first: the run may last only a second (-T 1).
    let mut workload = String::from(". /stapvm/case-lib.sh\n");
    if ex.probes_nfs {
        // Modules and mount before the script (kmods, setup.sh); file
        // operations on the mount while it runs.
        fs::write(dir.join("kmods"), "sunrpc nfsd nfsv4\n")?;
        fs::write(
            dir.join("needs"),
            "config CONFIG_NFSD\nconfig CONFIG_NFS_V4\n",
        )?;
        fs::write(dir.join("setup.sh"), ". /stapvm/case-lib.sh\nnfs_mount\n")?;
        workload.push_str("nfs_traffic\n");
    }
    if ex.probes_ext4 {
        // enospc.stp: an ext4 mount the workload fills to ENOSPC.
        // ext4 asks the crypto API for crc32c up to 6.13 (not through
        // modules.dep); later kernels call the crc32c library.
        fs::write(dir.join("kmods"), "?crc32c_generic ext4\n")?;
        fs::write(dir.join("needs"), "config CONFIG_EXT4_FS\n")?;
        fs::write(dir.join("setup.sh"), ". /stapvm/case-lib.sh\next4_mount\n")?;
        workload.push_str("ext4_fill\n");
    }
    // Beside workload_mix, not before it: many runs last one second, and
    // the probes of killsnoop or opensnoop need the mix's first round.
    workload.push_str("workload_examples >/dev/null 2>&1 &\n");
    workload.push_str("workload_mix \"$STAPVM_PID\" 200\n");
    workload.push_str("wait\n");
    fs::write(dir.join("workload.sh"), workload)?;
    fs::write(dir.join("out-filter"), format!("{OUT_FILTER}\n"))?;
    fs::write(dir.join("merge-stderr"), "")?;
    fs::write(dir.join("self-exit"), "")?;
    fs::write(dir.join("compare"), format!("{} check\n", me.display()))?;
    Ok(())
}

/// The first probe point of `prog` that only the kernel's DWARF can place
/// (a statement by source line, a function by source file) and that is
/// not optional: the guest boots Debian's kernel without its `-dbg`
/// package, so such an example cannot run there (the loader's use of the
/// debuginfo is tested with test modules and fake files instead).
fn needs_kernel_debuginfo(prog: &vm_spec::program::Program) -> Option<&str> {
    use vm_spec::program::ProbeTarget;
    prog.probes
        .iter()
        .filter(|p| u32::from(p.flags) & vm_spec::abi::STP_PROBE_F_OPTIONAL == 0)
        .find(|p| match &p.target {
            ProbeTarget::Statement { .. } => true,
            ProbeTarget::Symbol { name, .. } => {
                vm_spec::program::split_source_file(name).1.is_some()
            }
            _ => false,
        })
        .map(|p| p.display.as_str())
}

fn gen(out: &Path) -> std::io::Result<()> {
    let me = std::env::current_exe()?;
    fs::create_dir_all(out)?;
    for ex in examples(&vm_testkit::paths::corpus("stp-examples")) {
        if let Some(why) = ex.excluded {
            eprintln!("example-cases: {}: left out: {why}", ex.name);
            continue;
        }
        let src = fs::read(&ex.script)?;
        let opts = compiler::Options {
            defines: ex.defines.clone(),
            args: ex.args.clone(),
        };
        let path = ex.script.to_string_lossy();
        let compiled = match compiler::compile(&path, &String::from_utf8_lossy(&src), &opts) {
            Ok(c) => c,
            Err(e) => {
                let first = e
                    .rendered
                    .lines()
                    .find(|l| l.contains("error"))
                    .unwrap_or("");
                eprintln!(
                    "example-cases: {}: left out: does not compile: {first}",
                    ex.name
                );
                continue;
            }
        };
        if let Some(p) = needs_kernel_debuginfo(&compiled.program) {
            eprintln!(
                "example-cases: {}: left out: {p} needs the kernel's debuginfo \
                 (linux-image-*-dbg), which the guest does not have",
                ex.name
            );
            continue;
        }
        // User-space probes in programs or markers this machine lacks
        // (php, tcl, libguestfs, glibc's markers where glibc has none):
        // the guest, built from this machine's files, lacks them too.
        if let Err(why) = stapvm::uprobes::place(&compiled.program) {
            eprintln!(
                "example-cases: {}: left out: {why}, here and so in the guest",
                ex.name
            );
            continue;
        }
        let name = format!("ex-{}", ex.name.replace('_', "-"));
        write_case(&ex, &out.join(&name), &me)?;
        println!("{name}");
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    match argv.as_slice() {
        ["gen", out] => match gen(Path::new(out)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("example-cases: {out}: {e}");
                ExitCode::FAILURE
            }
        },
        ["check", out] => {
            let text = fs::read_to_string(out).unwrap_or_default();
            match judge(&text) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    println!("{e}");
                    ExitCode::FAILURE
                }
            }
        }
        _ => {
            eprintln!("usage: example-cases gen OUTDIR | check OUTFILE");
            ExitCode::from(2)
        }
    }
}
