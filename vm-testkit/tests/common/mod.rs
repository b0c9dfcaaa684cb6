//! Shared helpers of the C core's integration tests: a tiny program builder
//! on top of `vm_spec::program` (`RET`, `i`, `handler`, `begin`, ...), the
//! image of a program (`build`) and byte patching of built images (header
//! offsets, `get32`/`put32`, `section`: `vm_testkit::layout`). Every test file takes its program
//! and image builders from here.
#![allow(dead_code)]
use vm_spec::abi::*;
use vm_spec::image;
use vm_spec::program::*;

/// `RET`, the end of every handler.
pub const RET: Insn = Insn {
    op: STP_OP_RET as u8,
    a: 0,
    b: 0,
    c: 0,
    imm: 0,
};

/// One instruction.
pub fn i(op: stp_opcode, a: u8, b: u8, c: u8, imm: i32) -> Insn {
    Insn::new(op, a, b, c, imm)
}

/// A handler of context `ctx` with the given register counts and code.
pub fn handler(ctx: stp_ctx, nregs: u8, nsregs: u8, code: Vec<Insn>) -> Handler {
    let locs = vec![SrcLoc::default(); code.len()];
    Handler {
        ctx: ctx as u8,
        nregs,
        nsregs,
        code,
        locs,
        probe_point: String::new(),
    }
}

/// A probe of `kind` on handler `h` (kprobes get target "vfs_read",
/// timers a 1 ms period).
pub fn probe(kind: stp_probe_kind, h: u32) -> Probe {
    let target = match kind {
        STP_PROBE_KPROBE | STP_PROBE_KRETPROBE => ProbeTarget::Symbol {
            name: "vfs_read".into(),
            offset: 0,
        },
        _ => ProbeTarget::None,
    };
    Probe {
        kind: kind as u8,
        flags: 0,
        handler: h,
        target,
        maxactive: 0,
        period_ns: if kind == STP_PROBE_TIMER {
            1_000_000
        } else {
            0
        },
        randomize: 0,
        perf: None,
        watch: None,
        netfilter: None,
        uprobe: None,
        display: String::new(),
    }
}

/// The probe kind matching a handler context.
pub fn kind_of(ctx: u8) -> stp_probe_kind {
    ctx as stp_probe_kind
}

/// A program with these handlers, one probe per handler (kind from its
/// context), default limits.
pub fn program(handlers: Vec<Handler>) -> Program {
    let probes = handlers
        .iter()
        .enumerate()
        .map(|(n, h)| probe(kind_of(h.ctx), n as u32))
        .collect();
    Program {
        limits: default_limits(),
        handlers,
        probes,
        ..Default::default()
    }
}

/// A program of one begin handler.
pub fn begin(nregs: u8, nsregs: u8, code: Vec<Insn>) -> Program {
    program(vec![handler(STP_CTX_BEGIN, nregs, nsregs, code)])
}

/// Adds a user function (a handler of context FUNCTION, no probe) to `p`
/// and returns its handler index.
pub fn add_function(
    p: &mut Program,
    nregs: u8,
    nsregs: u8,
    sig: (u8, u8, stp_ret_kind),
    code: Vec<Insn>,
) -> i32 {
    let h = p.handlers.len() as u32;
    p.handlers
        .push(handler(STP_CTX_FUNCTION, nregs, nsregs, code));
    p.funcs.push(FuncSig {
        handler: h,
        name: format!("f{h}"),
        nparams: sig.0,
        nsparams: sig.1,
        ret: sig.2 as u8,
    });
    h as i32
}

/// `n` long globals `g0`, `g1`, ... (not printed at exit).
pub fn long_globals(n: usize) -> Vec<Global> {
    (0..n)
        .map(|k| Global {
            name: format!("g{k}"),
            ty: GlobalType::Long,
            print_at_exit: false,
        })
        .collect()
}

/// `p` with `long_globals(n)`.
pub fn with_globals(mut p: Program, n: usize) -> Program {
    p.globals = long_globals(n);
    p
}

/// Scalar statistic `s` with histogram `hist`, the variance iff
/// `variance`, and `shift`.
pub fn st(hist: Hist, variance: bool, shift: u8) -> Stat {
    Stat {
        name: "s".into(),
        hist,
        variance,
        shift,
        print_at_exit: false,
        array: false,
    }
}

/// Map key kinds: true a string key, false an integer one.
pub fn key_kinds(keys: &[bool]) -> Vec<ArgKind> {
    keys.iter()
        .map(|&s| if s { ArgKind::Str } else { ArgKind::Int })
        .collect()
}

/// Map `a[long]` of `capacity` entries holding statistic 0 (a statistics
/// array).
pub fn stat_array_map(capacity: u32) -> MapDecl {
    MapDecl {
        name: "a".into(),
        keys: vec![ArgKind::Int],
        value: MapValue::Stat,
        capacity,
        stat: 0,
        ..Default::default()
    }
}

/// The stand-in image of a program (`StandIns::Named`: kprobe targets
/// resolve to the symbol written).
pub fn build(p: &Program) -> Vec<u8> {
    image::build_stand_in(p, image::StandIns::Named).expect("image builds")
}

#[allow(unused_imports)]
pub use vm_testkit::layout::*;
