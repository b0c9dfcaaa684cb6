//! Shared pieces of the stapvm benches (`cargo bench -p stapvm-benches`):
//! a timing loop with a median, a raw runner of the C core that calls
//! `stp_run` directly (no decoding of records between runs, unlike
//! `HostSession::run_handler`), and the bench scripts.
//!
//! Environment: `STAPVM_BENCH_QUICK=1` runs every measurement briefly (for
//! `valgrind --tool=callgrind`, which counts instructions and needs no
//! long runs); `STAPVM_BENCH_FILTER=LIST` runs only the measurements whose
//! name is in the comma-separated list (`loop,hit-*`).
use std::time::{Duration, Instant};
use vm_spec::core::ffi;
use vm_spec::program::Program;

/// Whether `STAPVM_BENCH_QUICK` is set (short runs, for callgrind).
pub fn quick() -> bool {
    std::env::var_os("STAPVM_BENCH_QUICK").is_some_and(|v| v != "0")
}

/// Whether the measurement `name` is selected by `STAPVM_BENCH_FILTER` (a
/// comma-separated list of names or name prefixes ending in `*`).
pub fn selected(name: &str) -> bool {
    std::env::var("STAPVM_BENCH_FILTER").map_or(true, |f| {
        f.split(',').any(|w| match w.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == w,
        })
    })
}

/// CPU time this process has used so far (all its threads: the compiler
/// runs on a thread of its own), in ms; `clock_gettime`'s
/// `CLOCK_PROCESS_CPUTIME_ID`. Unlike wall time it does not count the time
/// the process waits for a core, so it is the figure to compare on a
/// loaded machine.
pub fn cpu_ms() -> f64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid, writable `struct timespec` (x86-64 layout).
    let rc = unsafe { clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.sec as f64 * 1e3 + ts.nsec as f64 / 1e6
}

/// Median of `samples` (sorted in place); 0 when empty.
pub fn median(samples: &mut [f64]) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples.sort_by(f64::total_cmp);
    let n = samples.len();
    if n % 2 == 1 {
        samples[n / 2]
    } else {
        (samples[n / 2 - 1] + samples[n / 2]) / 2.0
    }
}

/// Runs `f` once to warm up, then in batches until `budget` has passed
/// (at least 5 batches, at most 1,000), and returns the median time of one
/// call of `f` in ns. `f` is called `batch` times per sample.
pub fn time_ns(budget: Duration, batch: u32, mut f: impl FnMut()) -> f64 {
    f();
    let (budget, min_samples) = if quick() {
        (Duration::ZERO, 1)
    } else {
        (budget, 5)
    };
    let start = Instant::now();
    let mut samples = Vec::new();
    while samples.len() < min_samples || (start.elapsed() < budget && samples.len() < 1000) {
        let t = Instant::now();
        for _ in 0..batch {
            f();
        }
        samples.push(t.elapsed().as_nanos() as f64 / f64::from(batch));
    }
    median(&mut samples)
}

/// The stand-in image of a compiled program (`StandIns::Named`: every
/// kprobe resolved to the first symbol it names, a pattern to `vfs_read`).
pub fn image_of(prog: &Program) -> Vec<u8> {
    vm_spec::image::build_stand_in(prog, vm_spec::image::StandIns::Named).expect("image")
}

/// Compiles a bench script (panics with the diagnostics on failure).
pub fn compile(src: &str, defines: &[(&str, &str)]) -> Program {
    let opts = compiler::Options {
        defines: defines
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..Default::default()
    };
    match compiler::compile("bench.stp", src, &opts) {
        Ok(c) => c.program,
        Err(e) => panic!("bench script does not compile:\n{}", e.rendered),
    }
}

/// The C core with nothing around it: a verified image, one `stp_vm`,
/// globals and one ring, and `stp_run` called directly. After each run the
/// consumer position jumps to the producer's (the records are "read"
/// without being decoded), so the ring never fills unless one run writes
/// more than it holds. The record clock is the host's CLOCK_MONOTONIC, as
/// the kernel's is a real clock.
pub struct RawCore {
    _image: Vec<u64>,
    prog: Box<ffi::stp_prog>,
    vm: Box<ffi::stp_vm>,
    _sbuf: Vec<u8>,
    globals: Vec<i64>,
    cons: Box<vm_spec::abi::stp_ring_cons>,
    prod: Box<vm_spec::abi::stp_ring_prod>,
    data: Vec<u64>,
    wakeups: Box<u64>,
    ring_size: u64,
    comm: &'static str,
    /// Each map's storage (`stp_map_init`), as the kernel glue sets it up.
    _maps: Vec<Vec<u64>>,
    map_ptrs: Vec<*mut ffi::stp_map>,
}

impl RawCore {
    /// Verifies `image` (panics if refused) and sets up one CPU's state
    /// with a ring of `ring_size` bytes (a power of two).
    pub fn new(image: &[u8], ring_size: u64) -> Self {
        let mut buf = vec![0u64; image.len().div_ceil(8)];
        // SAFETY: buf holds at least image.len() bytes; u8 has no alignment.
        unsafe {
            std::ptr::copy_nonoverlapping(
                image.as_ptr(),
                buf.as_mut_ptr().cast::<u8>(),
                image.len(),
            );
        }
        let mut prog = Box::<ffi::stp_prog>::default();
        let mut res = ffi::stp_verify_result {
            code: 0,
            where_: 0,
            msg: [0; vm_spec::abi::STP_LOG_MAX as usize],
        };
        // SAFETY: buf is 8-aligned and holds image.len() bytes; prog and res
        // are valid for writes.
        let rc = unsafe {
            ffi::stp_verify(
                buf.as_ptr().cast(),
                u32::try_from(image.len()).expect("image size"),
                &mut *prog,
                &mut res,
            )
        };
        assert_eq!(rc, 0, "the verifier refused the bench image");
        let cap = prog.limits[vm_spec::abi::STP_LIM_MAXSTRINGLEN as usize];
        let mut sbuf = vec![0u8; vm_spec::abi::STP_MAX_SREGS as usize * (cap as usize + 1)];
        let vm = Box::new(ffi::stp_vm {
            str_cap: cap,
            sbuf: sbuf.as_mut_ptr().cast(),
            ..Default::default()
        });
        assert!(ring_size.is_power_of_two());
        let mut maps = Vec::new();
        for i in 0..prog.nmaps as usize {
            // SAFETY: verified: maps holds nmaps descriptors.
            let d = unsafe { &*prog.maps.add(i) };
            // SAFETY: d is a verified descriptor.
            let size = unsafe { ffi::stp_map_size(d, cap) };
            let mut block = vec![0u64; usize::try_from(size).expect("map size").div_ceil(8)];
            // SAFETY: block holds stp_map_size() zeroed, 8-aligned bytes.
            unsafe { ffi::stp_map_init(block.as_mut_ptr().cast(), d, cap) };
            maps.push(block);
        }
        let map_ptrs = maps.iter_mut().map(|m| m.as_mut_ptr().cast()).collect();
        RawCore {
            _maps: maps,
            map_ptrs,
            globals: vec![0; prog.nglobals as usize],
            _image: buf,
            prog,
            vm,
            _sbuf: sbuf,
            cons: Box::default(),
            prod: Box::default(),
            // The data area is mapped twice in the kernel; 2 x size here.
            data: vec![0u64; usize::try_from(ring_size / 4).expect("ring")],
            wakeups: Box::new(0),
            ring_size,
            comm: "getppid-loop",
        }
    }

    /// Runs handler `h` once; returns `stp_run`'s result and the fuel left.
    pub fn run(&mut self, h: u32) -> (i32, u64) {
        let mut env = ffi::stp_host_env {
            pid: 4242,
            tid: 4242,
            ppid: 1,
            comm: self.comm.as_ptr().cast(),
            comm_len: self.comm.len() as u32,
            time_ns: 0, // the host's CLOCK_MONOTONIC
            ..Default::default()
        };
        let mut ring = ffi::stp_ring {
            cons: &mut *self.cons,
            prod: &mut *self.prod,
            data: self.data.as_mut_ptr().cast(),
            size: self.ring_size,
            owner: (&mut *self.wakeups as *mut u64).cast(),
        };
        let mut rc = ffi::stp_run_ctx {
            prog: &*self.prog,
            handler: h,
            env: (&mut env as *mut ffi::stp_host_env).cast(),
            globals: self.globals.as_mut_ptr(),
            ring: &mut ring,
            maps: if self.map_ptrs.is_empty() {
                std::ptr::null_mut()
            } else {
                self.map_ptrs.as_mut_ptr()
            },
            ..Default::default()
        };
        // SAFETY: prog was verified and its image lives in self._image; vm's
        // sbuf holds STP_MAX_SREGS * (str_cap + 1) bytes; globals holds
        // nglobals slots; ring, env and everything they point at outlive
        // the call; every map pointer points at a block set up by
        // stp_map_init. No statistics, iterators or functions in the bench
        // scripts.
        let code = unsafe { ffi::stp_run(&mut *self.vm, &mut rc) };
        // The consumer catches up without reading.
        self.cons.consumer_pos = self.prod.producer_pos;
        (code, rc.fuel_left)
    }

    /// Bytes the producer has written so far.
    pub fn produced(&self) -> u64 {
        self.prod.producer_pos
    }

    /// Records dropped (ring full).
    pub fn dropped(&self) -> u64 {
        self.prod.dropped
    }

    /// Global `i`.
    pub fn global(&self, i: usize) -> i64 {
        self.globals[i]
    }

    /// Runs handler `h` once with a fresh ring position and returns the raw
    /// records (header included) it wrote, for the formatting bench.
    pub fn run_and_collect(&mut self, h: u32) -> Vec<Vec<u8>> {
        let start = self.prod.producer_pos;
        self.run(h);
        let end = self.prod.producer_pos;
        // SAFETY: data owns data.len() * 8 initialised bytes.
        let bytes: &[u8] =
            unsafe { std::slice::from_raw_parts(self.data.as_ptr().cast(), self.data.len() * 8) };
        let mut out = Vec::new();
        let mut pos = start;
        while pos < end {
            let off = (pos & (self.ring_size - 1)) as usize;
            let len = vm_spec::records::record_len(&bytes[off..]).expect("record length");
            out.push(bytes[off..off + len as usize].to_vec());
            pos += u64::from(len);
        }
        self.cons.consumer_pos = end;
        out
    }
}

/// The probe point of every per-hit bench script.
pub const GETPPID: &str = "kernel.function(\"__x64_sys_getppid\")";

/// `n++` on a global at each hit (the guest bench's `count`).
pub fn count_script() -> String {
    format!("global n; probe {GETPPID} {{ n++ }}")
}

/// `printf("%d %s\n", pid(), execname())` at each hit (the guest bench's
/// `printf`).
pub fn printf_script() -> String {
    format!("probe {GETPPID} {{ printf(\"%d %s\\n\", pid(), execname()) }}")
}

/// A tight arithmetic loop of `iters` iterations on locals (one global
/// store at the end so it is not dead): ns per instruction.
pub fn loop_script(iters: u64) -> String {
    format!(
        "global out
probe begin {{
  acc = 1; i = 0
  while (i < {iters}) {{ acc = (acc * 3 + i) ^ (i >> 2); i++ }}
  out = acc
}}"
    )
}

/// `k` printf records per run in a loop: ns per record incl. reserve and
/// commit.
pub fn printf_loop_script(k: u64) -> String {
    format!("probe begin {{ for (i = 0; i < {k}; i++) printf(\"%d %s\\n\", i, execname()) }}")
}
