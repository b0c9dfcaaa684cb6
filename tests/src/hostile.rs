//! The images of the guest's `hostile-images` case (see
//! `src/bin/gen-hostile.rs`): valid programs made by hand; hostile images,
//! each a valid image with one thing broken, in the program (bad code, bad
//! descriptors) or in the bytes (header, sections, limits), with the
//! verifier error it must be refused with; and seeded mutations of valid
//! images (`vm_testkit::mutate`), each with the verdict of the C verifier
//! built for user space (`vm_spec::core`, the code stapvm.ko runs): refused
//! with that code and message, which the guest must see again through the
//! ioctl, or accepted (then the guest runs it for a moment).
use vm_spec::abi::*;
use vm_spec::image;
use vm_spec::program::*;

use vm_testkit::layout::{
    get32 as get_u32, put16 as put_u16, put32 as put_u32, sec_desc, section as sec, HDR_SIZE,
    OFF_CHECKSUM, OFF_FLAGS, OFF_HDR_SIZE, OFF_LIMITS, OFF_NGLOBALS, OFF_TOTAL, OFF_VERSION,
};

fn i(op: stp_opcode, a: u8, b: u8, c: u8, imm: i32) -> Insn {
    Insn::new(op, a, b, c, imm)
}

fn handler(ctx: stp_ctx, nregs: u8, nsregs: u8, code: Vec<Insn>) -> Handler {
    Handler {
        ctx: ctx as u8,
        nregs,
        nsregs,
        locs: vec![SrcLoc::default(); code.len()],
        code,
        probe_point: String::new(),
    }
}

fn probe(kind: stp_probe_kind, handler: u32, target: ProbeTarget, period_ns: u64) -> Probe {
    Probe {
        kind: kind as u8,
        flags: 0,
        handler,
        target,
        maxactive: 0,
        period_ns,
        randomize: 0,
        perf: None,
        watch: None,
        netfilter: None,
        uprobe: None,
        display: String::new(),
    }
}

fn sym(name: &str) -> ProbeTarget {
    ProbeTarget::Symbol {
        name: name.into(),
        offset: 0,
    }
}

/// `global n; probe timer.ms(100) { n++; printf("tick %d\n", n); if (n == 5) exit() }
/// probe end { printf("end\n") }`, by hand.
pub fn timer_prog() -> Program {
    Program {
        source_name: "gen-hostile".into(),
        limits: default_limits(),
        globals: vec![Global {
            name: "n".into(),
            ty: GlobalType::Long,
            print_at_exit: false,
        }],
        formats: vec![
            Format {
                text: "tick %d\n".into(),
                args: vec![ArgKind::Int],
            },
            Format {
                text: "end\n".into(),
                args: vec![],
            },
        ],
        handlers: vec![
            handler(
                STP_CTX_TIMER,
                3,
                0,
                vec![
                    i(STP_OP_LDI, 1, 0, 0, 1),
                    i(STP_OP_GADD, 0, 1, 0, 0),
                    i(STP_OP_PRINTF, 0, 0, 0, 0),
                    i(STP_OP_LDI, 2, 0, 0, 5),
                    i(STP_OP_EQ, 1, 0, 2, 0),
                    i(STP_OP_JZ, 1, 0, 0, 1),
                    i(STP_OP_EXIT, 0, 0, 0, 0),
                    i(STP_OP_RET, 0, 0, 0, 0),
                ],
            ),
            handler(
                STP_CTX_END,
                0,
                0,
                vec![i(STP_OP_PRINTF, 0, 0, 0, 1), i(STP_OP_RET, 0, 0, 0, 0)],
            ),
        ],
        probes: vec![
            probe(STP_PROBE_TIMER, 0, ProbeTarget::None, 100_000_000),
            probe(STP_PROBE_END, 1, ProbeTarget::None, 0),
        ],
        ..Default::default()
    }
}

/// A kprobe (or kretprobe) on `symbol` printing execname() and pid() (or
/// the return value).
pub fn kprobe_prog(kind: stp_probe_kind, symbol: &str) -> Program {
    let (ctx, helper) = if kind == STP_PROBE_KRETPROBE {
        (STP_CTX_KRETPROBE, STP_HLP_RETVAL)
    } else {
        (STP_CTX_KPROBE, STP_HLP_PID)
    };
    Program {
        source_name: "gen-hostile".into(),
        limits: default_limits(),
        formats: vec![Format {
            text: "%s %d\n".into(),
            args: vec![ArgKind::Str, ArgKind::Int],
        }],
        handlers: vec![handler(
            ctx,
            1,
            1,
            vec![
                i(STP_OP_CALLS, 0, 0, 0, STP_HLP_EXECNAME as i32),
                i(STP_OP_CALLI, 0, 0, 0, helper as i32),
                i(STP_OP_PRINTF, 0, 0, 0, 0),
                i(STP_OP_RET, 0, 0, 0, 0),
            ],
        )],
        probes: vec![probe(kind, 0, sym(symbol), 0)],
        ..Default::default()
    }
}

/// The timer program whose tick divides by zero: the first tick is a
/// run-time error, which (MAXERRORS is 0) puts the session in the error
/// state, so the `end` probe must not run.
pub fn divzero_prog() -> Program {
    let mut p = timer_prog();
    p.handlers[0] = handler(
        STP_CTX_TIMER,
        3,
        0,
        vec![
            i(STP_OP_LDI, 0, 0, 0, 1),
            i(STP_OP_LDI, 1, 0, 0, 0),
            i(STP_OP_DIV, 2, 0, 1, 0),
            i(STP_OP_RET, 0, 0, 0, 0),
        ],
    );
    p
}

/// The valid images of the guest's ioctl cases, by file stem:
/// `valid-timer` (a `timer.ms(100)` that prints and exits at 5, plus an
/// `end` probe), `valid-kprobe` and `valid-kretprobe` (on
/// `__x64_sys_getppid`), `valid-nosym` (a kprobe on a symbol no kernel
/// has: LOAD accepts it, START fails), `valid-timer-huge` (the timer with
/// the longest period the verifier allows, which must not fire during a
/// test) and `valid-divzero` (`divzero_prog`).
pub fn valid_images() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("valid-timer", build(&timer_prog())),
        (
            "valid-kprobe",
            build(&kprobe_prog(STP_PROBE_KPROBE, "__x64_sys_getppid")),
        ),
        (
            "valid-kretprobe",
            build(&kprobe_prog(STP_PROBE_KRETPROBE, "__x64_sys_getppid")),
        ),
        (
            "valid-nosym",
            build(&kprobe_prog(STP_PROBE_KPROBE, "stapvm_no_such_symbol")),
        ),
        ("valid-timer-huge", {
            let mut p = timer_prog();
            p.probes[0].period_ns = STP_MAX_TIMER_NS;
            build(&p)
        }),
        ("valid-divzero", build(&divzero_prog())),
        ("valid-pretty", build(&pretty_prog(1))),
        ("valid-procfs", build(&procfs_prog())),
        ("valid-netfilter", build(&netfilter_prog())),
    ]
}

/// `probe netfilter.hook("NF_INET_LOCAL_IN").pf("NFPROTO_IPV4")
/// { $verdict = $hooknum - 1 }` by hand (the hook's number 1 makes it
/// NF_DROP), plus the timer program's end probe: LOAD accepts it.
pub fn netfilter_prog() -> Program {
    let mut p = timer_prog();
    p.handlers[0] = handler(
        STP_CTX_NETFILTER,
        2,
        0,
        vec![
            i(STP_OP_LDI, 0, 0, 0, 0),
            i(STP_OP_CALLI, 0, 0, 0, STP_HLP_ARG as i32),
            i(STP_OP_LDI, 1, 0, 0, 1),
            i(STP_OP_SUB, 0, 0, 1, 0),
            i(STP_OP_CALLI, 1, 0, 0, STP_HLP_VERDICT_SET as i32),
            i(STP_OP_RET, 0, 0, 0, 0),
        ],
    );
    let q = &mut p.probes[0];
    q.kind = STP_PROBE_NETFILTER as u8;
    q.period_ns = 0;
    q.netfilter = Some(NfHook {
        pf: STP_NFPROTO_IPV4,
        hook: 1,
        priority: 0,
    });
    p
}

/// A kprobe on getppid printing `current`'s first bytes with PRETTY
/// (`$$` when `imm` is 1) through type nodes: node 3, a struct of an
/// unsigned int (0), a pointer (1) and an 8-byte char array (2); then the
/// same nodes at address 16 (a fault: "ERROR").
pub fn pretty_prog(imm: i32) -> Program {
    let n = |name: u32, offset: u32, kind: u32, size: u8| PrettyNode {
        name,
        offset,
        first: 0,
        count: 0,
        kind: kind as u8,
        size,
        bit_off: 0,
        bit_size: 0,
    };
    let mut p = kprobe_prog(STP_PROBE_KPROBE, "__x64_sys_getppid");
    p.strings = vec![b"a".to_vec(), b"p".to_vec(), b"c".to_vec()];
    p.pretty = vec![
        n(0, 0, STP_PK_UNSIGNED, 4),
        n(1, 8, STP_PK_POINTER, 0),
        n(2, 16, STP_PK_CHARS, 0),
        PrettyNode {
            count: 3,
            ..n(STP_PRETTY_NAME_NONE, 0, STP_PK_STRUCT, 0)
        },
    ];
    p.konsts = vec![3, 16];
    p.formats = vec![Format {
        text: "%s\n".into(),
        args: vec![ArgKind::Str],
    }];
    p.handlers[0].nregs = 2;
    p.handlers[0].code = vec![
        i(STP_OP_CALLI, 0, 0, 0, STP_HLP_TASK_CURRENT as i32),
        i(STP_OP_LDK, 1, 0, 0, 0),
        i(STP_OP_PRETTY, 0, 0, 1, imm),
        i(STP_OP_PRINTF, 0, 0, 0, 0),
        i(STP_OP_LDK, 0, 0, 0, 1),
        i(STP_OP_PRETTY, 0, 0, 1, imm),
        i(STP_OP_PRINTF, 0, 0, 0, 0),
        i(STP_OP_RET, 0, 0, 0, 0),
    ];
    p
}

/// `pretty_prog` with its nodes changed by `f`.
fn prog_pretty(f: impl FnOnce(&mut Program)) -> Vec<u8> {
    let mut p = pretty_prog(0);
    f(&mut p);
    build(&p)
}

/// The stand-in image of a program (`StandIns::Named`: each symbolic
/// target resolved to itself).
pub fn build(prog: &Program) -> Vec<u8> {
    // Not build_stand_in: it would give a perf .process probe a pid.
    let syms = image::stand_in_symbols(prog, image::StandIns::Named);
    image::build(prog, &syms).expect("image::build")
}

fn set_sec(img: &mut [u8], s: stp_section, off: u32, size: u32) {
    let o = sec_desc(s);
    put_u32(img, o, off);
    put_u32(img, o + 4, size);
}

fn set_limit(img: &mut [u8], l: stp_limit, v: u32) {
    put_u32(img, OFF_LIMITS + 4 * l as usize, v);
}

/// Byte mutation of the valid timer image (`hostile` reseals it).
fn patched(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut img = build(&timer_prog());
    f(&mut img);
    img
}

/// Program mutation of the valid timer image.
fn prog_timer(f: impl FnOnce(&mut Program)) -> Vec<u8> {
    let mut p = timer_prog();
    f(&mut p);
    build(&p)
}

/// Program mutation of the valid kprobe image.
fn prog_kprobe(f: impl FnOnce(&mut Program)) -> Vec<u8> {
    let mut p = kprobe_prog(STP_PROBE_KPROBE, "__x64_sys_getppid");
    f(&mut p);
    build(&p)
}

/// The name of an errno of `STP_VERIFY_ERRORS`.
pub fn errno_name(errno: i32) -> &'static str {
    match errno {
        7 => "E2BIG",
        8 => "ENOEXEC",
        12 => "ENOMEM",
        22 => "EINVAL",
        34 => "ERANGE",
        71 => "EPROTO",
        74 => "EBADMSG",
        _ => "E?",
    }
}

/// One hostile image and how it must be refused.
pub struct Hostile {
    /// File name stem.
    pub name: String,
    /// The verifier error (`abi::STP_VERR_*`); its errno comes from
    /// `STP_VERIFY_ERRORS`.
    pub code: stp_verify_error,
    /// A piece of the LOAD log that names the problem.
    pub fragment: String,
    /// The image bytes.
    pub image: Vec<u8>,
}

/// Every hostile image with the error it must be refused with.
pub fn hostile() -> Vec<Hostile> {
    let ret = i(STP_OP_RET, 0, 0, 0, 0);
    let mut v: Vec<(&'static str, stp_verify_error, &'static str, Vec<u8>)> = Vec::new();

    // Header and size.
    v.push(("empty", STP_VERR_TRUNCATED, "header alone", Vec::new()));
    v.push((
        "truncated",
        STP_VERR_TRUNCATED,
        "header alone",
        patched(|img| img.truncate(HDR_SIZE / 2)),
    ));
    v.push((
        "bad-magic",
        STP_VERR_BAD_MAGIC,
        "bad magic",
        patched(|img| img[0] ^= 0xff),
    ));
    v.push((
        "bad-version",
        STP_VERR_BAD_VERSION,
        "version 99",
        patched(|img| put_u16(img, OFF_VERSION, 99)),
    ));
    v.push((
        "bad-hdr-size",
        STP_VERR_BAD_HEADER,
        "header size",
        patched(|img| put_u16(img, OFF_HDR_SIZE, (HDR_SIZE - 8) as u16)),
    ));
    v.push((
        "bad-flags",
        STP_VERR_BAD_HEADER,
        "flags 0x1",
        patched(|img| put_u32(img, OFF_FLAGS, 1)),
    ));
    v.push((
        "bad-checksum",
        STP_VERR_BAD_CHECKSUM,
        "corrupt image (checksum)",
        patched(|img| {
            let sum = get_u32(img, OFF_CHECKSUM);
            put_u32(img, OFF_CHECKSUM, sum ^ 0x100);
        }),
    ));
    v.push((
        "corrupt-code-byte",
        STP_VERR_BAD_CHECKSUM,
        "corrupt image (checksum)",
        patched(|img| {
            let (off, _) = sec(img, STP_SEC_CODE);
            img[off + 4] ^= 0x40;
        }),
    ));
    v.push((
        "corrupt-last-byte",
        STP_VERR_BAD_CHECKSUM,
        "corrupt image (checksum)",
        patched(|img| {
            if let Some(b) = img.last_mut() {
                *b ^= 1;
            }
        }),
    ));
    v.push((
        "bad-total-size",
        STP_VERR_BAD_SIZE,
        "header says",
        patched(|img| {
            let t = get_u32(img, OFF_TOTAL);
            put_u32(img, OFF_TOTAL, t + 8);
        }),
    ));
    v.push((
        "oversized",
        STP_VERR_TOO_BIG,
        "the cap is",
        patched(|img| {
            let n = STP_MAX_IMAGE_SIZE as usize + 8;
            img.resize(n, 0);
            put_u32(img, OFF_TOTAL, n as u32);
        }),
    ));

    // Sections.
    v.push((
        "section-outside",
        STP_VERR_BAD_SECTION,
        "outside",
        patched(|img| {
            let total = img.len() as u32;
            let (_, size) = sec(img, STP_SEC_CODE);
            set_sec(img, STP_SEC_CODE, total - 8, size as u32);
        }),
    ));
    v.push((
        "section-overlap",
        STP_VERR_BAD_SECTION,
        "overlaps",
        patched(|img| {
            let (code_off, _) = sec(img, STP_SEC_CODE);
            let (_, hsize) = sec(img, STP_SEC_HANDLERS);
            set_sec(img, STP_SEC_HANDLERS, code_off as u32, hsize as u32);
        }),
    ));
    v.push((
        "section-misaligned",
        STP_VERR_BAD_SECTION,
        "not 8-byte aligned",
        patched(|img| {
            let (off, size) = sec(img, STP_SEC_KONSTS);
            set_sec(img, STP_SEC_KONSTS, off as u32 + 4, size as u32);
        }),
    ));
    v.push((
        "section-in-header",
        STP_VERR_BAD_SECTION,
        "outside",
        patched(|img| {
            let (_, size) = sec(img, STP_SEC_CODE);
            set_sec(img, STP_SEC_CODE, 8, size as u32);
        }),
    ));
    v.push((
        "section-ragged",
        STP_VERR_BAD_SECTION,
        "not a multiple of 8",
        patched(|img| {
            let (off, size) = sec(img, STP_SEC_CODE);
            set_sec(img, STP_SEC_CODE, off as u32, size as u32 - 4);
        }),
    ));

    // Limits and counts.
    v.push((
        "limit-too-small",
        STP_VERR_BAD_LIMIT,
        "MAXSTRINGLEN",
        patched(|img| set_limit(img, STP_LIM_MAXSTRINGLEN, 8)),
    ));
    v.push((
        "limit-too-large",
        STP_VERR_BAD_LIMIT,
        "MAXACTION",
        patched(|img| set_limit(img, STP_LIM_MAXACTION, 2_000_000_000)),
    ));
    v.push((
        "ring-pages-not-pow2",
        STP_VERR_BAD_LIMIT,
        "power of two",
        patched(|img| set_limit(img, STP_LIM_RING_PAGES, 6)),
    ));
    v.push((
        "overload-threshold-above-interval",
        STP_VERR_BAD_LIMIT,
        "is above STP_OVERLOAD_INTERVAL",
        patched(|img| set_limit(img, STP_LIM_STP_OVERLOAD_THRESHOLD, 2_000_000_000)),
    ));
    v.push((
        "too-many-globals",
        STP_VERR_TOO_MANY,
        "nglobals",
        patched(|img| put_u32(img, OFF_NGLOBALS, STP_MAX_GLOBALS + 1)),
    ));

    // Handler descriptors.
    v.push((
        "handler-outside-code",
        STP_VERR_BAD_HANDLER,
        "outside CODE",
        patched(|img| {
            let (off, _) = sec(img, STP_SEC_HANDLERS);
            put_u32(img, off, 1000);
        }),
    ));
    v.push((
        "handler-empty",
        STP_VERR_BAD_HANDLER,
        "empty",
        patched(|img| {
            let (off, _) = sec(img, STP_SEC_HANDLERS);
            put_u32(img, off + 4, 0);
        }),
    ));
    v.push((
        "handler-too-many-regs",
        STP_VERR_BAD_HANDLER,
        "registers",
        prog_timer(|p| p.handlers[0].nregs = STP_MAX_REGS as u8 + 1),
    ));
    v.push((
        "handler-bad-ctx",
        STP_VERR_BAD_HANDLER,
        "context",
        prog_timer(|p| p.handlers[0].ctx = STP_CTX__ALL as u8),
    ));

    // Probe descriptors.
    v.push((
        "probe-bad-handler",
        STP_VERR_BAD_PROBE,
        "handler 9",
        prog_timer(|p| p.probes[0].handler = 9),
    ));
    v.push((
        "probe-bad-kind",
        STP_VERR_BAD_PROBE,
        "kind",
        prog_timer(|p| p.probes[0].kind = 9),
    ));
    v.push((
        "probe-bad-flags",
        STP_VERR_BAD_PROBE,
        "flags",
        prog_timer(|p| p.probes[0].flags = 0x20),
    ));
    v.push((
        "probe-ctx-mismatch",
        STP_VERR_BAD_PROBE,
        "context",
        prog_timer(|p| p.probes[0].handler = 1),
    ));
    v.push((
        "timer-too-fast",
        STP_VERR_BAD_PROBE,
        "period",
        prog_timer(|p| p.probes[0].period_ns = 1000),
    ));
    v.push((
        "timer-jiffies-zero",
        STP_VERR_BAD_PROBE,
        "timer period 0 jiffies is outside [1, 1000000]",
        prog_timer(|p| {
            p.probes[0].flags = STP_PROBE_F_JIFFIES as u8;
            p.probes[0].period_ns = 0;
        }),
    ));
    v.push((
        "timer-jiffies-too-many",
        STP_VERR_BAD_PROBE,
        "jiffies is outside [1, 1000000]",
        prog_timer(|p| {
            p.probes[0].flags = STP_PROBE_F_JIFFIES as u8;
            p.probes[0].period_ns = u64::from(STP_MAX_TIMER_JIFFIES) + 1;
        }),
    ));
    v.push((
        "timer-jiffies-huge",
        STP_VERR_BAD_PROBE,
        "jiffies is outside",
        prog_timer(|p| {
            p.probes[0].flags = STP_PROBE_F_JIFFIES as u8;
            p.probes[0].period_ns = u64::MAX;
        }),
    ));
    v.push((
        "jiffies-flag-on-kprobe",
        STP_VERR_BAD_PROBE,
        "the jiffies flag is only for timers",
        prog_kprobe(|p| p.probes[0].flags = STP_PROBE_F_JIFFIES as u8),
    ));
    v.push((
        "jiffies-flag-with-profile",
        STP_VERR_BAD_PROBE,
        "without the profile flag",
        prog_timer(|p| {
            p.probes[0].flags = (STP_PROBE_F_JIFFIES | STP_PROBE_F_PROFILE) as u8;
            p.probes[0].period_ns = 5;
        }),
    ));
    v.push((
        "timer-randomize-above-period",
        STP_VERR_BAD_PROBE,
        "is above the timer period",
        prog_timer(|p| p.probes[0].randomize = p.probes[0].period_ns + 1),
    ));
    v.push((
        "timer-randomize-huge",
        STP_VERR_BAD_PROBE,
        "is above the timer period",
        prog_timer(|p| p.probes[0].randomize = u64::MAX),
    ));
    // PERF probes: the timer probe made a perf.sw.page_faults.sample(1)
    // (its handler's context, TIMER, is a perf probe's), then broken.
    let perf = |f: fn(&mut Probe)| {
        prog_timer(|p| {
            let q = &mut p.probes[0];
            q.kind = STP_PROBE_PERF as u8;
            q.period_ns = 1;
            q.perf = Some(PerfEvent {
                event_type: STP_PERF_TYPE_SOFTWARE,
                config: 2,
                pid: 0,
            });
            f(q);
        })
    };
    fn set(q: &mut Probe, event_type: u32, config: u64, pid: i32) {
        q.perf = Some(PerfEvent {
            event_type,
            config,
            pid,
        });
    }
    v.push((
        "perf-bad-type",
        STP_VERR_BAD_PROBE,
        "perf event type 2 is not one of",
        perf(|q| set(q, 2, 1, 0)),
    ));
    v.push((
        "perf-type-huge",
        STP_VERR_BAD_PROBE,
        "perf event type 4294967295 is not one of",
        perf(|q| set(q, u32::MAX, 0, 0)),
    ));
    v.push((
        "perf-bad-sw-config",
        STP_VERR_BAD_PROBE,
        "perf event config 0x9 is not an event of type 1",
        perf(|q| set(q, STP_PERF_TYPE_SOFTWARE, 9, 0)),
    ));
    v.push((
        "perf-bad-hw-config",
        STP_VERR_BAD_PROBE,
        "is not an event of type 0",
        perf(|q| set(q, STP_PERF_TYPE_HARDWARE, u64::MAX, 0)),
    ));
    v.push((
        "perf-bad-cache-config",
        STP_VERR_BAD_PROBE,
        "is not an event of type 3",
        perf(|q| set(q, STP_PERF_TYPE_HW_CACHE, 7, 0)),
    ));
    v.push((
        "perf-period-zero",
        STP_VERR_BAD_PROBE,
        "perf sample period 0 is outside",
        perf(|q| q.period_ns = 0),
    ));
    v.push((
        "perf-period-huge",
        STP_VERR_BAD_PROBE,
        "perf sample period 18446744073709551615 is outside",
        perf(|q| q.period_ns = u64::MAX),
    ));
    v.push((
        "perf-clock-period-tiny",
        STP_VERR_BAD_PROBE,
        "perf clock sample period 10 ns is outside",
        perf(|q| {
            set(q, STP_PERF_TYPE_SOFTWARE, 0, 0);
            q.period_ns = 10;
        }),
    ));
    v.push((
        "perf-pid-without-flag",
        STP_VERR_BAD_PROBE,
        "perf pid 5 without the process flag",
        perf(|q| set(q, STP_PERF_TYPE_SOFTWARE, 2, 5)),
    ));
    v.push((
        "perf-flag-without-pid",
        STP_VERR_BAD_PROBE,
        "perf pid 0 without the process flag, or not > 0 with it",
        perf(|q| q.flags = STP_PROBE_F_PERF_TASK as u8),
    ));
    v.push((
        "perf-negative-pid",
        STP_VERR_BAD_PROBE,
        "perf pid -1 without",
        perf(|q| {
            q.flags = STP_PROBE_F_PERF_TASK as u8;
            set(q, STP_PERF_TYPE_SOFTWARE, 2, -1);
        }),
    ));
    v.push((
        "perf-fields-on-kprobe",
        STP_VERR_BAD_PROBE,
        "perf event fields set on a probe that is not a perf probe",
        prog_kprobe(|p| {
            p.probes[0].perf = Some(PerfEvent {
                event_type: STP_PERF_TYPE_SOFTWARE,
                config: 2,
                pid: 0,
            })
        }),
    ));
    v.push((
        "perf-task-flag-on-timer",
        STP_VERR_BAD_PROBE,
        "perf event fields set on a probe that is not a perf probe",
        prog_timer(|p| p.probes[0].flags = STP_PROBE_F_PERF_TASK as u8),
    ));
    v.push((
        "perf-profile-flag",
        STP_VERR_BAD_PROBE,
        "the profile flag is only for timers",
        perf(|q| q.flags = STP_PROBE_F_PROFILE as u8),
    ));
    // WATCH probes: the timer probe made a 4-byte write watchpoint, then
    // broken.
    let watch = |f: fn(&mut Probe)| {
        prog_timer(|p| {
            let q = &mut p.probes[0];
            q.kind = STP_PROBE_WATCH as u8;
            q.period_ns = 0;
            q.watch = Some(Watch {
                address: 0xffff_ffff_8200_0000,
                len: 4,
                rw: false,
            });
            f(q);
        })
    };
    fn w(q: &mut Probe) -> &mut Watch {
        q.watch.as_mut().expect("a watchpoint")
    }
    v.push((
        "watch-length-3",
        STP_VERR_BAD_PROBE,
        "watchpoint length 3 is not 1, 2, 4 or 8",
        watch(|q| w(q).len = 3),
    ));
    v.push((
        "watch-length-0",
        STP_VERR_BAD_PROBE,
        "watchpoint length 0 is not 1, 2, 4 or 8",
        watch(|q| w(q).len = 0),
    ));
    v.push((
        "watch-length-huge",
        STP_VERR_BAD_PROBE,
        "watchpoint length 4294967295 is not",
        watch(|q| w(q).len = u32::MAX),
    ));
    v.push((
        "watch-address-zero",
        STP_VERR_BAD_PROBE,
        "watchpoint address 0x0 is 0 or not aligned",
        watch(|q| w(q).address = 0),
    ));
    v.push((
        "watch-unaligned",
        STP_VERR_BAD_PROBE,
        "not aligned to its length 4",
        watch(|q| w(q).address = 0xffff_ffff_8200_0002),
    ));
    v.push((
        "watch-with-period",
        STP_VERR_BAD_PROBE,
        "a period, pid or process flag on a watchpoint",
        watch(|q| q.period_ns = 1_000_000),
    ));
    v.push((
        "watch-with-process-flag",
        STP_VERR_BAD_PROBE,
        "a period, pid or process flag on a watchpoint",
        watch(|q| q.flags = STP_PROBE_F_PERF_TASK as u8),
    ));
    // Netfilter hooks (abi.h: netfilter hooks).
    let nf = |f: fn(&mut Program)| {
        let mut p = netfilter_prog();
        f(&mut p);
        build(&p)
    };
    fn h(p: &mut Program) -> &mut NfHook {
        p.probes[0].netfilter.as_mut().expect("a netfilter hook")
    }
    v.push((
        "netfilter-hook-out-of-range",
        STP_VERR_BAD_PROBE,
        "netfilter hook 5 is out of range: protocol family 2 has hooks 0 to 4",
        nf(|p| h(p).hook = 5),
    ));
    v.push((
        "netfilter-arp-hook-out-of-range",
        STP_VERR_BAD_PROBE,
        "netfilter hook 3 is out of range: protocol family 3 has hooks 0 to 2",
        nf(|p| {
            h(p).pf = STP_NFPROTO_ARP;
            h(p).hook = 3;
        }),
    ));
    v.push((
        "netfilter-hook-huge",
        STP_VERR_BAD_PROBE,
        "netfilter hook 4294967295 is out of range",
        nf(|p| h(p).hook = u32::MAX),
    ));
    v.push((
        "netfilter-bad-pf",
        STP_VERR_BAD_PROBE,
        "netfilter protocol family 1 is not IPv4 (2), IPv6 (10), ARP (3) or bridge (7)",
        nf(|p| h(p).pf = 1),
    ));
    v.push((
        "netfilter-pf-huge",
        STP_VERR_BAD_PROBE,
        "netfilter protocol family 4294967295 is not",
        nf(|p| h(p).pf = u32::MAX),
    ));
    v.push((
        "netfilter-with-period",
        STP_VERR_BAD_PROBE,
        "a length, period or flag other than optional on a netfilter probe",
        nf(|p| p.probes[0].period_ns = 1_000_000),
    ));
    v.push((
        "netfilter-with-process-flag",
        STP_VERR_BAD_PROBE,
        "a length, period or flag other than optional on a netfilter probe",
        nf(|p| p.probes[0].flags = STP_PROBE_F_PERF_TASK as u8),
    ));
    v.push((
        "netfilter-with-offset",
        STP_VERR_BAD_PROBE,
        "symbol, offset or maxactive set on a probe that is not a kprobe",
        nf(|p| {
            p.probes[0].target = ProbeTarget::File {
                name: "ip_rcv".into(),
                mode: 4,
            }
        }),
    ));
    v.push((
        "netfilter-timer-context",
        STP_VERR_BAD_PROBE,
        "needs a handler of context",
        nf(|p| p.handlers[0].ctx = STP_CTX_TIMER as u8),
    ));
    v.push((
        "netfilter-fields-on-kprobe",
        STP_VERR_BAD_PROBE,
        "perf event fields set on a probe that is not a perf probe",
        prog_kprobe(|p| {
            p.probes[0].netfilter = Some(NfHook {
                pf: STP_NFPROTO_IPV4,
                hook: 1,
                priority: 0,
            })
        }),
    ));
    v.push((
        "verdict-in-kprobe",
        STP_VERR_BAD_CONTEXT,
        "helper VERDICT not allowed",
        prog_kprobe(|p| p.handlers[0].code[1].imm = STP_HLP_VERDICT as i32),
    ));
    v.push((
        "randomize-on-kprobe",
        STP_VERR_BAD_PROBE,
        "randomize is only for timers",
        prog_kprobe(|p| p.probes[0].randomize = 1),
    ));
    v.push((
        "randomize-with-profile",
        STP_VERR_BAD_PROBE,
        "without the profile flag",
        prog_timer(|p| {
            p.probes[0].flags = STP_PROBE_F_PROFILE as u8;
            p.probes[0].randomize = 1;
        }),
    ));
    v.push((
        "probe-symbol-too-long",
        STP_VERR_BAD_PROBE,
        "symbol",
        prog_kprobe(|p| p.probes[0].target = sym(&"x".repeat(200))),
    ));
    v.push((
        "probe-symbol-nul",
        STP_VERR_BAD_STRING,
        "NUL",
        prog_kprobe(|p| p.probes[0].target = sym("vfs_read\0evil")),
    ));
    v.push((
        "string-outside-strdata",
        STP_VERR_BAD_STRING,
        "outside STRDATA",
        {
            let mut img = build(&kprobe_prog(STP_PROBE_KPROBE, "__x64_sys_getppid"));
            let (off, _) = sec(&img, STP_SEC_STRS);
            put_u32(&mut img, off + 4, 100_000);
            img
        },
    ));

    // Formats.
    v.push((
        "format-too-many-args",
        STP_VERR_BAD_FORMAT,
        "arguments",
        prog_timer(|p| p.formats[1].args = vec![ArgKind::Int; STP_MAX_FMT_ARGS as usize + 1]),
    ));
    v.push((
        "format-stray-bits",
        STP_VERR_BAD_FORMAT,
        "mask",
        patched(|img| {
            let (off, _) = sec(img, STP_SEC_FORMATS);
            put_u32(img, off + 4, 0b10);
        }),
    ));

    // Code.
    v.push((
        "unknown-opcode",
        STP_VERR_BAD_OPCODE,
        "unknown opcode",
        prog_timer(|p| p.handlers[0].code[0].op = 0xff),
    ));
    v.push((
        "unused-operand",
        STP_VERR_BAD_OPERAND,
        "unused operand",
        prog_timer(|p| p.handlers[0].code[0] = i(STP_OP_NOP, 1, 0, 0, 0)),
    ));
    v.push((
        "register-out-of-range",
        STP_VERR_BAD_REGISTER,
        "r70",
        prog_timer(|p| p.handlers[0].code[0] = i(STP_OP_LDI, 70, 0, 0, 1)),
    ));
    v.push((
        "register-above-nregs",
        STP_VERR_BAD_REGISTER,
        "r3,",
        prog_timer(|p| p.handlers[0].code[0] = i(STP_OP_LDI, 3, 0, 0, 1)),
    ));
    v.push((
        "string-register-out-of-range",
        STP_VERR_BAD_REGISTER,
        "s16",
        prog_kprobe(|p| p.handlers[0].code[0] = i(STP_OP_CALLS, 16, 0, 0, STP_HLP_EXECNAME as i32)),
    ));
    v.push((
        // The format takes a string; the handler has no string register.
        "printf-string-kind-mismatch",
        STP_VERR_BAD_REGISTER,
        "string registers",
        prog_kprobe(|p| {
            p.handlers[0].nsregs = 0;
            p.handlers[0].code[0] = i(STP_OP_NOP, 0, 0, 0, 0);
        }),
    ));
    v.push((
        "printf-run-out-of-range",
        STP_VERR_BAD_REGISTER,
        "r3..r3",
        prog_timer(|p| p.handlers[0].code[2] = i(STP_OP_PRINTF, 0, 3, 0, 0)),
    ));
    v.push((
        "uninit-register",
        STP_VERR_UNINIT_REGISTER,
        "r1 read before it is written",
        prog_timer(|p| p.handlers[0].code[0] = i(STP_OP_NOP, 0, 0, 0, 0)),
    ));
    v.push((
        // r2 is written on one path only, then read after the join.
        "uninit-on-one-path",
        STP_VERR_UNINIT_REGISTER,
        "r2 read before it is written",
        prog_timer(|p| {
            p.handlers[0].code = vec![
                i(STP_OP_LDI, 0, 0, 0, 1),
                i(STP_OP_JZ, 0, 0, 0, 1),
                i(STP_OP_LDI, 2, 0, 0, 5),
                i(STP_OP_MOV, 1, 2, 0, 0),
                ret,
            ]
        }),
    ));
    v.push((
        "jump-out-of-range",
        STP_VERR_BAD_JUMP,
        "jump",
        prog_timer(|p| p.handlers[0].code[5].imm = 100),
    ));
    v.push((
        "jump-backward",
        STP_VERR_BAD_JUMP,
        "jump",
        prog_timer(|p| p.handlers[0].code[5].imm = -3),
    ));
    v.push((
        "loop-forward",
        STP_VERR_BAD_JUMP,
        "backward jump",
        prog_timer(|p| p.handlers[0].code[6] = i(STP_OP_LOOP, 0, 0, 0, 0)),
    ));
    v.push((
        "jump-into-next-handler",
        STP_VERR_BAD_JUMP,
        "jump",
        prog_timer(|p| p.handlers[0].code[5].imm = 2),
    ));
    v.push((
        "no-ret",
        STP_VERR_NO_RET,
        "not RET",
        prog_timer(|p| {
            let last = p.handlers[1].code.len() - 1;
            p.handlers[1].code[last] = i(STP_OP_NOP, 0, 0, 0, 0);
        }),
    ));
    v.push((
        "bad-konst-index",
        STP_VERR_BAD_INDEX,
        "constant index",
        prog_timer(|p| p.handlers[0].code[3] = i(STP_OP_LDK, 2, 0, 0, 7)),
    ));
    v.push((
        "bad-global-index",
        STP_VERR_BAD_INDEX,
        "global index",
        prog_timer(|p| p.handlers[0].code[1].imm = 3),
    ));
    v.push((
        "bad-format-index",
        STP_VERR_BAD_INDEX,
        "format index",
        prog_timer(|p| p.handlers[0].code[2].imm = 9),
    ));
    v.push((
        "bad-helper-id",
        STP_VERR_BAD_INDEX,
        "helper index",
        prog_kprobe(|p| p.handlers[0].code[1].imm = 200),
    ));
    v.push((
        "retval-in-kprobe",
        STP_VERR_BAD_CONTEXT,
        "RETVAL",
        prog_kprobe(|p| p.handlers[0].code[1].imm = STP_HLP_RETVAL as i32),
    ));
    v.push((
        "arg-in-timer",
        STP_VERR_BAD_CONTEXT,
        "ARG",
        prog_timer(|p| p.handlers[0].code[3] = i(STP_OP_CALLI, 2, 1, 0, STP_HLP_ARG as i32)),
    ));
    more_attacks(&mut v);
    procfs_attacks(&mut v);
    uprobe_attacks(&mut v);
    process_attacks(&mut v);
    v.into_iter()
        .map(|(name, code, fragment, mut image)| {
            // Each image made right again where the checksum would
            // otherwise refuse it first, so that it reaches the check it
            // is about; the checksum's own cases stay as made.
            if code != STP_VERR_BAD_CHECKSUM {
                image::seal(&mut image);
            }
            Hostile {
                name: name.to_string(),
                code,
                fragment: fragment.to_string(),
                image,
            }
        })
        .collect()
}

type Attack = (&'static str, stp_verify_error, &'static str, Vec<u8>);

/// `global s; probe procfs("f").read { $value = "hi\n" }` and
/// `procfs("f").write { s = $value }` (minus the global), and an
/// `input.char` probe reading its `$value`, by hand: the file `f`, mode
/// 0666, 64 bytes.
pub fn procfs_prog() -> Program {
    let file = |name: &str| ProbeTarget::File {
        name: name.into(),
        mode: 0o666,
    };
    let mut rd = probe(STP_PROBE_PROCFS_READ, 0, file("f"), 0);
    rd.maxactive = 64;
    let mut wr = probe(STP_PROBE_PROCFS_WRITE, 1, file("f"), 0);
    wr.maxactive = 64;
    Program {
        source_name: "gen-hostile".into(),
        limits: default_limits(),
        strings: vec![b"hi\n".to_vec()],
        handlers: vec![
            handler(
                STP_CTX_PROCFS_READ,
                1,
                1,
                vec![
                    i(STP_OP_SLDK, 0, 0, 0, 0),
                    i(STP_OP_CALLI, 0, 0, 0, STP_HLP_VALUE_SET as i32),
                    i(STP_OP_RET, 0, 0, 0, 0),
                ],
            ),
            handler(
                STP_CTX_PROCFS_WRITE,
                0,
                1,
                vec![
                    i(STP_OP_CALLS, 0, 0, 0, STP_HLP_VALUE as i32),
                    i(STP_OP_RET, 0, 0, 0, 0),
                ],
            ),
        ],
        probes: vec![rd, wr, probe(STP_PROBE_INPUT_CHAR, 1, ProbeTarget::None, 0)],
        ..Default::default()
    }
}

/// Program mutation of the valid procfs image.
fn prog_procfs(f: impl FnOnce(&mut Program)) -> Vec<u8> {
    let mut p = procfs_prog();
    f(&mut p);
    build(&p)
}

/// A uprobe on `path` at file offset 0x1000 with an empty handler.
pub fn uprobe_prog(path: &str) -> Program {
    let mut up = probe(
        STP_PROBE_UPROBE,
        0,
        ProbeTarget::User {
            path: path.into(),
            library: None,
            site: vm_spec::program::UserSite::Address(0x1000),
        },
        0,
    );
    up.uprobe = Some(vm_spec::program::Uprobe {
        offset: 0x1000,
        ..Default::default()
    });
    Program {
        source_name: "gen-hostile".into(),
        limits: default_limits(),
        handlers: vec![handler(
            STP_CTX_UPROBE,
            0,
            0,
            vec![i(STP_OP_RET, 0, 0, 0, 0)],
        )],
        probes: vec![up],
        ..Default::default()
    }
}

fn prog_uprobe(f: impl FnOnce(&mut Program)) -> Vec<u8> {
    let mut p = uprobe_prog("/bin/true");
    f(&mut p);
    // Not the stand-in names: the path as given, absolute or not.
    let syms: Vec<Option<(String, u32)>> = p
        .probes
        .iter()
        .map(|q| match &q.target {
            ProbeTarget::User { path, .. } => Some((path.clone(), 0)),
            _ => None,
        })
        .collect();
    image::build(&p, &syms).expect("image::build")
}

/// A process.begin probe of every process with an empty handler.
pub fn process_prog() -> Program {
    let mut p = uprobe_prog("/bin/true");
    p.probes[0].kind = STP_PROBE_PROCESS as u8;
    p.probes[0].uprobe = None;
    p.probes[0].target = ProbeTarget::Process {
        path: String::new(),
        pid: 0,
        event: STP_PROC_BEGIN,
    };
    p.handlers[0].ctx = STP_CTX_TIMER as u8;
    p
}

/// Process events: an unknown event, a negative process, a relative
/// program, a symbol set.
fn process_attacks(v: &mut Vec<Attack>) {
    let with = |f: &dyn Fn(&mut Program)| {
        let mut p = process_prog();
        f(&mut p);
        build(&p)
    };
    let desc = std::mem::size_of::<stp_probe_desc>();
    // ev_config: bytes 40..48 of the descriptor, word 10.
    v.push((
        "process-event-unknown",
        STP_VERR_BAD_PROBE,
        "process event 4 is not one of the 4",
        entry_patched(with(&|_| {}), STP_SEC_PROBES, desc, 0, 10, 4),
    ));
    v.push((
        "process-negative-pid",
        STP_VERR_BAD_PROBE,
        "process -3 is negative",
        with(&|p| {
            p.probes[0].target = ProbeTarget::Process {
                path: String::new(),
                pid: -3,
                event: STP_PROC_END,
            }
        }),
    ));
    // The program "/x" made relative: the path's first byte patched.
    v.push((
        "process-program-relative",
        STP_VERR_BAD_PROBE,
        "uprobe path of 2 bytes, must be absolute",
        {
            let mut img = with(&|p| {
                p.probes[0].target = ProbeTarget::Process {
                    path: "/x".into(),
                    pid: 0,
                    event: STP_PROC_END,
                }
            });
            let at = img.windows(2).rposition(|w| w == b"/x").expect("the path");
            img[at] = b'x';
            img
        },
    ));
    // symbol (word 2) set on a process event.
    v.push((
        "process-symbol-set",
        STP_VERR_BAD_PROBE,
        "a process event uses only its event, process and program",
        entry_patched(with(&|_| {}), STP_SEC_PROBES, desc, 0, 2, 1),
    ));
}

/// uprobes: a relative path, a NUL in it, a negative process, fields of
/// other kinds set, RETVAL in an entry uprobe.
fn uprobe_attacks(v: &mut Vec<Attack>) {
    let path = |p: &str| ProbeTarget::User {
        path: p.into(),
        library: None,
        site: vm_spec::program::UserSite::Address(0x1000),
    };
    // STP_PROBE_F_UEXE: the program's path is checked as the file's is.
    let exe = |e: &'static str| {
        prog_uprobe(move |p| {
            if let Some(u) = p.probes[0].uprobe.as_mut() {
                u.exe = e.into();
            }
        })
    };
    v.push((
        "uprobe-exe-relative",
        STP_VERR_BAD_PROBE,
        "uprobe path of 8 bytes, must be absolute",
        exe("bin/true"),
    ));
    // ev_type (word 5 of the descriptor) past the strings.
    v.push((
        "uprobe-exe-past-strings",
        STP_VERR_BAD_PROBE,
        "probe 0 names string 65535 of",
        entry_patched(
            exe("/bin/true"),
            STP_SEC_PROBES,
            std::mem::size_of::<stp_probe_desc>(),
            0,
            5,
            0xffff,
        ),
    ));
    // The flag on a kprobe (flags: byte 1 of word 0).
    v.push((
        "uexe-on-kprobe",
        STP_VERR_BAD_PROBE,
        "the program flag is only for uprobes",
        entry_patched(
            build(&kprobe_prog(STP_PROBE_KPROBE, "vfs_read")),
            STP_SEC_PROBES,
            std::mem::size_of::<stp_probe_desc>(),
            0,
            0,
            STP_PROBE_KPROBE | (STP_PROBE_F_UEXE << 8),
        ),
    ));
    v.push((
        "uprobe-relative-path",
        STP_VERR_BAD_PROBE,
        "uprobe path of 8 bytes, must be absolute",
        prog_uprobe(|p| p.probes[0].target = path("bin/true")),
    ));
    // (Strings with a NUL are refused before any probe: BAD_STRING.)
    v.push((
        "uprobe-path-nul",
        STP_VERR_BAD_STRING,
        "holds a NUL byte",
        prog_uprobe(|p| p.probes[0].target = path("/bin\0/true")),
    ));
    v.push((
        "uprobe-negative-pid",
        STP_VERR_BAD_PROBE,
        "uprobe process -5 is negative",
        prog_uprobe(|p| p.probes[0].uprobe.as_mut().unwrap().pid = -5),
    ));
    // maxactive counts a marker's arguments: 4 past an empty UARGS.
    v.push((
        "uprobe-args-past-uargs",
        STP_VERR_BAD_PROBE,
        "USDT arguments [0, +4) outside the 0 of UARGS",
        entry_patched(
            prog_uprobe(|_| {}),
            STP_SEC_PROBES,
            std::mem::size_of::<stp_probe_desc>(),
            0,
            4,
            4,
        ),
    ));
    let spec = |a: u64| {
        prog_uprobe(move |p| {
            if let Some(u) = p.probes[0].uprobe.as_mut() {
                u.args = vec![a];
            }
        })
    };
    v.push((
        "uprobe-arg-size-3",
        STP_VERR_BAD_PROBE,
        "USDT argument 1 has a bad spec",
        spec(u64::from(STP_UARG_REG) | 3 << STP_UARG_SIZE_SHIFT),
    ));
    v.push((
        "uprobe-arg-register-past-ss",
        STP_VERR_BAD_PROBE,
        "USDT argument 1 has a bad spec",
        spec(u64::from(STP_UARG_MEM) | 8 << STP_UARG_SIZE_SHIFT | 21 << STP_UARG_REG_SHIFT),
    ));
    v.push((
        "uprobe-arg-kind-3",
        STP_VERR_BAD_PROBE,
        "USDT argument 1 has a bad spec",
        spec(3 | 8 << STP_UARG_SIZE_SHIFT),
    ));
    // User symbol tables (abi.h): out of order, a relative path, a name
    // outside USYMSTR, a slice outside USYMS, a reserved word set.
    let usyms = |f: &dyn Fn(&mut UserSymbols)| {
        prog_uprobe(|p| {
            let mut u = UserSymbols {
                path: "/bin/true".into(),
                symbols: vec![(0x1000, "a".into()), (0x1010, "b".into())],
            };
            f(&mut u);
            p.usyms = vec![u];
        })
    };
    let bin = std::mem::size_of::<stp_usym_bin>();
    let sym = std::mem::size_of::<stp_usym>();
    v.push((
        "usym-out-of-order",
        STP_VERR_BAD_USYM,
        "user binary 0: symbol 1 is not after symbol 0",
        usyms(&|u| u.symbols[1].0 = 0x1000),
    ));
    v.push((
        "usym-relative-path",
        STP_VERR_BAD_USYM,
        "user binary 0: path is not absolute",
        usyms(&|u| u.path = "bin/true".into()),
    ));
    v.push((
        "usym-name-outside",
        STP_VERR_BAD_USYM,
        "user binary 0: symbol 1 has a bad name [1, +9)",
        entry_patched(usyms(&|_| {}), STP_SEC_USYMS, sym, 1, 4, 9),
    ));
    v.push((
        "usym-slice-outside",
        STP_VERR_BAD_USYM,
        "user binary 0: symbols [0, +3) outside the 2 of USYMS",
        entry_patched(usyms(&|_| {}), STP_SEC_USYMBINS, bin, 0, 2, 3),
    ));
    v.push((
        "usym-reserved",
        STP_VERR_BAD_USYM,
        "user binary 0: path string",
        entry_patched(usyms(&|_| {}), STP_SEC_USYMBINS, bin, 0, 3, 1),
    ));
    v.push((
        "uprobe-retval-at-entry",
        STP_VERR_BAD_CONTEXT,
        "",
        prog_uprobe(|p| {
            p.handlers[0].nregs = 1;
            p.handlers[0].code = vec![
                i(STP_OP_CALLI, 0, 0, 0, STP_HLP_RETVAL as i32),
                i(STP_OP_RET, 0, 0, 0, 0),
            ];
        }),
    ));
}

/// procfs and input probes: bad file names, sizes, modes, two probes of
/// one kind on a file, `$value` helpers outside their contexts.
fn procfs_attacks(v: &mut Vec<Attack>) {
    let name = |n: &str| ProbeTarget::File {
        name: n.into(),
        mode: 0o666,
    };
    v.push((
        "procfs-name-slash",
        STP_VERR_BAD_PROBE,
        "procfs file name has byte 0x2f",
        prog_procfs(|p| p.probes[0].target = name("../../etc/x")),
    ));
    v.push((
        "procfs-name-dotdot",
        STP_VERR_BAD_PROBE,
        "procfs file name is \".\" or \"..\"",
        prog_procfs(|p| {
            p.probes[0].target = name("..");
            p.probes[1].target = name("..");
        }),
    ));
    v.push((
        "procfs-name-dot",
        STP_VERR_BAD_PROBE,
        "procfs file name is \".\" or \"..\"",
        prog_procfs(|p| p.probes[0].target = name(".")),
    ));
    v.push((
        "procfs-name-empty",
        STP_VERR_BAD_PROBE,
        "procfs file name of 0 bytes",
        prog_procfs(|p| p.probes[0].target = name("")),
    ));
    v.push((
        "procfs-name-too-long",
        STP_VERR_BAD_PROBE,
        "procfs file name of 65 bytes",
        prog_procfs(|p| p.probes[0].target = name(&"x".repeat(65))),
    ));
    v.push((
        "procfs-name-space",
        STP_VERR_BAD_PROBE,
        "procfs file name has byte 0x20",
        prog_procfs(|p| p.probes[0].target = name("a b")),
    ));
    // stp_probe_desc.pp (word 14) past the strings; uargs (word 15) set
    // on a timer.
    v.push((
        "probe-pp-past-strings",
        STP_VERR_BAD_PROBE,
        "probe 0 names string 4096 of",
        entry_patched(
            build(&timer_prog()),
            STP_SEC_PROBES,
            std::mem::size_of::<stp_probe_desc>(),
            0,
            14,
            4096,
        ),
    ));
    v.push((
        "probe-uargs-on-timer",
        STP_VERR_BAD_PROBE,
        "probe 0: USDT arguments on a probe that is not a uprobe",
        entry_patched(
            build(&timer_prog()),
            STP_SEC_PROBES,
            std::mem::size_of::<stp_probe_desc>(),
            0,
            15,
            1,
        ),
    ));
    // The image builder writes MAXSTRINGLEN for a size of 0: patched.
    v.push((
        "procfs-size-zero",
        STP_VERR_BAD_PROBE,
        "procfs file size 0, must be 1 to 1048576",
        entry_patched(
            build(&procfs_prog()),
            STP_SEC_PROBES,
            std::mem::size_of::<stp_probe_desc>(),
            0,
            4,
            0,
        ),
    ));
    v.push((
        "procfs-size-huge",
        STP_VERR_BAD_PROBE,
        "procfs file size 4294967295",
        prog_procfs(|p| p.probes[0].maxactive = u32::MAX),
    ));
    v.push((
        "procfs-size-past-cap",
        STP_VERR_BAD_PROBE,
        "procfs file size 1048577",
        prog_procfs(|p| p.probes[1].maxactive = STP_MAX_PROCFS_SIZE + 1),
    ));
    v.push((
        "procfs-mode-exec",
        STP_VERR_BAD_PROBE,
        "mode 0755 has bits outside 0666",
        prog_procfs(|p| {
            p.probes[0].target = ProbeTarget::File {
                name: "f".into(),
                mode: 0o755,
            }
        }),
    ));
    v.push((
        "procfs-two-readers",
        STP_VERR_BAD_PROBE,
        "a second read probe on procfs file",
        prog_procfs(|p| {
            p.probes[1].kind = STP_PROBE_PROCFS_READ as u8;
            p.probes[1].handler = 0;
        }),
    ));
    v.push((
        "procfs-modes-differ",
        STP_VERR_BAD_PROBE,
        "mode or size differs",
        prog_procfs(|p| p.probes[1].maxactive = 32),
    ));
    v.push((
        "procfs-too-many-files",
        STP_VERR_BAD_PROBE,
        "more than 64 procfs files",
        prog_procfs(|p| {
            let rd = p.probes[0].clone();
            p.probes = (0..=STP_MAX_PROCFS_FILES)
                .map(|k| Probe {
                    target: name(&format!("f{k}")),
                    ..rd.clone()
                })
                .collect();
        }),
    ));
    v.push((
        "input-with-symbol",
        STP_VERR_BAD_PROBE,
        "symbol, offset or maxactive set on a probe that is not a kprobe",
        prog_procfs(|p| p.probes[2].maxactive = 1),
    ));
    v.push((
        "value-set-in-write-probe",
        STP_VERR_BAD_CONTEXT,
        "helper VALUE_SET not allowed",
        prog_procfs(|p| {
            p.handlers[1].code[0] = i(STP_OP_SLDK, 0, 0, 0, 0);
            p.handlers[1]
                .code
                .insert(1, i(STP_OP_CALLI, 0, 0, 0, STP_HLP_VALUE_SET as i32));
            p.handlers[1].nregs = 1;
            p.handlers[1].locs.push(SrcLoc::default());
        }),
    ));
    v.push((
        "value-in-kprobe",
        STP_VERR_BAD_CONTEXT,
        "helper VALUE not allowed",
        prog_kprobe(|p| p.handlers[0].code[0].imm = STP_HLP_VALUE as i32),
    ));
    v.push((
        "value-set-unwritten-string",
        STP_VERR_UNINIT_REGISTER,
        "",
        prog_procfs(|p| {
            p.handlers[0].code.remove(0);
            p.handlers[0].locs.pop();
        }),
    ));
}

/// Patches 32-bit word `word` of entry `k` of section `s` (entries of
/// `es` bytes).
fn entry_patched(
    mut img: Vec<u8>,
    s: stp_section,
    es: usize,
    k: usize,
    word: usize,
    v: u32,
) -> Vec<u8> {
    let (off, _) = sec(&img, s);
    put_u32(&mut img, off + k * es + 4 * word, v);
    img
}

/// The timer program with statistic 0 (log histogram, variance) and 1
/// (no histogram), and map 0 (`a[long]` of longs).
fn tables_prog() -> Program {
    let mut p = timer_prog();
    let stat = |name: &str, hist, variance| Stat {
        name: name.into(),
        hist,
        variance,
        shift: 0,
        print_at_exit: false,
        array: false,
    };
    p.stats = vec![stat("s", Hist::Log, true), stat("t", Hist::None, false)];
    p.maps = vec![MapDecl {
        name: "a".into(),
        keys: vec![ArgKind::Int],
        value: MapValue::Long,
        capacity: 16,
        ..Default::default()
    }];
    p
}

/// A timer program with a user function `f` (handler 2) of signature
/// (nparams, nsparams, ret) and body `body`, called by `call`, inserted
/// before the timer handler's code.
fn with_function(call: Insn, sig: (u8, u8, stp_ret_kind), body: Vec<Insn>) -> Vec<u8> {
    let mut p = timer_prog();
    p.handlers[0].code.insert(0, call);
    p.handlers[0].locs.push(SrcLoc::default());
    p.handlers.push(handler(STP_CTX_FUNCTION, 3, 1, body));
    p.funcs.push(FuncSig {
        handler: 2,
        name: "f".into(),
        nparams: sig.0,
        nsparams: sig.1,
        ret: sig.2 as u8,
    });
    build(&p)
}

/// Attacks for the rest of the codes and for the arithmetic on sizes and
/// offsets: overflowing section ends, huge counts, instructions seen
/// through a misaligned CODE (the middle of an instruction), calls,
/// returns, statistics, maps and regular expressions.
fn more_attacks(v: &mut Vec<Attack>) {
    let ret = i(STP_OP_RET, 0, 0, 0, 0);
    let hs = std::mem::size_of::<stp_handler_desc>();
    v.push((
        "section-end-overflows",
        STP_VERR_BAD_SECTION,
        "outside",
        patched(|img| set_sec(img, STP_SEC_CODE, 0xffff_fff8, 16)),
    ));
    v.push((
        "section-size-huge",
        STP_VERR_BAD_SECTION,
        "outside",
        patched(|img| {
            let (off, _) = sec(img, STP_SEC_STRDATA);
            set_sec(img, STP_SEC_STRDATA, off as u32, u32::MAX);
        }),
    ));
    v.push((
        "code-mid-instruction",
        STP_VERR_BAD_SECTION,
        "not 8-byte aligned",
        patched(|img| {
            let (off, size) = sec(img, STP_SEC_CODE);
            set_sec(img, STP_SEC_CODE, off as u32 + 4, size as u32);
        }),
    ));
    v.push((
        "handler-count-huge",
        STP_VERR_BAD_HANDLER,
        "outside CODE",
        entry_patched(build(&timer_prog()), STP_SEC_HANDLERS, hs, 0, 1, u32::MAX),
    ));
    v.push((
        "handler-offset-wraps",
        STP_VERR_BAD_HANDLER,
        "outside CODE",
        entry_patched(
            build(&timer_prog()),
            STP_SEC_HANDLERS,
            hs,
            1,
            0,
            u32::MAX - 1,
        ),
    ));
    v.push((
        "handlers-overlap",
        STP_VERR_BAD_HANDLER,
        "inside or before handler 0",
        entry_patched(build(&timer_prog()), STP_SEC_HANDLERS, hs, 1, 0, 6),
    ));
    v.push((
        "string-end-overflows",
        STP_VERR_BAD_STRING,
        "outside STRDATA",
        entry_patched(
            build(&kprobe_prog(STP_PROBE_KPROBE, "__x64_sys_getppid")),
            STP_SEC_STRS,
            8,
            0,
            0,
            u32::MAX,
        ),
    ));
    v.push((
        "format-args-huge",
        STP_VERR_BAD_FORMAT,
        "arguments",
        entry_patched(build(&timer_prog()), STP_SEC_FORMATS, 16, 0, 0, u32::MAX),
    ));
    v.push((
        "jump-onto-itself-backward",
        STP_VERR_BAD_JUMP,
        "forward jump",
        prog_timer(|p| p.handlers[0].code[5].imm = -1),
    ));
    v.push((
        "jump-imm-min",
        STP_VERR_BAD_JUMP,
        "forward jump",
        prog_timer(|p| p.handlers[0].code[5].imm = i32::MIN),
    ));
    v.push((
        "loop-imm-min",
        STP_VERR_BAD_JUMP,
        "backward jump",
        prog_timer(|p| p.handlers[0].code[6] = i(STP_OP_LOOP, 0, 0, 0, i32::MIN)),
    ));
    v.push((
        "loop-into-dead-code",
        STP_VERR_BAD_JUMP,
        "which no forward path reaches",
        prog_timer(|p| {
            p.handlers[0].code = vec![
                i(STP_OP_JMP, 0, 0, 0, 1),
                i(STP_OP_NOP, 0, 0, 0, 0),
                i(STP_OP_LOOP, 0, 0, 0, -2),
                ret,
            ]
        }),
    ));
    v.push((
        "helper-result-kind",
        STP_VERR_BAD_HELPER,
        "returns a string",
        prog_kprobe(|p| p.handlers[0].code[1] = i(STP_OP_CALLI, 0, 0, 0, STP_HLP_EXECNAME as i32)),
    ));
    v.push((
        "call-not-a-function",
        STP_VERR_BAD_CALL,
        "not a function",
        prog_timer(|p| p.handlers[0].code[0] = i(STP_OP_FCALL, 0, 0, 0, 1)),
    ));
    v.push((
        "call-result-kind",
        STP_VERR_BAD_CALL,
        "whose result kind is 1",
        with_function(
            i(STP_OP_FCALL, 0, 0, 0, 2),
            (0, 0, STP_RET_LONG),
            vec![i(STP_OP_LDI, 0, 0, 0, 1), i(STP_OP_RETI, 0, 0, 0, 0)],
        ),
    ));
    v.push((
        "call-arguments-unwritten",
        STP_VERR_UNINIT_REGISTER,
        "(function argument) read before it is written",
        with_function(
            i(STP_OP_FCALLI, 1, 2, 0, 2),
            (1, 0, STP_RET_LONG),
            vec![i(STP_OP_RETI, 0, 0, 0, 0)],
        ),
    ));
    v.push((
        "return-kind",
        STP_VERR_BAD_RETURN,
        "RETI in a handler that returns with RET",
        prog_timer(|p| {
            let last = p.handlers[1].code.len() - 1;
            p.handlers[1].code[last] = i(STP_OP_RETI, 0, 0, 0, 0);
        }),
    ));
    v.push((
        "function-returns-nothing",
        STP_VERR_BAD_RETURN,
        "RET in a handler that returns with RETS",
        with_function(i(STP_OP_NOP, 0, 0, 0, 0), (0, 0, STP_RET_STR), vec![ret]),
    ));
    v.push((
        "maxnesting-frames-too-big",
        STP_VERR_BAD_LIMIT,
        "MAXNESTING 64 frames",
        {
            let mut img = with_function(i(STP_OP_NOP, 0, 0, 0, 0), (0, 0, STP_RET_NONE), vec![ret]);
            set_limit(&mut img, STP_LIM_MAXNESTING, 64);
            set_limit(&mut img, STP_LIM_MAXSTRINGLEN, 4096);
            img
        },
    ));
    let ss = std::mem::size_of::<stp_stat_desc>();
    v.push((
        "stat-bucket-count",
        STP_VERR_BAD_STAT,
        "histogram kind 1 with 7 buckets",
        entry_patched(build(&tables_prog()), STP_SEC_STATS, ss, 0, 1, 7),
    ));
    v.push((
        "stat-offset-overlaps",
        STP_VERR_BAD_STAT,
        "statistic 1 at offset 0",
        entry_patched(build(&tables_prog()), STP_SEC_STATS, ss, 1, 5, 0),
    ));
    v.push((
        "stat-offset-huge",
        STP_VERR_BAD_STAT,
        "statistic 1 at offset 4294967295",
        entry_patched(build(&tables_prog()), STP_SEC_STATS, ss, 1, 5, u32::MAX),
    ));
    v.push((
        "stat-histogram-missing",
        STP_VERR_BAD_STAT,
        "which has no histogram",
        {
            let mut p = tables_prog();
            p.handlers[1].code[0] = i(STP_OP_STHIST, 0, 0, 0, 1);
            build(&p)
        },
    ));
    let ms = std::mem::size_of::<stp_map_desc>();
    v.push(("map-no-keys", STP_VERR_BAD_MAP, "0 keys", {
        let mut img = build(&tables_prog());
        let (off, _) = sec(&img, STP_SEC_MAPS);
        img[off] = 0;
        img
    }));
    v.push((
        "map-capacity-huge",
        STP_VERR_BAD_MAP,
        "capacity 4294967295",
        entry_patched(build(&tables_prog()), STP_SEC_MAPS, ms, 0, 2, u32::MAX),
    ));
    v.push(("maps-too-big", STP_VERR_TOO_MANY, "maps take more than", {
        let mut p = tables_prog();
        p.limits[STP_LIM_MAXSTRINGLEN as usize] = 4096;
        p.maps[0].keys = vec![ArgKind::Str; STP_MAX_MAP_KEYS as usize];
        p.maps[0].capacity = STP_MAX_MAP_ENTRIES;
        build(&p)
    }));
    v.push((
        "map-value-kind",
        STP_VERR_BAD_MAP,
        "MGETS on map 0, whose values are of kind 0",
        {
            let mut p = tables_prog();
            p.handlers[0].nsregs = 1;
            p.handlers[0].code[3] = i(STP_OP_MGETS, 0, 0, 0, 0);
            build(&p)
        },
    ));
    v.push((
        "map-index-out-of-range",
        STP_VERR_BAD_INDEX,
        "map index 1 out of range",
        prog_timer(|p| {
            *p = tables_prog();
            p.handlers[0].code[3] = i(STP_OP_MGET, 2, 0, 0, 1);
        }),
    ));
    v.push((
        "regex-transition-out-of-range",
        STP_VERR_BAD_REGEX,
        "goes to state 3 of 3",
        prog_kprobe(|p| {
            p.regexes.push(RegexTable {
                pattern: b"a".to_vec(),
                classes: (0..=255u8).map(|b| u8::from(b == b'a')).collect(),
                nclasses: 3,
                start: 2,
                trans: vec![0, 0, 0, 1, 1, 1, 2, 3, 0],
                groups: None,
            });
            p.handlers[0].code[1] = i(STP_OP_REMATCH, 0, 0, 0, 0);
        }),
    ));
    v.push((
        "try-armed-differently",
        STP_VERR_BAD_TRY,
        "reached with different armed catches",
        prog_timer(|p| {
            let h = &mut p.handlers[0];
            h.nregs = h.nregs.max(1);
            h.nsregs = h.nsregs.max(1);
            h.code = vec![
                i(STP_OP_LDI, 0, 0, 0, 0),
                i(STP_OP_JZ, 0, 0, 0, 1),
                i(STP_OP_TRY, 0, 0, 0, 1),
                i(STP_OP_NOP, 0, 0, 0, 0),
                ret,
            ];
            h.locs = vec![Default::default(); h.code.len()];
        }),
    ));
    v.push((
        "try-catch-reads-body-register",
        STP_VERR_UNINIT_REGISTER,
        "r0 read before",
        prog_timer(|p| {
            let h = &mut p.handlers[0];
            h.nregs = h.nregs.max(2);
            h.nsregs = h.nsregs.max(1);
            h.code = vec![
                i(STP_OP_TRY, 0, 0, 0, 2),
                i(STP_OP_LDI, 0, 0, 0, 1),
                i(STP_OP_TRYEND, 0, 0, 0, 0),
                i(STP_OP_MOV, 1, 0, 0, 0),
                ret,
            ];
            h.locs = vec![Default::default(); h.code.len()];
        }),
    ));
    regex_group_images(v);
    v.push((
        "pretty-member-after-its-struct",
        STP_VERR_BAD_PRETTY,
        "pretty node 3: members [3, +3) not before it",
        prog_pretty(|p| p.pretty[3].first = 3),
    ));
    v.push((
        "pretty-members-count-huge",
        STP_VERR_BAD_PRETTY,
        "pretty node 3: members [0, +65535) not before it",
        prog_pretty(|p| p.pretty[3].count = u16::MAX),
    ));
    v.push((
        "pretty-array-of-itself",
        STP_VERR_BAD_PRETTY,
        "pretty node 3: array element 3",
        prog_pretty(|p| {
            p.pretty[3].kind = STP_PK_ARRAY as u8;
            p.pretty[3].count = 0;
            p.pretty[3].first = 3;
        }),
    ));
    v.push((
        "pretty-name-out-of-range",
        STP_VERR_BAD_PRETTY,
        "pretty node 1: name 100 of 5 strings",
        prog_pretty(|p| p.pretty[1].name = 100),
    ));
    v.push((
        "pretty-scalar-size",
        STP_VERR_BAD_PRETTY,
        "pretty node 0: size 16 for kind 2",
        prog_pretty(|p| p.pretty[0].size = 16),
    ));
    v.push((
        "pretty-bitfield-past-its-bytes",
        STP_VERR_BAD_PRETTY,
        "pretty node 0: bitfield [31, +2) of 4 bytes",
        prog_pretty(|p| {
            p.pretty[0].bit_off = 31;
            p.pretty[0].bit_size = 2;
        }),
    ));
    v.push((
        "pretty-children-of-a-pointer",
        STP_VERR_BAD_PRETTY,
        "pretty node 1: children of a kind 4",
        prog_pretty(|p| p.pretty[1].first = 0xffff_0000),
    ));
    v.push((
        "pretty-unknown-kind",
        STP_VERR_BAD_PRETTY,
        "pretty node 2: unknown kind 200",
        prog_pretty(|p| p.pretty[2].kind = 200),
    ));
    v.push((
        "pretty-depth-operand",
        STP_VERR_BAD_OPERAND,
        "PRETTY depth -1, not 0 or 1",
        prog_pretty(|p| p.handlers[0].code[2].imm = -1),
    ));
    v.push((
        "pretty-without-scratch-registers",
        STP_VERR_BAD_REGISTER,
        "its scratch needs 2 free",
        prog_pretty(|p| p.handlers[0].nsregs = STP_MAX_SREGS as u8),
    ));
    v.push((
        "regex-index-out-of-range",
        STP_VERR_BAD_INDEX,
        "regex index 0 out of range [0, 0)",
        prog_kprobe(|p| p.handlers[0].code[1] = i(STP_OP_REMATCH, 0, 0, 0, 0)),
    ));
}

/// A kprobe program whose handler runs REMATCHS on regex 0, `a(b)` with
/// its group program (compiler/src/regex.rs), changed by `f`.
fn groups_prog(f: impl FnOnce(&mut RegexGroups)) -> Program {
    let mut p = kprobe_prog(STP_PROBE_KPROBE, "__x64_sys_getppid");
    let mut t = compiler::regex::compile_groups(b"a(b)").expect("a(b)");
    if let Some(g) = t.groups.as_mut() {
        f(g);
    }
    p.regexes.push(t);
    p.handlers[0].code[1] = i(STP_OP_REMATCHS, 0, 0, 0, 0);
    p
}

/// The group program rules (verify.c check_regex_sub, check_regex_subs,
/// REMATCHS): one image each.
fn regex_group_images(v: &mut Vec<(&'static str, u32, &'static str, Vec<u8>)>) {
    let ss = std::mem::size_of::<stp_regex_sub>();
    v.push((
        "regex-sub-target-out-of-range",
        STP_VERR_BAD_REGEX,
        "instruction 1 (operation 2): argument 99 out of range",
        build(&groups_prog(|g| g.insns[1] = rx_insn(STP_RX_SPLIT, 99))),
    ));
    v.push((
        "regex-sub-slot-out-of-range",
        STP_VERR_BAD_REGEX,
        "instruction 0 (operation 3): argument 4 out of range",
        build(&groups_prog(|g| g.insns[0] = rx_insn(STP_RX_SAVE, 4))),
    ));
    v.push((
        "regex-sub-too-many-slots",
        STP_VERR_BAD_REGEX,
        "regex 0: 34 slots, not even in [2, 32]",
        build(&groups_prog(|g| g.nslots = 34)),
    ));
    v.push((
        "regex-sub-odd-slots",
        STP_VERR_BAD_REGEX,
        "regex 0: 3 slots, not even in [2, 32]",
        build(&groups_prog(|g| g.nslots = 3)),
    ));
    v.push((
        "regex-sub-set-out-of-range",
        STP_VERR_BAD_REGEX,
        "instruction 1 (operation 0): argument 7 out of range",
        build(&groups_prog(|g| g.insns[1] = rx_insn(STP_RX_SET, 7))),
    ));
    v.push((
        "regex-sub-unknown-operation",
        STP_VERR_BAD_REGEX,
        "instruction 2 has unknown operation 9",
        build(&groups_prog(|g| g.insns[2] = rx_insn(9, 0))),
    ));
    v.push((
        "regex-sub-match-argument",
        STP_VERR_BAD_REGEX,
        "argument 1 out of range",
        build(&groups_prog(|g| {
            let last = g.insns.len() - 1;
            g.insns[last] = rx_insn(STP_RX_MATCH, 1);
        })),
    ));
    v.push((
        "regex-sub-falls-through",
        STP_VERR_BAD_REGEX,
        "last instruction (operation 3) falls through",
        build(&groups_prog(|g| {
            g.insns.pop();
        })),
    ));
    v.push((
        "regex-sub-too-many-insns",
        STP_VERR_BAD_REGEX,
        "257 program instructions, the cap is 256",
        build(&groups_prog(|g| {
            let m = g.insns.pop().unwrap_or_default();
            while g.insns.len() < 256 {
                g.insns.push(rx_insn(STP_RX_JMP, 0));
            }
            g.insns.push(m);
        })),
    ));
    v.push((
        "regex-sub-past-regexprog",
        STP_VERR_BAD_REGEX,
        "outside REGEXPROG",
        entry_patched(build(&groups_prog(|_| {})), STP_SEC_REGEXSUBS, ss, 0, 0, 1),
    ));
    v.push((
        "regex-sub-pad",
        STP_VERR_BAD_REGEX,
        "regex 0: program pad 5",
        entry_patched(build(&groups_prog(|_| {})), STP_SEC_REGEXSUBS, ss, 0, 3, 5),
    ));
    v.push((
        "regex-subs-count",
        STP_VERR_BAD_REGEX,
        "1 group programs for 2 regexes",
        {
            // Two regexes, REGEXSUBS cut to its first entry.
            let mut p = groups_prog(|_| {});
            p.regexes.push(compiler::regex::compile(b"x").expect("x"));
            let mut img = build(&p);
            let (off, _) = sec(&img, STP_SEC_REGEXSUBS);
            set_sec(&mut img, STP_SEC_REGEXSUBS, off as u32, ss as u32);
            img
        },
    ));
    v.push((
        "regex-rematchs-without-program",
        STP_VERR_BAD_REGEX,
        "REMATCHS of regex 1, which has no group program",
        {
            let mut p = groups_prog(|_| {});
            let plain = compiler::regex::compile(b"x").expect("x");
            p.regexes.push(plain);
            p.handlers[0].code[1] = i(STP_OP_REMATCHS, 0, 0, 0, 1);
            build(&p)
        },
    ));
    v.push((
        "regex-rematchs-no-subs",
        STP_VERR_BAD_REGEX,
        "REMATCHS of regex 0, which has no group program",
        prog_kprobe(|p| {
            p.regexes.push(compiler::regex::compile(b"x").expect("x"));
            p.handlers[0].code[1] = i(STP_OP_REMATCHS, 0, 0, 0, 0);
        }),
    ));
}

/// One seeded mutation of a valid image and its verdict.
pub struct Mutated {
    /// File name stem (`mut-SEED-KIND`).
    pub name: String,
    /// The bytes.
    pub image: Vec<u8>,
    /// `Some((code, message))`: refused with this error and exactly this
    /// LOAD log; `None`: accepted.
    pub refusal: Option<(u32, String)>,
}

/// The valid images the mutations start from: the hand-made programs and
/// generated ones (`vm_testkit::gen`: maps, statistics, functions, strings).
fn mutation_bases() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = valid_images()
        .into_iter()
        .filter(|(n, _)| *n != "valid-timer-huge" && *n != "valid-nosym")
        .map(|(_, img)| img)
        .collect();
    for seed in 0..8 {
        v.push(build(&vm_testkit::gen::generate(seed).program));
    }
    v
}

/// A mutated image with the user-space verifier's verdict on it.
fn judged(name: String, image: Vec<u8>) -> Mutated {
    let refusal = vm_spec::core::verify_image(&image)
        .err()
        .map(|e| (e.code, e.message));
    Mutated {
        name,
        image,
        refusal,
    }
}

/// Seeded mutations of each of `bases` (images of real programs: the
/// guest harness passes every case it compiled): per base, the first
/// `per_base` that the verifier refuses, found within `per_base * 8`
/// tries, and the first accepted one while fewer than `accepted` were
/// kept in all. Names are `corpus-NAME-SEED-KIND`; every run makes the
/// same images.
pub fn corpus_mutations(
    bases: &[(String, Vec<u8>)],
    per_base: usize,
    accepted: usize,
) -> Vec<Mutated> {
    let mut out = Vec::new();
    let mut nacc = 0;
    for (i, (base_name, base)) in bases.iter().enumerate() {
        let mut nref = 0;
        for t in 0..(per_base * 8) as u64 {
            if nref >= per_base {
                break;
            }
            let seed = (i as u64) << 32 | t;
            let mut rng = vm_testkit::gen::Rng::new(seed);
            let m = vm_testkit::mutate::mutate(base, &mut rng);
            let m = judged(format!("corpus-{base_name}-{t:02}-{}", m.kind), m.image);
            let keep = if m.refusal.is_some() {
                nref += 1;
                true
            } else {
                nacc += 1;
                nacc <= accepted
            };
            if keep {
                out.push(m);
            }
        }
    }
    out
}

/// The image of a compiled .stpb file: its program with stand-in symbols
/// as `build` gives them, or, where those do not build (a probe whose
/// target only the loader can place), every probe on the stand-in
/// symbol, as the compiler checks it. The error says why neither did.
pub fn stpb_image(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let prog = vm_spec::container::read(bytes).map_err(|e| e.to_string())?;
    let named = image::stand_in_symbols(&prog, image::StandIns::Named);
    image::build(&prog, &named).or_else(|_| {
        let uniform = image::stand_in_symbols(&prog, image::StandIns::Uniform);
        image::build(&prog, &uniform).map_err(|e| e.to_string())
    })
}

/// `n` refused mutations and at most `accepted` accepted ones, seeded, so
/// every run makes the same images.
pub fn mutations(n: usize, accepted: usize) -> Vec<Mutated> {
    let bases = mutation_bases();
    let mut out = Vec::new();
    let (mut nref, mut nacc) = (0, 0);
    let mut seed = 0u64;
    while nref < n || nacc < accepted {
        let base = &bases[seed as usize % bases.len()];
        let mut rng = vm_testkit::gen::Rng::new(seed);
        let m = vm_testkit::mutate::mutate(base, &mut rng);
        let m = judged(format!("mut-{seed:04}-{}", m.kind), m.image);
        seed += 1;
        let keep = if m.refusal.is_some() {
            nref += 1;
            nref <= n
        } else {
            nacc += 1;
            nacc <= accepted
        };
        if keep {
            out.push(m);
        }
        if seed > 100_000 {
            break;
        }
    }
    out
}
