//! The user-space runner of the C VM core: `HostSession` runs the handlers
//! of a verified image (verify.c, vm.c, map.c, ring.c through
//! `vm_spec::core::ffi`) against a simulated [`HostEnv`] with one ring
//! (`HostRing`, the kernel's producer code and a Rust consumer), so that
//! tests, benches and the differential check run the module's code without
//! a kernel.

use vm_refvm::HostEnv;
use vm_spec::abi;
use vm_spec::core::{ffi, VerifiedImage, VerifyError};
use vm_spec::program::{ArgKind, Format, Program};
use vm_spec::records::{self, Record, RecordError};

/// The user-space models' page size (`STP_HOST_PAGE_SIZE`, abi.h): the
/// simulated memory's and the ring's.
const PAGE: u64 = abi::STP_HOST_PAGE_SIZE as u64;

/// A run-time error that ended a handler (`enum stp_runtime_error`), as the
/// VM reported it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RuntimeError {
    /// `abi::STP_RTE_*`.
    pub code: u32,
    /// The code's name from `STP_RUNTIME_ERRORS` (`"DIVZERO"`).
    pub name: &'static str,
    /// Handler index.
    pub handler: u32,
    /// Instruction index inside the handler.
    pub pc: u32,
    /// Faulting address, if any.
    pub addr: u64,
    /// stap's message with the address filled in.
    pub message: String,
}

impl RuntimeError {
    fn new(code: u32, handler: u32, pc: u32, addr: u64) -> Self {
        let (name, msg) = vm_spec::tables::RUNTIME_ERRORS
            .get(code as usize)
            .map_or(("UNKNOWN", "unknown run-time error"), |e| (e.name, e.msg));
        RuntimeError {
            code,
            name,
            handler,
            pc,
            addr,
            message: msg
                .replace("%llx", &format!("{addr:x}"))
                .replace("%llu", &addr.to_string())
                .replace("%lld", &(addr as i64).to_string()),
        }
    }
}

/// A user-space ring with the kernel's producer code (ring.c) and a
/// consumer in Rust. The data area is a plain 2 x size buffer instead of
/// one mapped twice: the producer writes every record contiguously at
/// `data + (pos & (size - 1))` and this consumer reads it from exactly
/// there, so the aliasing of the two halves is never needed (a record is
/// only overwritten after it has been consumed).
pub struct HostRing {
    cons: Box<abi::stp_ring_cons>,
    prod: Box<abi::stp_ring_prod>,
    data: Vec<u64>,
    wakeups: Box<u64>,
    size: u64,
}

impl HostRing {
    /// A ring of `size` data bytes.
    ///
    /// # Panics
    /// If `size` is not a power of two of at least 16 bytes.
    pub fn new(size: u64) -> Self {
        assert!(size.is_power_of_two() && size >= 16, "ring size {size}");
        let words = usize::try_from(size / 4).unwrap_or(usize::MAX);
        HostRing {
            cons: Box::default(),
            prod: Box::default(),
            data: vec![0u64; words],
            wakeups: Box::new(0),
            size,
        }
    }

    /// The C view of this ring; valid while `self` is not moved or dropped
    /// (the pointers go to heap blocks owned by `self`).
    fn raw(&mut self) -> ffi::stp_ring {
        ffi::stp_ring {
            cons: &mut *self.cons,
            prod: &mut *self.prod,
            data: self.data.as_mut_ptr().cast(),
            size: self.size,
            owner: (&mut *self.wakeups as *mut u64).cast(),
        }
    }

    /// Data bytes of the ring.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// `stp_ring_reserve`: the offset of `len` bytes of room in the data
    /// area (`0 <= offset < size`, the record may extend past `size`), or
    /// `None` when the ring counted a drop.
    pub fn reserve(&mut self, len: u32) -> Option<usize> {
        let mut raw = self.raw();
        // SAFETY: raw points at live memory owned by self.
        let p = unsafe { ffi::stp_ring_reserve(&mut raw, len) };
        if p.is_null() {
            return None;
        }
        Some(p as usize - self.data.as_ptr() as usize)
    }

    /// Copies `bytes` into the data area at `off` (a reserved record).
    ///
    /// # Panics
    /// If the bytes do not fit in the 2 x size data area.
    pub fn write(&mut self, off: usize, bytes: &[u8]) {
        let buf = self.bytes_mut();
        buf[off..off + bytes.len()].copy_from_slice(bytes);
    }

    /// `stp_ring_commit` of the record of `len` bytes reserved last.
    pub fn commit(&mut self, len: u32) {
        let mut raw = self.raw();
        let rec = raw.data;
        // SAFETY: raw points at live memory owned by self.
        unsafe { ffi::stp_ring_commit(&mut raw, rec.cast(), len) }
    }

    /// Sets the consumer position, as user space would (any value).
    pub fn set_consumer_pos(&mut self, pos: u64) {
        self.cons.consumer_pos = pos;
    }

    /// The consumer position.
    pub fn consumer_pos(&self) -> u64 {
        self.cons.consumer_pos
    }

    /// The producer position.
    pub fn producer_pos(&self) -> u64 {
        self.prod.producer_pos
    }

    /// Records dropped because the ring was full.
    pub fn dropped(&self) -> u64 {
        self.prod.dropped
    }

    /// Wakeups the producer asked for.
    pub fn wakeups(&self) -> u64 {
        *self.wakeups
    }

    /// The whole 2 x size data area.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the Vec<u64> owns data.len() * 8 initialised bytes.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr().cast(), self.data.len() * 8) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in bytes(), with unique access.
        unsafe {
            std::slice::from_raw_parts_mut(self.data.as_mut_ptr().cast(), self.data.len() * 8)
        }
    }

    /// Consumes every committed record and decodes it with `formats`. Stops
    /// at the first record whose length is implausible.
    pub fn drain(&mut self, formats: &[Format]) -> Vec<Result<Record, RecordError>> {
        self.drain_raw()
            .into_iter()
            .map(|r| r.and_then(|rec| records::parse(&rec, formats)))
            .collect()
    }

    /// Consumes every committed record and returns its raw bytes (header
    /// included), for byte-exact comparisons. Stops at the first record
    /// whose length is implausible.
    pub fn drain_raw(&mut self) -> Vec<Result<Vec<u8>, RecordError>> {
        let mut out = Vec::new();
        let prod = self.prod.producer_pos;
        let mut cons = self.cons.consumer_pos;
        if cons > prod || prod - cons > self.size {
            cons = prod;
        }
        while cons < prod {
            let off = (cons & (self.size - 1)) as usize;
            let bytes = self.bytes();
            let Some(len) = records::record_len(&bytes[off..]) else {
                out.push(Err(RecordError::BadLength(0)));
                cons = prod;
                break;
            };
            if u64::from(len) > prod - cons {
                out.push(Err(RecordError::BadLength(len)));
                cons = prod;
                break;
            }
            let end = off + len as usize;
            out.push(match bytes.get(off..end) {
                Some(rec) => Ok(rec.to_vec()),
                None => Err(RecordError::BadLength(len)),
            });
            cons += u64::from(len);
        }
        self.cons.consumer_pos = cons;
        out
    }
}

/// Why a [`HostSession`] could not be made.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The program could not be laid out as an image.
    #[error(transparent)]
    Image(#[from] vm_spec::image::ImageError),
    /// The verifier refused the image.
    #[error(transparent)]
    Verify(#[from] VerifyError),
}

/// A verified program with user-space globals, one ring and one VM: runs
/// handlers without a kernel (begin/end/timer scripts, or kprobe handlers
/// against a [`HostEnv`]).
pub struct HostSession {
    verified: VerifiedImage,
    formats: Vec<Format>,
    globals: Vec<i64>,
    vm: Box<ffi::stp_vm>,
    /// The string registers' bytes; `vm.sbuf` points here.
    _sbuf: Vec<u8>,
    /// STOK's tokenizer copy (`MAXSTRINGLEN` bytes); `vm.tok` points here.
    _tok: Vec<u8>,
    /// The regex group state (`vm.rx` points here), empty without group
    /// programs.
    _rx: Vec<u64>,
    /// Function frames (`vm.frames` points here; empty without functions).
    _frames: Vec<u64>,
    /// Statistics of every simulated CPU: `stat_cpus` copies of
    /// `stat_stride` bytes (`struct stp_stat_area`).
    stats: Vec<u64>,
    stat_cpus: u32,
    stat_stride: u64,
    /// Each map's storage (`stp_map_init`), and the iterators of the one
    /// simulated CPU (`stp_iters_init`).
    maps: Vec<Vec<u64>>,
    iters: Vec<u64>,
    /// Runs that ended skipped (a map lock not taken in MAXTRYLOCK tries).
    skipped: u64,
    ring: HostRing,
    clock: u64,
    records: Vec<Record>,
    raw_records: Vec<Vec<u8>>,
    bad_records: Vec<RecordError>,
    exit_requested: bool,
    fuel_left: u64,
    /// A netfilter handler's verdict when the last run ended (VERDICT_SET;
    /// every run starts with NF_ACCEPT, as the module's hook does).
    verdict: i64,
}

fn formats_of(p: &ffi::stp_prog) -> Vec<Format> {
    (0..p.nformats as usize)
        .map(|i| {
            // SAFETY: verified: formats holds nformats entries.
            let f = unsafe { *p.formats.add(i) };
            Format {
                text: String::new(),
                args: (0..f.nargs.min(abi::STP_MAX_FMT_ARGS))
                    .map(|b| {
                        if f.str_mask & (1 << b) != 0 {
                            ArgKind::Str
                        } else {
                            ArgKind::Int
                        }
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The memory of `env` as the C core's regions: its pages (the
/// reference VM's too), runs of adjacent ones joined.
fn page_regions(env: &HostEnv) -> Vec<(u64, Vec<u8>)> {
    let mut regions: Vec<(u64, Vec<u8>)> = Vec::new();
    for (pno, bytes) in env.pages() {
        match regions.last_mut() {
            Some((start, buf)) if *start + buf.len() as u64 == pno * PAGE => {
                buf.extend_from_slice(&bytes)
            }
            _ => regions.push((pno * PAGE, bytes)),
        }
    }
    regions
}

/// Storage for every map of `p` and the iterators of one CPU, set up by
/// the core (`stp_map_init`, `stp_iters_init`) as the kernel glue does.
fn host_maps(p: &ffi::stp_prog, maxstr: u32) -> (Vec<Vec<u64>>, Vec<u64>) {
    let mut maps = Vec::new();
    for i in 0..p.nmaps as usize {
        // SAFETY: verified: maps holds nmaps descriptors.
        let d = unsafe { &*p.maps.add(i) };
        // SAFETY: d is a verified descriptor.
        let size = unsafe { ffi::stp_map_size(d, maxstr) };
        let mut block = vec![0u64; (size as usize).div_ceil(8)];
        // SAFETY: block holds stp_map_size() zeroed, 8-aligned bytes.
        unsafe { ffi::stp_map_init(block.as_mut_ptr().cast(), d, maxstr) };
        maps.push(block);
    }
    let isize = p.niters as usize
        * (std::mem::size_of::<ffi::stp_iter>()
            + p.iter_cap as usize * std::mem::size_of::<ffi::stp_iter_ent>());
    let mut iters = vec![0u64; isize.div_ceil(8)];
    if p.niters > 0 {
        // SAFETY: iters holds stp_iters_size(niters, iter_cap) bytes.
        unsafe { ffi::stp_iters_init(iters.as_mut_ptr().cast(), p.niters, p.iter_cap) };
    }
    (maps, iters)
}

impl HostSession {
    /// Verifies `image` and prepares globals (zero), the ring
    /// (`RING_PAGES` pages of `STP_HOST_PAGE_SIZE` bytes) and the VM. Formats know only their
    /// argument kinds; use [`HostSession::from_program`] for texts.
    pub fn new(image: &[u8]) -> Result<Self, VerifyError> {
        let verified = VerifiedImage::new(image)?;
        let formats = formats_of(verified.prog());
        let p = verified.prog();
        let cap = p.limits[abi::STP_LIM_MAXSTRINGLEN as usize];
        let ring_pages = u64::from(p.limits[abi::STP_LIM_RING_PAGES as usize]);
        let mut sbuf = vec![0u8; (abi::STP_MAX_SREGS as usize) * (cap as usize + 1)];
        let mut tok = vec![0u8; cap as usize];
        // As the kernel glue does: MAXNESTING frames, only with functions.
        let nframes = if p.nfuncs > 0 {
            p.limits[abi::STP_LIM_MAXNESTING as usize]
        } else {
            0
        };
        let mut frames = vec![0u64; vm_spec::core::frames_size(nframes, cap).div_ceil(8)];
        // As the kernel glue does: the regex group state only for a
        // program with group programs.
        let mut rx = if p.rx_groups != 0 {
            vec![0u64; vm_spec::core::rx_state_size(cap).div_ceil(8)]
        } else {
            Vec::new()
        };
        let vm = Box::new(ffi::stp_vm {
            r: [0; abi::STP_MAX_REGS as usize],
            slen: [0; abi::STP_MAX_SREGS as usize],
            str_cap: cap,
            sbuf: sbuf.as_mut_ptr().cast(),
            frames: if nframes > 0 {
                frames.as_mut_ptr().cast()
            } else {
                std::ptr::null_mut()
            },
            nframes,
            pad: 0,
            tok: tok.as_mut_ptr().cast(),
            tok_pos: 0,
            tok_len: 0,
            pad2: 0,
            rx: if rx.is_empty() {
                std::ptr::null_mut()
            } else {
                rx.as_mut_ptr().cast()
            },
        });
        let stat_stride = (u64::from(p.stat_bytes) + 7) & !7;
        let (maps, iters) = host_maps(p, cap);
        Ok(HostSession {
            maps,
            iters,
            skipped: 0,
            stats: vec![0u64; (stat_stride / 8) as usize],
            stat_cpus: 1,
            stat_stride,
            globals: vec![0; p.nglobals as usize],
            formats,
            vm,
            _sbuf: sbuf,
            _tok: tok,
            _rx: rx,
            _frames: frames,
            ring: HostRing::new(ring_pages * PAGE),
            clock: 1,
            records: Vec::new(),
            raw_records: Vec::new(),
            bad_records: Vec::new(),
            exit_requested: false,
            fuel_left: 0,
            verdict: i64::from(abi::STP_NF_ACCEPT),
            verified,
        })
    }

    /// Builds the stand-in image of `prog` (`vm_spec::image::build_stand_in`),
    /// verifies it and keeps the program's format texts.
    pub fn from_program(prog: &Program) -> Result<Self, HostError> {
        let image = vm_spec::image::build_stand_in(prog, vm_spec::image::StandIns::Named)?;
        let mut s = HostSession::new(&image)?;
        if s.formats.len() == prog.formats.len() {
            s.formats = prog.formats.clone();
        }
        Ok(s)
    }

    /// Handlers in the program.
    pub fn handler_count(&self) -> u32 {
        self.verified.prog().nhandlers
    }

    /// Runs handler `idx` once in `env`, as fired by its first probe (what
    /// PP names, as in the reference VM). Records go to the session's ring
    /// and are decoded into [`HostSession::records`]. A run-time error is
    /// returned (and also recorded as a `Record::Error`).
    pub fn run_handler(&mut self, idx: u32, env: &HostEnv) -> Result<(), RuntimeError> {
        let probe = {
            let p = self.verified.prog();
            // SAFETY: verified: probes holds nprobes entries.
            (0..p.nprobes)
                .find(|&i| unsafe { (*p.probes.add(i as usize)).handler } == idx)
                .unwrap_or(u32::MAX)
        };
        self.run_as(idx, probe, env)
    }

    /// Runs handler `idx` once in `env` as fired by probe `probe` (the
    /// module's `struct stp_run_ctx.probe`).
    fn run_as(&mut self, idx: u32, probe: u32, env: &HostEnv) -> Result<(), RuntimeError> {
        if idx >= self.verified.prog().nhandlers {
            let mut e = RuntimeError::new(abi::STP_RTE_BADOP, idx, 0, 0);
            e.message = format!("no handler {idx}");
            return Err(e);
        }
        // SAFETY: verified: handlers holds nhandlers entries, idx < that.
        let hd = unsafe { *self.verified.prog().handlers.add(idx as usize) };
        if u32::from(hd.ctx) == abi::STP_CTX_FUNCTION {
            // stp_run runs probe handlers only: a function's RETI/RETS
            // would pop a frame that does not exist.
            let mut e = RuntimeError::new(abi::STP_RTE_BADOP, idx, 0, 0);
            e.message = format!("handler {idx} is a function, not a probe handler");
            return Err(e);
        }
        let regions = page_regions(env);
        let mems: Vec<ffi::stp_host_mem> = regions
            .iter()
            .map(|(a, b)| ffi::stp_host_mem {
                addr: *a,
                len: b.len() as u64,
                data: b.as_ptr(),
            })
            .collect();
        let mut cenv = ffi::stp_host_env {
            pid: env.pid,
            tid: env.tid,
            ppid: env.ppid,
            uid: env.uid,
            euid: env.euid,
            gid: env.gid,
            cpu: env.cpu,
            jiffies: env.jiffies,
            retval: env.retval,
            args: env.args,
            wall_ns: env.wall_ns,
            time_ns: self.clock,
            comm: env.execname.as_ptr().cast(),
            comm_len: u32::try_from(env.execname.len()).unwrap_or(u32::MAX),
            nmem: u32::try_from(mems.len()).unwrap_or(0),
            mem: mems.as_ptr(),
            ip: env.ip,
            user_mode: i64::from(env.user_mode),
            pcomm: env.pexecname.as_ptr().cast(),
            pcomm_len: u32::try_from(env.pexecname.len()).unwrap_or(u32::MAX),
            nstack: u32::try_from(env.stack.len()).unwrap_or(u32::MAX),
            stack: env.stack.as_ptr(),
            task: env.task,
            egid: env.egid,
            hz: env.hz,
            cycles: env.cycles,
            online_mask: env.online_mask,
            random: env.random,
            // $value (procfs and input probes): none in the test kit.
            value: std::ptr::null_mut(),
            value_len: 0,
            value_cap: 0,
            // $verdict (netfilter probes): the hook's default.
            verdict: i64::from(abi::STP_NF_ACCEPT),
        };
        let mut ring = self.ring.raw();
        // Each map's storage, set up by stp_map_init in `new`.
        let mut map_ptrs: Vec<*mut ffi::stp_map> = self
            .maps
            .iter_mut()
            .map(|m| m.as_mut_ptr().cast())
            .collect();
        let mut rc = ffi::stp_run_ctx {
            prog: self.verified.prog(),
            handler: idx,
            probe,
            env: (&mut cenv as *mut ffi::stp_host_env).cast(),
            globals: self.globals.as_mut_ptr(),
            ring: &mut ring,
            stats: ffi::stp_stat_area {
                base: if self.stats.is_empty() {
                    std::ptr::null_mut()
                } else {
                    self.stats.as_mut_ptr().cast()
                },
                stride: self.stat_stride,
                ncpus: self.stat_cpus,
                cpu: u32::try_from(env.cpu).unwrap_or(u32::MAX),
            },
            maps: if map_ptrs.is_empty() {
                std::ptr::null_mut()
            } else {
                map_ptrs.as_mut_ptr()
            },
            iters: if self.iters.is_empty() {
                std::ptr::null_mut()
            } else {
                self.iters.as_mut_ptr().cast()
            },
            ..Default::default()
        };
        // SAFETY: prog was verified and its image is owned by self; vm's
        // sbuf holds STP_MAX_SREGS * (str_cap + 1) bytes; globals holds
        // nglobals slots; stats holds stat_cpus copies of stat_stride
        // bytes (stat_stride >= stat_bytes); the ring, env and memory
        // regions outlive the call.
        let rc_code = unsafe { ffi::stp_run(&mut *self.vm, &mut rc) };
        if rc.skipped != 0 {
            self.skipped += 1;
        }
        self.clock = cenv.time_ns;
        self.fuel_left = rc.fuel_left;
        self.verdict = cenv.verdict;
        if rc.exit_requested != 0 {
            self.exit_requested = true;
        }
        for r in self.ring.drain_raw() {
            match r.and_then(|raw| records::parse(&raw, &self.formats).map(|rec| (raw, rec))) {
                Ok((raw, rec)) => {
                    self.records.push(rec);
                    self.raw_records.push(raw);
                }
                Err(e) => self.bad_records.push(e),
            }
        }
        if rc_code != 0 {
            // The error may be in a function: the record names its handler.
            let mut e = RuntimeError::new(rc.error, rc.error_handler, rc.error_pc, rc.error_addr);
            if rc.error == abi::STP_RTE_USER {
                if let Some(Record::Error { msg, .. }) = self.records.last() {
                    e.message = String::from_utf8_lossy(msg).into_owned();
                }
            }
            return Err(e);
        }
        Ok(())
    }

    /// Runs the handler of every probe of `kind` (`abi::STP_PROBE_*`), in
    /// probe order, as the module would at START (begin) or STOP (end).
    /// An error ends one handler, not the others; the errors are returned.
    pub fn run_probes_of_kind(&mut self, kind: u32, env: &HostEnv) -> Vec<RuntimeError> {
        let p = self.verified.prog();
        let fired: Vec<(u32, u32)> = (0..p.nprobes)
            .filter_map(|i| {
                // SAFETY: verified: probes holds nprobes entries.
                let d = unsafe { *p.probes.add(i as usize) };
                (u32::from(d.kind) == kind).then_some((d.handler, i))
            })
            .collect();
        fired
            .into_iter()
            .filter_map(|(h, i)| self.run_as(h, i, env).err())
            .collect()
    }

    /// Every record decoded so far, in order.
    pub fn records(&self) -> Vec<Record> {
        self.records.clone()
    }

    /// Takes the records decoded so far.
    pub fn take_records(&mut self) -> Vec<Record> {
        std::mem::take(&mut self.records)
    }

    /// Takes the raw bytes (header included) of the records that decoded
    /// since the last call, in ring order.
    pub fn take_raw_records(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.raw_records)
    }

    /// The verdict a netfilter handler left when the last run ended
    /// (helpers.h VERDICT_SET; NF_ACCEPT when it set none).
    pub fn verdict(&self) -> i64 {
        self.verdict
    }

    /// MAXACTION units left when the last run ended (`rc->fuel_left`).
    pub fn fuel_left(&self) -> u64 {
        self.fuel_left
    }

    /// The record clock of the user-space environment: the next time stamp
    /// it hands out (starts at 1, +1 per record or `local_clock_ns()`).
    pub fn clock(&self) -> u64 {
        self.clock
    }

    /// Records that did not decode (a core bug if ever non-empty).
    pub fn bad_records(&self) -> &[RecordError] {
        &self.bad_records
    }

    /// The PRINTF records formatted with the program's format texts
    /// (needs [`HostSession::from_program`]) and the HIST records drawn as
    /// stap draws histograms, concatenated.
    pub fn output(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for r in &self.records {
            if let Record::Printf { fmt, args, .. } = r {
                let Some(f) = self.formats.get(usize::from(*fmt)) else {
                    continue;
                };
                let a: Vec<vm_spec::records::FmtArg> =
                    args.iter().map(|a| a.as_fmt_arg()).collect();
                out.extend_from_slice(&vm_spec::core::format(&f.text, &a));
            } else if let Record::Hist { hist, .. } = r {
                out.extend_from_slice(hist.draw().as_bytes());
            }
        }
        out
    }

    /// Runs that ended skipped because a map's lock was not taken.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The entries of map `map` (`None` if there is no such map), read
    /// with `stp_map_read`, the code behind `STP_IOC_MAP_READ`.
    pub fn map_entries(
        &self,
        map: usize,
        decl: &vm_spec::program::MapDecl,
    ) -> Option<Vec<vm_spec::maps::MapEntry>> {
        let m = self.maps.get(map)?;
        let mut out = Vec::new();
        let mut cursor = 0u32;
        let mut buf = vec![0u64; 1 << 16];
        for _ in 0..=u32::MAX {
            if cursor == abi::STP_MAP_READ_END {
                break;
            }
            let mut used = 0u32;
            // SAFETY: m holds a map set up by stp_map_init; buf has
            // buf.len() * 8 bytes; nothing else touches the map meanwhile.
            let n = unsafe {
                ffi::stp_map_read(
                    m.as_ptr().cast(),
                    &mut cursor,
                    buf.as_mut_ptr().cast(),
                    u32::try_from(buf.len() * 8).unwrap_or(u32::MAX),
                    &mut used,
                )
            };
            let n = usize::try_from(n).ok()?;
            // SAFETY: used <= the buffer's size, written by stp_map_read.
            let bytes =
                unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), used as usize) };
            out.extend(vm_spec::maps::parse_entries(bytes, n, decl)?);
        }
        Some(out)
    }

    /// The global scalars.
    pub fn globals(&self) -> Vec<i64> {
        self.globals.clone()
    }

    /// Sets global `idx` (for tests); false if there is no such global.
    pub fn set_global(&mut self, idx: usize, v: i64) -> bool {
        match self.globals.get_mut(idx) {
            Some(g) => {
                *g = v;
                true
            }
            None => false,
        }
    }

    /// Simulates `n` CPUs (at least 1) for statistics and empties every
    /// statistic: each CPU id has its own copy, a run updates the copy of
    /// its [`HostEnv::cpu`] (a run whose `cpu` is not below `n` fails on
    /// its first statistic instruction) and the extractors merge all `n`.
    pub fn set_cpus(&mut self, n: u32) {
        self.stat_cpus = n.max(1);
        let words = (self.stat_stride / 8) as usize * self.stat_cpus as usize;
        self.stats = vec![0u64; words];
    }

    /// CPU ids simulated for statistics ([`HostSession::set_cpus`]).
    pub fn cpus(&self) -> u32 {
        self.stat_cpus
    }

    /// Per-CPU bytes of the program's statistics (`stp_prog.stat_bytes`).
    pub fn stat_bytes(&self) -> u32 {
        self.verified.prog().stat_bytes
    }

    /// Whether some handler ran `exit()`.
    pub fn exit_requested(&self) -> bool {
        self.exit_requested
    }

    /// Records the ring dropped.
    pub fn dropped(&self) -> u64 {
        self.ring.dropped()
    }

    /// The session's ring.
    pub fn ring_mut(&mut self) -> &mut HostRing {
        &mut self.ring
    }

    /// The VM's level-0 registers (the probe handler's files, not a
    /// function frame's) as the last run left them: `STP_MAX_REGS`
    /// integers and `STP_MAX_SREGS` strings. Only what that run wrote is
    /// meaningful; registers are not cleared between runs.
    pub fn registers(&self) -> (Vec<u64>, Vec<Vec<u8>>) {
        let cap = self.vm.str_cap as usize;
        let s = (0..abi::STP_MAX_SREGS as usize)
            .map(|i| {
                let n = (self.vm.slen[i] as usize).min(cap);
                let at = i * (cap + 1);
                self._sbuf
                    .get(at..at + n)
                    .map_or_else(Vec::new, <[u8]>::to_vec)
            })
            .collect();
        (self.vm.r.to_vec(), s)
    }
}
