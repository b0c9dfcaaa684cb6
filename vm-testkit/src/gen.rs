//! A generator of random *verified* programs for differential testing and
//! fuzzing: [`generate`] turns a seed into a [`Case`] (a [`Program`], the
//! [`HostEnv`] it runs in and the order in which its handlers run).
//!
//! Programs are built from structured pieces so that they pass the
//! verifier by construction: straight-line statements over every opcode
//! and every helper allowed in the handler's context, `if` and `if/else`
//! (JZ/JNZ/JMP forward), bounded loops (a counter, a JZ out and a LOOP
//! back), loops bounded only by MAXACTION, early RET, EXIT, PRINTF with
//! mixed integer and string runs, globals, and dead code after a JMP (which
//! may read any register, as the verifier allows for code that never
//! runs). A tracker keeps the registers written on every path, so every
//! live read is of a written register. Division by zero, `INT64_MIN / -1`,
//! memory faults (unmapped pages, strings that run into one, the top of
//! the address space) and rings too small for the output are produced on
//! purpose. Statistics (every histogram kind, @variance with shifts, empty
//! ones, several simulated CPUs: [`Case::cpus`], [`Case::run_cpus`]) and
//! associative arrays (random key kinds and arity, small capacities, `[N]`
//! and `%`, loops that fill them past their capacity, `foreach` in every
//! order with limits down to 0 and negative, nested, deleting and
//! inserting as it goes) are generated too, and statistics arrays (some
//! maps' values: MSTADD, MSTX, MSTBKT, MSTHIST, MSTHISTS, foreach by @count, @sum, @min,
//! @max or @avg).
//!
//! Determinism: the same seed gives the same case on every machine; the
//! random source is a xorshift64* seeded through splitmix64 (no crate).
//!
//! Left out: programs the verifier must refuse (the verifier tests and the
//! fuzz targets cover those).
use vm_refvm::vm::PAGE_SIZE as PAGE;
use vm_refvm::HostEnv;
use vm_spec::abi;
use vm_spec::program::{
    default_limits, ArgKind, Format, FuncSig, Global, GlobalType, Handler, Hist, Insn, MapDecl,
    MapValue, Probe, ProbeTarget, Program, RegexGroups, RegexTable, SrcLoc, Stat,
};
use vm_spec::tables::imm_pack;
use vm_spec::tables::{HelperArg, HelperRes, HELPERS, PROBE_KINDS};

/// A small deterministic random source (xorshift64*, splitmix64 seeding).
#[derive(Debug, Clone)]
pub struct Rng {
    s: u64,
}

impl Rng {
    /// A generator for `seed` (any value, 0 included).
    pub fn new(seed: u64) -> Self {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        Rng { s: z | 1 }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.s ^= self.s >> 12;
        self.s ^= self.s << 25;
        self.s ^= self.s >> 27;
        self.s.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A value in `[0, n)`; 0 when `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// True with probability `k / n`.
    pub fn chance(&mut self, k: u64, n: u64) -> bool {
        self.below(n) < k
    }

    /// One element of a non-empty slice (the first for an empty one is
    /// never asked for; `None` then).
    pub fn pick<T: Copy>(&mut self, v: &[T]) -> Option<T> {
        v.get(self.below(v.len() as u64) as usize).copied()
    }
}

/// One generated test case.
#[derive(Debug, Clone)]
pub struct Case {
    /// The seed it came from.
    pub seed: u64,
    /// The program (verifies by construction).
    pub program: Program,
    /// The environment of every run.
    pub env: HostEnv,
    /// Handler indexes, in the order they run.
    pub runs: Vec<u32>,
    /// CPU ids simulated for statistics (`HostSession::set_cpus`).
    pub cpus: u32,
    /// The CPU id of each run (its `HostEnv::cpu`; `env.cpu` for a run
    /// without one). Mostly below `cpus`; rarely not (no statistics copy:
    /// BADOP at the first statistic instruction).
    pub run_cpus: Vec<i64>,
}

/// Base of a mapped region full of NUL-terminated strings (two pages).
pub const STR_BASE: u64 = 0x1000_0000;
/// Base of a page whose last bytes hold a string with no NUL; the next
/// page is unmapped, so a copy of that string faults at its end.
pub const EDGE_BASE: u64 = 0x2000_0000;
/// An address that is never mapped.
pub const UNMAPPED: u64 = 0x3000_0000;
/// The last page of the address space (mapped in some cases).
pub const TOP_PAGE: u64 = u64::MAX - PAGE + 1;

const INTERESTING: [i64; 14] = [
    0,
    1,
    -1,
    2,
    7,
    63,
    64,
    65,
    i64::MIN,
    i64::MAX,
    i32::MIN as i64,
    i32::MAX as i64,
    1 << 32,
    -(1 << 40),
];

/// Strings for the edge cases of STOL (signs, prefixes, overflow, bases),
/// STEXT/STEXTN (escapes, control and high bytes, UTF-8), STOK
/// (delimiters, empty tokens) and SFIND/SREPL.
const SPECIAL_STRINGS: [&str; 27] = [
    "0x1f",
    "-0x1F",
    "0X",
    "0x",
    "0755",
    "-42",
    "123abc",
    "zZ9",
    "1010",
    " 12",
    "-",
    "0",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "18446744073709551617",
    "0xffffffffffffffff1",
    "\t\"'\\\u{7}\u{8}\u{c}\n\r\u{b}",
    "\u{1b}[0m\u{7f}é",
    "aaaa",
    "aa",
    "a",
    "%d%s",
    "abcabcab",
    "1,,2,3, ,4,",
    "\u{20ac}\u{1f600}\u{7ff}x\u{ffff}",
    ", ",
];

/// A format text for the argument kinds `args`: literal text and
/// conversions (mostly matching the arguments, sometimes not), every
/// conversion and flag, widths and precisions as digits (some huge) or
/// `*`, length modifiers (runs of them past 64 bytes too), `%%`, unknown
/// conversions, missing arguments and an incomplete conversion at the end.
fn format_text(rng: &mut Rng, args: &[ArgKind]) -> String {
    const CONV: [&str; 11] = ["d", "i", "u", "x", "X", "o", "p", "c", "s", "%", "b"];
    const LIT: [&str; 8] = ["", "", " ", "x=", "|", "\n", "é", "abc"];
    const LEN: [&str; 9] = ["l", "ll", "h", "hh", "z", "j", "t", "L", "q"];
    let mut t = String::new();
    let n = args.len() + rng.below(3) as usize;
    for k in 0..n {
        t.push_str(rng.pick(&LIT).unwrap_or(""));
        t.push('%');
        let nflags = match rng.below(8) {
            0..=3 => 0,
            4..=6 => 1,
            _ => 2 + rng.below(3),
        };
        for _ in 0..nflags {
            t.push(rng.pick(&['-', '0', '+', ' ', '#']).unwrap_or('-'));
        }
        match rng.below(10) {
            0..=4 => {}
            5 | 6 => t.push_str(&(1 + rng.below(30)).to_string()),
            7 => t.push_str(
                &rng.pick(&[100u64, 600, 5000, 99_999_999])
                    .unwrap_or(0)
                    .to_string(),
            ),
            _ => t.push('*'),
        }
        match rng.below(8) {
            0..=4 => {}
            5 => t.push_str(&format!(".{}", rng.below(25))),
            6 => t.push('.'),
            _ => t.push_str(".*"),
        }
        match rng.below(10) {
            0..=6 => {}
            7 | 8 => t.push_str(rng.pick(&LEN).unwrap_or("l")),
            _ => t.push_str(&"l".repeat(60 + rng.below(8) as usize)),
        }
        let conv = match args.get(k) {
            Some(ArgKind::Str) if rng.chance(3, 4) => "s",
            Some(ArgKind::Int) if rng.chance(3, 4) => rng
                .pick(&["d", "i", "u", "x", "X", "o", "p", "c"])
                .unwrap_or("d"),
            _ => rng.pick(&CONV).unwrap_or("d"),
        };
        t.push_str(conv);
    }
    if rng.chance(1, 8) {
        t.push_str(rng.pick(&["%", "%-", "%5", "%.*", "%ll"]).unwrap_or("%"));
    }
    t
}

fn nonzero_bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n)
        .map(|_| {
            if rng.chance(3, 4) {
                b' ' + rng.below(95) as u8
            } else {
                1 + rng.below(255) as u8
            }
        })
        .collect()
}

/// The environment: task identity and memory with strings, an edge that
/// faults, and sometimes the top and bottom pages of the address space.
fn gen_env(rng: &mut Rng) -> (HostEnv, Vec<u64>) {
    let v = |rng: &mut Rng| {
        if rng.chance(1, 3) {
            rng.pick(&INTERESTING).unwrap_or(0)
        } else {
            rng.below(100_000) as i64
        }
    };
    let names = [
        "swapper/0",
        "",
        "bash",
        "a\0b",
        "héllo wörld",
        "kworker/u16:3-events",
    ];
    let execname = if rng.chance(1, 4) {
        let n = rng.below(120) as usize;
        String::from_utf8_lossy(&nonzero_bytes(rng, n)).into_owned()
    } else {
        names[rng.below(names.len() as u64) as usize].to_string()
    };
    let mut env = HostEnv {
        pid: v(rng),
        tid: v(rng),
        ppid: v(rng),
        uid: v(rng),
        euid: v(rng),
        gid: v(rng),
        cpu: rng.below(64) as i64,
        jiffies: v(rng),
        execname,
        retval: v(rng),
        args: [v(rng), v(rng), v(rng), v(rng), v(rng), v(rng)],
        wall_ns: rng.next_u64(),
        memory: Vec::new(),
        ip: rng.next_u64(),
        user_mode: rng.chance(1, 2),
        pexecname: names[rng.below(names.len() as u64) as usize].to_string(),
        // Up to past STP_MAX_BACKTRACE frames of any width.
        stack: (0..rng.below(24))
            .map(|_| rng.next_u64() >> rng.below(64))
            .collect(),
        task: rng.next_u64(),
        egid: v(rng),
        hz: [100, 250, 300, 1000][rng.below(4) as usize],
        cycles: rng.next_u64(),
        online_mask: rng.next_u64(),
        random: rng.next_u64() as u32,
    };
    let mut addrs = vec![UNMAPPED, 0, 8, u64::MAX, u64::MAX - 7];
    if rng.chance(7, 8) {
        // Strings: random bytes with NULs sprinkled in, over two pages.
        let mut data = nonzero_bytes(rng, 8192);
        for b in data.iter_mut() {
            if rng.chance(1, 24) {
                *b = 0;
            }
        }
        env.memory.push((STR_BASE, data));
        for _ in 0..6 {
            addrs.push(STR_BASE + rng.below(8192));
        }
        addrs.push(STR_BASE + 8192 - 1 - rng.below(8));
        addrs.push(STR_BASE + PAGE - rng.below(8));
    }
    if rng.chance(3, 4) {
        // A string that runs into an unmapped page.
        let l = 1 + rng.below(300);
        env.memory
            .push((EDGE_BASE + PAGE - l, nonzero_bytes(rng, l as usize)));
        addrs.push(EDGE_BASE + PAGE - l);
        addrs.push(EDGE_BASE + PAGE - 1 - rng.below(l));
        addrs.push(EDGE_BASE + PAGE - 4);
        addrs.push(EDGE_BASE + rng.below(PAGE));
    }
    if rng.chance(1, 4) {
        // The last page, its bytes running up to 2^64; maybe page 0 too,
        // where a string copy that wraps around would continue.
        let k = PAGE - 1 - rng.below(64);
        env.memory
            .push((TOP_PAGE + k, nonzero_bytes(rng, (PAGE - k) as usize)));
        addrs.push(TOP_PAGE + k);
        addrs.push(u64::MAX - rng.below(8));
        if rng.chance(1, 2) {
            let mut low = nonzero_bytes(rng, 64);
            low[63] = 0;
            env.memory.push((0, low));
        }
    }
    if rng.chance(1, 3) {
        // A small unaligned range somewhere (its whole page is mapped).
        let a = 0x4000_0000 + rng.below(1 << 20);
        let n = 1 + rng.below(64) as usize;
        env.memory.push((a, nonzero_bytes(rng, n)));
        addrs.push(a);
    }
    (env, addrs)
}

/// Registers written on every path reaching the current point.
#[derive(Debug, Clone, Copy)]
struct Defs {
    r: u64,
    s: u32,
}

impl Defs {
    /// Where paths that wrote `a` and `b` join: adds what both wrote.
    fn meet(&mut self, a: &Defs, b: &Defs) {
        self.r |= a.r & b.r;
        self.s |= a.s & b.s;
    }
}

fn bits(mask: u64) -> Vec<u8> {
    (0..64u8).filter(|i| mask & (1u64 << i) != 0).collect()
}

fn mask_of(n: u8) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// The (integer, string) counts of a list of argument or key kinds.
fn kind_counts(kinds: &[ArgKind]) -> (usize, usize) {
    let nstr = kinds.iter().filter(|k| **k == ArgKind::Str).count();
    (kinds.len() - nstr, nstr)
}

/// The (integer, string) argument counts of a format.
fn runs_of(f: &Format) -> (usize, usize) {
    kind_counts(&f.args)
}

/// `n` argument or key kinds, each a string with probability `k / of`.
fn random_kinds(rng: &mut Rng, n: usize, k: u64, of: u64) -> Vec<ArgKind> {
    (0..n)
        .map(|_| {
            if rng.chance(k, of) {
                ArgKind::Str
            } else {
                ArgKind::Int
            }
        })
        .collect()
}

/// A random group program the verifier accepts (abi.h: `STP_RX_*`):
/// usually `SAVE 0` first and `SAVE 1, MATCH` last, random SET (of a few
/// random byte sets, some holding the strings' common bytes), JMP and
/// SPLIT (loops and jumps to pc 0 included), SAVE, BOL, EOL and MATCH in
/// between.
fn random_groups(rng: &mut Rng) -> RegexGroups {
    use vm_spec::program::rx_insn;
    let nslots = 2 * (1 + rng.below(4) as u32);
    let nsets = 1 + rng.below(4) as u32;
    let sets = (0..nsets)
        .map(|_| {
            let mut b = [0u8; 32];
            for byte in b.iter_mut() {
                *byte = match rng.below(3) {
                    0 => 0,
                    1 => 0xff,
                    _ => rng.below(256) as u8,
                };
            }
            b[0] &= !1; // never NUL
            b
        })
        .collect();
    if rng.chance(2, 3) {
        // Structured, as the compiler lowers a pattern: SAVE 0, items,
        // SAVE 1, MATCH.
        let mut insns = vec![rx_insn(abi::STP_RX_SAVE, 0)];
        let n = 1 + rng.below(5);
        for _ in 0..n {
            rx_item(rng, &mut insns, nsets, nslots, 3);
        }
        insns.push(rx_insn(abi::STP_RX_SAVE, 1));
        insns.push(rx_insn(abi::STP_RX_MATCH, 0));
        return RegexGroups {
            insns,
            sets,
            nslots,
        };
    }
    let body = 1 + rng.below(14) as u32;
    let ninsn = body + 3;
    let mut insns = vec![rx_insn(abi::STP_RX_SAVE, 0)];
    if rng.chance(1, 8) {
        insns[0] = rx_insn(abi::STP_RX_SET, rng.below(u64::from(nsets)) as u32);
    }
    for _ in 0..body {
        let w = match rng.below(9) {
            0..=2 => rx_insn(abi::STP_RX_SET, rng.below(u64::from(nsets)) as u32),
            3 => rx_insn(abi::STP_RX_JMP, rng.below(u64::from(ninsn)) as u32),
            4 | 5 => rx_insn(abi::STP_RX_SPLIT, rng.below(u64::from(ninsn)) as u32),
            6 => rx_insn(abi::STP_RX_SAVE, rng.below(u64::from(nslots)) as u32),
            7 => rx_insn([abi::STP_RX_BOL, abi::STP_RX_EOL][rng.below(2) as usize], 0),
            _ => rx_insn(abi::STP_RX_MATCH, 0),
        };
        insns.push(w);
    }
    insns.push(rx_insn(abi::STP_RX_SAVE, 1));
    insns.push(rx_insn(abi::STP_RX_MATCH, 0));
    RegexGroups {
        insns,
        sets,
        nslots,
    }
}

/// One random item of a structured group program, appended to `insns`:
/// a SET, BOL / EOL, a group (SAVE 2g, item, SAVE 2g + 1), a greedy loop
/// (L: SPLIT end; item; JMP L), an option (SPLIT end; item) or an
/// alternation (SPLIT b; item; JMP end; b: item), `depth` levels deep.
fn rx_item(rng: &mut Rng, insns: &mut Vec<u32>, nsets: u32, nslots: u32, depth: u32) {
    use vm_spec::program::rx_insn;
    let set = |rng: &mut Rng| rx_insn(abi::STP_RX_SET, rng.below(u64::from(nsets)) as u32);
    let kind = if depth == 0 { 0 } else { rng.below(8) };
    match kind {
        0 | 1 => insns.push(set(rng)),
        2 => insns.push(rx_insn(
            [abi::STP_RX_BOL, abi::STP_RX_EOL][rng.below(2) as usize],
            0,
        )),
        3 | 4 => {
            let g = rng.below(u64::from(nslots / 2)) as u32;
            insns.push(rx_insn(abi::STP_RX_SAVE, 2 * g));
            rx_item(rng, insns, nsets, nslots, depth - 1);
            insns.push(rx_insn(abi::STP_RX_SAVE, 2 * g + 1));
        }
        5 => {
            let l = insns.len();
            insns.push(0);
            rx_item(rng, insns, nsets, nslots, depth - 1);
            insns.push(rx_insn(abi::STP_RX_JMP, l as u32));
            insns[l] = rx_insn(abi::STP_RX_SPLIT, insns.len() as u32);
        }
        6 => {
            let l = insns.len();
            insns.push(0);
            rx_item(rng, insns, nsets, nslots, depth - 1);
            insns[l] = rx_insn(abi::STP_RX_SPLIT, insns.len() as u32);
        }
        _ => {
            let l = insns.len();
            insns.push(0);
            rx_item(rng, insns, nsets, nslots, depth - 1);
            let j = insns.len();
            insns.push(0);
            insns[l] = rx_insn(abi::STP_RX_SPLIT, insns.len() as u32);
            rx_item(rng, insns, nsets, nslots, depth - 1);
            insns[j] = rx_insn(abi::STP_RX_JMP, insns.len() as u32);
        }
    }
}

fn ins(op: u32, a: u8, b: u8, c: u8, imm: i32) -> Insn {
    Insn {
        op: op as u8,
        a,
        b,
        c,
        imm,
    }
}

/// The code generator of one handler.
struct HGen<'a> {
    rng: &'a mut Rng,
    ctx: u32,
    nregs: u8,
    nsregs: u8,
    prog: &'a Program,
    /// Indexes of constants that hold addresses of the environment.
    addr_konsts: Vec<i32>,
    /// Loop counters in use: random statements do not write them.
    reserved: u64,
    /// Generating code that never runs: any register may be read.
    dead: bool,
    depth: u32,
    /// Index into `prog.funcs` of the function being generated.
    me: Option<usize>,
    /// Result kind (`abi::STP_RET_*`) of the handler being generated.
    ret: u32,
    /// Per function of `prog.funcs`: it recurses on its first parameter.
    counters: &'a [bool],
    /// MAXNESTING of the program.
    maxnest: u32,
    /// Indexes of constant strings that hold numbers (for STOL).
    num_strs: &'a [i32],
    /// Iterators of the enclosing foreach loops (bit i: iterator i).
    iters_active: u32,
    /// Inside a try body: no nested try (its TRYEND would disarm the
    /// outer catch under a LOOP of the outer body).
    in_try: bool,
}

impl HGen<'_> {
    /// A register to write (not a live loop counter).
    fn dst(&mut self) -> Option<u8> {
        let free = mask_of(self.nregs) & !self.reserved;
        let v = bits(free);
        self.rng.pick(&v)
    }

    /// A string register to write.
    fn sdst(&mut self) -> Option<u8> {
        (self.nsregs > 0).then(|| self.rng.below(u64::from(self.nsregs)) as u8)
    }

    /// An interesting 32-bit immediate.
    fn imm(&mut self) -> i32 {
        match self.rng.below(4) {
            0 => self.rng.pick(&INTERESTING).unwrap_or(0) as i32,
            1 => self.rng.below(16) as i32 - 8,
            2 => self.rng.next_u64() as i32,
            _ => self.rng.below(1000) as i32,
        }
    }

    /// Writes an integer value into `w` (LDI, LDK or a no-argument helper).
    fn load_int(&mut self, out: &mut Vec<Insn>, d: &mut Defs, w: u8) {
        let nk = self.prog.konsts.len() as u64;
        if nk > 0 && self.rng.chance(1, 3) {
            out.push(ins(abi::STP_OP_LDK, w, 0, 0, self.rng.below(nk) as i32));
        } else {
            let imm = self.imm();
            out.push(ins(abi::STP_OP_LDI, w, 0, 0, imm));
        }
        d.r |= 1u64 << w;
    }

    /// Writes an address of the environment into `w`.
    fn load_addr(&mut self, out: &mut Vec<Insn>, d: &mut Defs, w: u8) {
        match self.rng.pick(&self.addr_konsts) {
            Some(k) if self.rng.chance(7, 8) => out.push(ins(abi::STP_OP_LDK, w, 0, 0, k)),
            _ => {
                let a = STR_BASE as i32 + self.rng.below(8192) as i32;
                out.push(ins(abi::STP_OP_LDI, w, 0, 0, a));
            }
        }
        d.r |= 1u64 << w;
    }

    /// An integer register to read, writing one first if needed.
    fn src(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<u8> {
        if self.dead {
            return Some(self.rng.below(u64::from(self.nregs)) as u8);
        }
        if d.r & mask_of(self.nregs) == 0 || self.rng.chance(1, 6) {
            if let Some(w) = self.dst() {
                self.load_int(out, d, w);
            }
        }
        let v = bits(d.r & mask_of(self.nregs));
        self.rng.pick(&v)
    }

    /// Writes a string into `w` (SLDK, EXECNAME or SMOV).
    fn load_str(&mut self, out: &mut Vec<Insn>, d: &mut Defs, w: u8) {
        let ns = self.prog.strings.len() as u64;
        let have = bits(u64::from(d.s) & mask_of(self.nsregs));
        if ns > 0 && self.rng.chance(2, 3) {
            out.push(ins(abi::STP_OP_SLDK, w, 0, 0, self.rng.below(ns) as i32));
        } else if !have.is_empty() && self.rng.chance(1, 2) {
            let b = self.rng.pick(&have).unwrap_or(0);
            out.push(ins(abi::STP_OP_SMOV, w, b, 0, 0));
        } else {
            out.push(ins(
                abi::STP_OP_CALLS,
                w,
                0,
                0,
                abi::STP_HLP_EXECNAME as i32,
            ));
        }
        d.s |= 1u32 << w;
    }

    /// A string register to read, writing one first if needed.
    fn ssrc(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<u8> {
        if self.nsregs == 0 {
            return None;
        }
        if self.dead {
            return Some(self.rng.below(u64::from(self.nsregs)) as u8);
        }
        if d.s == 0 || self.rng.chance(1, 6) {
            let w = self.rng.below(u64::from(self.nsregs)) as u8;
            self.load_str(out, d, w);
        }
        let v = bits(u64::from(d.s));
        self.rng.pick(&v)
    }

    /// Helpers of result kind `res` allowed in this handler's context.
    fn helpers(&self, res: HelperRes) -> Vec<u32> {
        (0..abi::STP_HLP__COUNT)
            .filter(|&h| {
                let i = &HELPERS[h as usize];
                i.res == res && i.ctx_mask & (1 << self.ctx) != 0
            })
            .collect()
    }

    /// The argument register of helper `h` (0 when it takes none),
    /// loaded with a value that makes the helper interesting.
    fn helper_arg(&mut self, out: &mut Vec<Insn>, d: &mut Defs, h: u32) -> Option<u8> {
        if HELPERS[h as usize].arg == HelperArg::NONE {
            return Some(0);
        }
        if self.dead || self.rng.chance(1, 5) {
            return self.src(out, d);
        }
        let w = self.dst()?;
        // The range of the value, and what it starts below 0.
        let (n, off) = match h {
            abi::STP_HLP_ARG => (8, 0),
            // A CPU number or a randint range, now and then 0 or < 0.
            abi::STP_HLP_CPU_ONLINE | abi::STP_HLP_RANDOM => (70, 2),
            // A pt_regs word index, now and then past ss or huge.
            abi::STP_HLP_REGISTER => (24, 0),
            _ => {
                self.load_addr(out, d, w);
                return Some(w);
            }
        };
        let v = if self.rng.chance(3, 4) {
            self.rng.below(n) as i32 - off
        } else {
            self.imm()
        };
        out.push(ins(abi::STP_OP_LDI, w, 0, 0, v));
        d.r |= 1u64 << w;
        Some(w)
    }

    fn stmt_alu(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        const BIN: [u32; 16] = [
            abi::STP_OP_ADD,
            abi::STP_OP_SUB,
            abi::STP_OP_MUL,
            abi::STP_OP_AND,
            abi::STP_OP_OR,
            abi::STP_OP_XOR,
            abi::STP_OP_SHL,
            abi::STP_OP_SHR,
            abi::STP_OP_EQ,
            abi::STP_OP_NE,
            abi::STP_OP_LT,
            abi::STP_OP_LE,
            abi::STP_OP_GT,
            abi::STP_OP_GE,
            abi::STP_OP_DIV,
            abi::STP_OP_MOD,
        ];
        const UN: [u32; 5] = [
            abi::STP_OP_MOV,
            abi::STP_OP_NEG,
            abi::STP_OP_NOT,
            abi::STP_OP_LNOT,
            abi::STP_OP_ADDI,
        ];
        match self.rng.below(10) {
            0..=4 => {
                let op = self.rng.pick(&BIN)?;
                let b = self.src(out, d)?;
                let c = self.src(out, d)?;
                let a = self.dst()?;
                out.push(ins(op, a, b, c, 0));
                d.r |= 1u64 << a;
            }
            5..=7 => {
                let op = self.rng.pick(&UN)?;
                let b = self.src(out, d)?;
                let a = self.dst()?;
                let imm = if op == abi::STP_OP_ADDI {
                    self.imm()
                } else {
                    0
                };
                out.push(ins(op, a, b, 0, imm));
                d.r |= 1u64 << a;
            }
            _ => {
                let a = self.dst()?;
                self.load_int(out, d, a);
            }
        }
        Some(())
    }

    /// DIV or MOD, often by 0 or as INT64_MIN / -1 on purpose.
    fn stmt_div(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        let op = if self.rng.chance(1, 2) {
            abi::STP_OP_DIV
        } else {
            abi::STP_OP_MOD
        };
        let (b, c) = match self.rng.below(3) {
            0 if !self.dead => {
                let z = self.dst()?;
                out.push(ins(abi::STP_OP_LDI, z, 0, 0, 0));
                d.r |= 1u64 << z;
                (self.src(out, d)?, z)
            }
            1 if !self.dead => {
                let x = self.dst()?;
                let t = self.dst()?;
                let y = self.dst()?;
                out.push(ins(abi::STP_OP_LDI, x, 0, 0, 1));
                out.push(ins(abi::STP_OP_LDI, t, 0, 0, 63));
                out.push(ins(abi::STP_OP_SHL, x, x, t, 0));
                out.push(ins(abi::STP_OP_LDI, y, 0, 0, -1));
                d.r |= (1u64 << x) | (1u64 << t) | (1u64 << y);
                (x, y)
            }
            _ => (self.src(out, d)?, self.src(out, d)?),
        };
        let a = self.dst()?;
        out.push(ins(op, a, b, c, 0));
        d.r |= 1u64 << a;
        Some(())
    }

    fn stmt_global(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        let n = self.prog.globals.len() as u64;
        if n == 0 {
            return None;
        }
        let g = self.rng.below(n) as i32;
        match self.rng.below(3) {
            0 => {
                let a = self.dst()?;
                out.push(ins(abi::STP_OP_LDG, a, 0, 0, g));
                d.r |= 1u64 << a;
            }
            1 => {
                let a = self.src(out, d)?;
                out.push(ins(abi::STP_OP_STG, a, 0, 0, g));
            }
            _ => {
                let b = self.src(out, d)?;
                let a = self.dst()?;
                out.push(ins(abi::STP_OP_GADD, a, b, 0, g));
                d.r |= 1u64 << a;
            }
        }
        Some(())
    }

    fn stmt_string(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        if self.nsregs == 0 {
            return None;
        }
        match self.rng.below(5) {
            0 => {
                let w = self.sdst()?;
                self.load_str(out, d, w);
            }
            1 | 2 => {
                let b = self.ssrc(out, d)?;
                let c = self.ssrc(out, d)?;
                let a = if self.rng.chance(1, 2) {
                    self.rng.pick(&[b, c])?
                } else {
                    self.sdst()?
                };
                out.push(ins(abi::STP_OP_SCAT, a, b, c, 0));
                d.s |= 1u32 << a;
            }
            3 => {
                let b = self.ssrc(out, d)?;
                let c = self.ssrc(out, d)?;
                let a = self.dst()?;
                out.push(ins(abi::STP_OP_SCMP, a, b, c, 0));
                d.r |= 1u64 << a;
            }
            _ => {
                let b = self.ssrc(out, d)?;
                let a = self.dst()?;
                out.push(ins(abi::STP_OP_SLEN, a, b, 0, 0));
                d.r |= 1u64 << a;
            }
        }
        Some(())
    }

    fn stmt_calli(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        let hs = self.helpers(HelperRes::INT);
        let h = self.rng.pick(&hs)?;
        let b = self.helper_arg(out, d, h)?;
        let a = self.dst()?;
        out.push(ins(abi::STP_OP_CALLI, a, b, 0, h as i32));
        d.r |= 1u64 << a;
        Some(())
    }

    fn stmt_calls(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        let hs = self.helpers(HelperRes::STR);
        let h = self.rng.pick(&hs)?;
        let a = self.sdst()?;
        let b = self.helper_arg(out, d, h)?;
        out.push(ins(abi::STP_OP_CALLS, a, b, 0, h as i32));
        d.s |= 1u32 << a;
        Some(())
    }

    /// Bases of an argument run of `ni` integer and `ns` string registers
    /// (0 for an empty run), or `None` if the files are too small.
    fn run_bases(&mut self, ni: usize, ns: usize) -> Option<(u8, u8)> {
        if ni > usize::from(self.nregs) || ns > usize::from(self.nsregs) {
            return None;
        }
        let b = if ni == 0 {
            0
        } else {
            self.rng.below((usize::from(self.nregs) - ni + 1) as u64) as u8
        };
        let c = if ns == 0 {
            0
        } else {
            self.rng.below((usize::from(self.nsregs) - ns + 1) as u64) as u8
        };
        Some((b, c))
    }

    /// Writes the registers of the runs `r[b..b+ni)`, `s[c..c+ns)` that
    /// are not written yet (and some that are), except loop counters and
    /// the registers of `keep`.
    fn fill_runs(
        &mut self,
        out: &mut Vec<Insn>,
        d: &mut Defs,
        (b, ni): (u8, usize),
        (c, ns): (u8, usize),
        keep: u64,
    ) -> Option<()> {
        if self.dead {
            return Some(());
        }
        for r in b..b + ni as u8 {
            let have = d.r & (1u64 << r) != 0;
            if (self.reserved | keep) & (1u64 << r) != 0 || (have && self.rng.chance(3, 4)) {
                continue;
            }
            if self.rng.chance(1, 3) {
                let hs = self.helpers(HelperRes::INT);
                let h = self.rng.pick(&hs)?;
                if HELPERS[h as usize].arg == HelperArg::NONE {
                    out.push(ins(abi::STP_OP_CALLI, r, 0, 0, h as i32));
                    d.r |= 1u64 << r;
                    continue;
                }
            }
            self.load_int(out, d, r);
        }
        for s in c..c + ns as u8 {
            let have = d.s & (1u32 << s) != 0;
            if have && self.rng.chance(3, 4) {
                continue;
            }
            if self.rng.chance(1, 4) {
                let hs = self.helpers(HelperRes::STR);
                if let Some(h) = self.rng.pick(&hs) {
                    if let Some(arg) = self.helper_arg(out, d, h) {
                        out.push(ins(abi::STP_OP_CALLS, s, arg, 0, h as i32));
                        d.s |= 1u32 << s;
                        continue;
                    }
                }
            }
            self.load_str(out, d, s);
        }
        Some(())
    }

    /// A format whose runs fit this handler's files.
    fn pick_format(&mut self) -> Option<(usize, usize, usize)> {
        let fits: Vec<usize> = (0..self.prog.formats.len())
            .filter(|&k| {
                let (ni, ns) = runs_of(&self.prog.formats[k]);
                ni <= usize::from(self.nregs) && ns <= usize::from(self.nsregs)
            })
            .collect();
        let f = self.rng.pick(&fits)?;
        let (ni, ns) = runs_of(&self.prog.formats[f]);
        Some((f, ni, ns))
    }

    fn stmt_printf(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        let (f, ni, ns) = self.pick_format()?;
        let (b, c) = self.run_bases(ni, ns)?;
        self.fill_runs(out, d, (b, ni), (c, ns), 0)?;
        out.push(ins(abi::STP_OP_PRINTF, 0, b, c, f as i32));
        Some(())
    }

    /// SPRINTF into a register outside its string run.
    fn stmt_sprintf(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        let (f, ni, ns) = self.pick_format()?;
        let (b, c) = self.run_bases(ni, ns)?;
        let free: Vec<u8> = (0..self.nsregs)
            .filter(|&x| ns == 0 || x < c || x >= c + ns as u8)
            .collect();
        let a = self.rng.pick(&free)?;
        self.fill_runs(out, d, (b, ni), (c, ns), 0)?;
        out.push(ins(abi::STP_OP_SPRINTF, a, b, c, f as i32));
        d.s |= 1u32 << a;
        Some(())
    }

    /// Loads `r[w]` with one of `vals` (or any interesting value), unless
    /// it is a loop counter or the code is dead.
    fn load_choice(&mut self, out: &mut Vec<Insn>, d: &mut Defs, w: u8, vals: &[i64]) {
        if self.dead || self.reserved & (1u64 << w) != 0 {
            return;
        }
        if d.r & (1u64 << w) != 0 && self.rng.chance(1, 5) {
            return;
        }
        let v = if self.rng.chance(4, 5) {
            self.rng.pick(vals).unwrap_or(0)
        } else {
            i64::from(self.imm())
        };
        match i32::try_from(v) {
            Ok(v) => out.push(ins(abi::STP_OP_LDI, w, 0, 0, v)),
            Err(_) => {
                // LDI takes 32 bits: shift a 32-bit value into place.
                let t = self.dst_except(1u64 << w);
                match t {
                    Some(t) => {
                        out.push(ins(abi::STP_OP_LDI, w, 0, 0, (v >> 32) as i32));
                        out.push(ins(abi::STP_OP_LDI, t, 0, 0, 32));
                        out.push(ins(abi::STP_OP_SHL, w, w, t, 0));
                        d.r |= 1u64 << t;
                    }
                    None => out.push(ins(abi::STP_OP_LDI, w, 0, 0, v as i32)),
                }
            }
        }
        d.r |= 1u64 << w;
    }

    /// Sometimes stores `r[a]` into a global, where the differential
    /// check sees it after every run (registers only at RET).
    fn observe(&mut self, out: &mut Vec<Insn>, a: u8) {
        let n = self.prog.globals.len() as u64;
        if n > 0 && self.rng.chance(1, 2) {
            out.push(ins(abi::STP_OP_STG, a, 0, 0, self.rng.below(n) as i32));
        }
    }

    /// Writes `op a, b, c, imm` with a fresh integer register `a`, then
    /// defined, as the result (and maybe stores it to a global: observe).
    fn int_result(
        &mut self,
        out: &mut Vec<Insn>,
        d: &mut Defs,
        op: u32,
        b: u8,
        c: u8,
        imm: i32,
    ) -> Option<()> {
        let a = self.dst()?;
        out.push(ins(op, a, b, c, imm));
        d.r |= 1u64 << a;
        self.observe(out, a);
        Some(())
    }

    /// An integer operand: a fresh register loaded from `vals`
    /// (load_choice), or any defined one when that left it unwritten.
    fn src_of(&mut self, out: &mut Vec<Insn>, d: &mut Defs, vals: &[i64]) -> Option<u8> {
        let c = self.dst()?;
        self.load_choice(out, d, c, vals);
        if d.r & (1u64 << c) != 0 || self.dead {
            Some(c)
        } else {
            self.src(out, d)
        }
    }

    /// A register to write that is not a loop counter nor in `except`.
    fn dst_except(&mut self, except: u64) -> Option<u8> {
        let v = bits(mask_of(self.nregs) & !self.reserved & !except);
        self.rng.pick(&v)
    }

    /// The string builtins: SSUB, SFIND, STOL, SREPL, STEXT, STEXTN, STOK,
    /// SCHAR and
    /// (rarely) ERROR, with their edge cases loaded on purpose.
    fn stmt_strop(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        if self.nsregs == 0 {
            return None;
        }
        const STARTS: [i64; 14] = [
            -1,
            0,
            0,
            1,
            2,
            5,
            15,
            16,
            100,
            511,
            4095,
            i64::MIN,
            i64::MAX,
            1 << 32,
        ];
        const LENS: [i64; 11] = [-1, 0, 1, 1, 3, 10, 1000, 4096, i64::MAX, i64::MIN, 1 << 32];
        const BASES: [i64; 14] = [0, 0, 0, 0, 0, 2, 8, 10, 10, 16, 16, 36, 1, 37];
        match self.rng.below(13) {
            0 | 1 => {
                // SSUB a, b, (start, len)
                if self.nregs < 2 {
                    return None;
                }
                let b = self.ssrc(out, d)?;
                let c = self.rng.below(u64::from(self.nregs) - 1) as u8;
                self.load_choice(out, d, c, &STARTS);
                self.load_choice(out, d, c + 1, &LENS);
                if !self.dead && d.r & (3u64 << c) != 3u64 << c {
                    return None;
                }
                let a = self.sdst()?;
                out.push(ins(abi::STP_OP_SSUB, a, b, c, 0));
                d.s |= 1u32 << a;
            }
            2 | 3 => {
                let b = self.ssrc(out, d)?;
                let c = self.ssrc(out, d)?;
                self.int_result(out, d, abi::STP_OP_SFIND, b, c, 0)?;
            }
            4 | 5 => {
                let b = match self.rng.pick(self.num_strs) {
                    Some(k) if !self.dead && self.rng.chance(3, 4) => {
                        let w = self.sdst()?;
                        out.push(ins(abi::STP_OP_SLDK, w, 0, 0, k));
                        d.s |= 1u32 << w;
                        w
                    }
                    _ => self.ssrc(out, d)?,
                };
                let c = self.src_of(out, d, &BASES)?;
                self.int_result(out, d, abi::STP_OP_STOL, b, c, 0)?;
            }
            6 | 7 => {
                // SREPL a, b, (from, to): a is none of b, c, c + 1.
                if self.nsregs < 3 {
                    return None;
                }
                let c = self.rng.below(u64::from(self.nsregs) - 1) as u8;
                if !self.dead {
                    for w in [c, c + 1] {
                        if d.s & (1u32 << w) == 0 || self.rng.chance(1, 2) {
                            self.load_str(out, d, w);
                        }
                    }
                }
                let b = if self.rng.chance(1, 4) {
                    c
                } else {
                    self.ssrc(out, d)?
                };
                if !self.dead && d.s & (3u32 << c) != 3u32 << c {
                    return None;
                }
                let free: Vec<u8> = (0..self.nsregs)
                    .filter(|&x| x != b && x != c && x != c + 1)
                    .collect();
                let a = self.rng.pick(&free)?;
                out.push(ins(abi::STP_OP_SREPL, a, b, c, 0));
                d.s |= 1u32 << a;
            }
            8 | 9 => {
                if self.nsregs < 2 {
                    return None;
                }
                let b = self.ssrc(out, d)?;
                match self.rng.below(3) {
                    0 => {
                        let free: Vec<u8> = (0..self.nsregs).filter(|&x| x != b).collect();
                        let a = self.rng.pick(&free)?;
                        out.push(ins(abi::STP_OP_STEXT, a, b, 0, 0));
                        d.s |= 1u32 << a;
                    }
                    1 => {
                        // STEXTN a, b, (len, quoted): a is not b.
                        if self.nregs < 2 {
                            return None;
                        }
                        let c = self.rng.below(u64::from(self.nregs) - 1) as u8;
                        self.load_choice(out, d, c, &[0, 1, 3, 4, 5, 6, 10, 12, 15, -1, 4096]);
                        self.load_choice(out, d, c + 1, &[0, 1, 2, -1]);
                        if !self.dead && d.r & (3u64 << c) != 3u64 << c {
                            return None;
                        }
                        let free: Vec<u8> = (0..self.nsregs).filter(|&x| x != b).collect();
                        let a = self.rng.pick(&free)?;
                        out.push(ins(abi::STP_OP_STEXTN, a, b, c, 0));
                        d.s |= 1u32 << a;
                    }
                    _ => {
                        // STOK a, input b, delimiters c (any may alias).
                        let c = self.ssrc(out, d)?;
                        let a = self.sdst()?;
                        out.push(ins(abi::STP_OP_STOK, a, b, c, 0));
                        d.s |= 1u32 << a;
                    }
                }
            }
            10 | 11 if !self.prog.regexes.is_empty() && self.rng.chance(1, 3) => {
                // REMATCH a, b, regex (a random DFA table, see generate);
                // stmt_regex_groups makes REMATCHS.
                let b = self.ssrc(out, d)?;
                let a = self.dst()?;
                let k = self.rng.below(self.prog.regexes.len() as u64) as i32;
                out.push(ins(abi::STP_OP_REMATCH, a, b, 0, k));
                d.r |= 1u64 << a;
                self.observe(out, a);
            }
            10 | 11
                if u32::from(self.nsregs) <= abi::STP_MAX_SREGS - 2 && self.rng.chance(1, 4) =>
            {
                // PRETTY a, value b, node c, depth: a generated image has
                // no PRETTY nodes, so any node prints "?" (opcodes.h).
                let b = self.src_of(out, d, &STARTS)?;
                let c = self.src_of(out, d, &STARTS)?;
                let a = self.sdst()?;
                let deep = i32::from(self.rng.chance(1, 2));
                out.push(ins(abi::STP_OP_PRETTY, a, b, c, deep));
                d.s |= 1u32 << a;
            }
            10 | 11 => {
                let b = self.ssrc(out, d)?;
                let c = self.src_of(out, d, &STARTS)?;
                self.int_result(out, d, abi::STP_OP_SCHAR, b, c, 0)?;
            }
            _ if self.rng.chance(1, 2) => {
                // system(s[b]): one STP_REC_SYSTEM record, the run goes on.
                let b = self.ssrc(out, d)?;
                out.push(ins(abi::STP_OP_SYSTEM, 0, b, 0, 0));
            }
            _ => {
                // ERROR ends the run: keep it rare.
                if !self.rng.chance(1, 3) {
                    return None;
                }
                let b = self.ssrc(out, d)?;
                out.push(ins(abi::STP_OP_ERROR, 0, b, 0, 0));
            }
        }
        Some(())
    }

    /// FCALL / FCALLI / FCALLS of a random function that fits this
    /// handler's files; from a function, mostly one defined after it (so
    /// most call chains end), sometimes any (recursion, mutual too).
    fn stmt_fcall(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        let me = self.me;
        let fits: Vec<usize> = (0..self.prog.funcs.len())
            .filter(|&k| {
                let f = &self.prog.funcs[k];
                usize::from(f.nparams) <= usize::from(self.nregs)
                    && usize::from(f.nsparams) <= usize::from(self.nsregs)
                    && (f.ret != abi::STP_RET_STR as u8 || self.nsregs > 0)
            })
            .collect();
        let later: Vec<usize> = fits
            .iter()
            .copied()
            .filter(|&k| match me {
                Some(m) => k > m,
                None => true,
            })
            .collect();
        let k = if !later.is_empty() && self.rng.chance(5, 6) {
            self.rng.pick(&later)?
        } else {
            self.rng.pick(&fits)?
        };
        let f = self.prog.funcs[k].clone();
        let (ni, ns) = (usize::from(f.nparams), usize::from(f.nsparams));
        let (b, c) = self.run_bases(ni, ns)?;
        let mut keep = 0;
        if ni > 0 && self.counters.get(k).copied().unwrap_or(false) && self.rng.chance(2, 3) {
            // The callee recurses on its first parameter: a depth below,
            // at or past MAXNESTING, or one that never reaches 0.
            let n = i64::from(self.maxnest);
            let vals = [0, 1, 2, 3, n - 1, n, n + 1, 100, -1];
            self.load_choice(out, d, b, &vals);
            keep = 1u64 << b;
        }
        self.fill_runs(out, d, (b, ni), (c, ns), keep)?;
        self.emit_call(out, d, &f, b, c, false)
    }

    /// The call instruction of `f` with runs at `b`, `c`; a `guarded`
    /// call may be jumped over, so its result register is not written on
    /// every path.
    fn emit_call(
        &mut self,
        out: &mut Vec<Insn>,
        d: &mut Defs,
        f: &FuncSig,
        b: u8,
        c: u8,
        guarded: bool,
    ) -> Option<()> {
        match u32::from(f.ret) {
            abi::STP_RET_LONG => {
                let a = self.dst()?;
                out.push(ins(abi::STP_OP_FCALLI, a, b, c, f.handler as i32));
                if !guarded {
                    d.r |= 1u64 << a;
                }
            }
            abi::STP_RET_STR => {
                let a = self.sdst()?;
                out.push(ins(abi::STP_OP_FCALLS, a, b, c, f.handler as i32));
                if !guarded {
                    d.s |= 1u32 << a;
                }
            }
            _ => out.push(ins(abi::STP_OP_FCALL, 0, b, c, f.handler as i32)),
        }
        Some(())
    }

    /// The return instruction of this handler (RET in a probe handler or
    /// a function without result, RETI / RETS with a written register).
    fn stmt_return(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        match self.ret {
            abi::STP_RET_LONG => {
                let a = self.src(out, d)?;
                out.push(ins(abi::STP_OP_RETI, a, 0, 0, 0));
            }
            abi::STP_RET_STR => {
                let a = self.ssrc(out, d)?;
                out.push(ins(abi::STP_OP_RETS, a, 0, 0, 0));
            }
            _ => out.push(ins(abi::STP_OP_RET, 0, 0, 0, 0)),
        }
        Some(())
    }

    /// The start of a function that recurses on its first parameter:
    /// `r0 -= 1; if (0 < r0) self(r0, ...)`.
    fn recursion_prologue(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        let me = self.me?;
        let f = self.prog.funcs.get(me)?.clone();
        let (ni, ns) = (usize::from(f.nparams), usize::from(f.nsparams));
        if ni == 0 {
            return None;
        }
        out.push(ins(abi::STP_OP_ADDI, 0, 0, 0, -1));
        let c = self.run_bases(0, ns)?.1;
        self.fill_runs(out, d, (0, ni), (c, ns), 1)?;
        let run = mask_of(ni as u8);
        let guard = match self.dst_except(run) {
            Some(t) => {
                out.push(ins(abi::STP_OP_LDI, t, 0, 0, 0));
                out.push(ins(abi::STP_OP_LT, t, t, 0, 0));
                d.r |= 1u64 << t;
                t
            }
            None => 0,
        };
        out.push(ins(abi::STP_OP_JZ, guard, 0, 0, 1));
        self.emit_call(out, d, &f, 0, c, true)
    }

    /// `if (c) body` with JZ or JNZ.
    fn stmt_if(&mut self, out: &mut Vec<Insn>, d: &mut Defs, budget: u32) -> Option<()> {
        let c = self.src(out, d)?;
        let mut db = *d;
        let body = self.block(&mut db, budget);
        let op = if self.rng.chance(1, 2) {
            abi::STP_OP_JZ
        } else {
            abi::STP_OP_JNZ
        };
        out.push(ins(op, c, 0, 0, body.len() as i32));
        out.extend(body);
        Some(())
    }

    /// `if (c) then else other`: JZ over then and a JMP, JMP over else.
    fn stmt_if_else(&mut self, out: &mut Vec<Insn>, d: &mut Defs, budget: u32) -> Option<()> {
        let c = self.src(out, d)?;
        let (mut dt, mut de) = (*d, *d);
        let then = self.block(&mut dt, budget / 2);
        let other = self.block(&mut de, budget / 2);
        out.push(ins(abi::STP_OP_JZ, c, 0, 0, then.len() as i32 + 1));
        out.extend(then);
        out.push(ins(abi::STP_OP_JMP, 0, 0, 0, other.len() as i32));
        out.extend(other);
        d.meet(&dt, &de);
        Some(())
    }

    /// A counted loop: `k = n; L: body1; JZ k, out; body2; k -= 1; LOOP L`.
    /// A large or negative n runs until MAXACTION stops it.
    fn stmt_loop(&mut self, out: &mut Vec<Insn>, d: &mut Defs, budget: u32) -> Option<()> {
        let k = self.dst()?;
        let n = match self.rng.below(8) {
            0 => 0,
            1 => 1,
            2 => 2,
            3 => 3,
            4 => 10,
            5 => 100,
            6 => -1,
            _ => 100_000,
        };
        out.push(ins(abi::STP_OP_LDI, k, 0, 0, n));
        d.r |= 1u64 << k;
        self.reserved |= 1u64 << k;
        let body1 = self.block(d, budget / 2);
        let mut d2 = *d;
        let body2 = self.block(&mut d2, budget / 2);
        self.reserved &= !(1u64 << k);
        let len = body1.len() + 1 + body2.len() + 2;
        out.extend(body1);
        out.push(ins(abi::STP_OP_JZ, k, 0, 0, body2.len() as i32 + 2));
        out.extend(body2);
        out.push(ins(abi::STP_OP_ADDI, k, k, 0, -1));
        out.push(ins(abi::STP_OP_LOOP, 0, 0, 0, -(len as i32)));
        Some(())
    }

    /// `TRY m, handler; body; TRYEND; JMP over; handler: catch body`
    /// (stap's try/catch): an error in the body or in a function it
    /// calls goes on at the handler with its message in s[m].
    fn stmt_try(&mut self, out: &mut Vec<Insn>, d: &mut Defs, budget: u32) -> Option<()> {
        if self.in_try {
            return None;
        }
        let m = self.sdst()?;
        let mut db = *d;
        db.s |= 1u32 << m;
        self.in_try = true;
        let body = self.block(&mut db, budget / 2);
        self.in_try = false;
        let mut dc = *d;
        dc.s |= 1u32 << m;
        let mut handler = Vec::new();
        if self.rng.chance(1, 2) {
            let a = self.dst()?;
            handler.push(ins(abi::STP_OP_SLEN, a, m, 0, 0));
            dc.r |= 1u64 << a;
            self.observe(&mut handler, a);
        }
        handler.extend(self.block(&mut dc, budget / 2));
        out.push(ins(abi::STP_OP_TRY, m, 0, 0, body.len() as i32 + 2));
        out.extend(body);
        out.push(ins(abi::STP_OP_TRYEND, 0, 0, 0, 0));
        out.push(ins(abi::STP_OP_JMP, 0, 0, 0, handler.len() as i32));
        out.extend(handler);
        d.meet(&db, &dc);
        Some(())
    }

    /// `L: body; LOOP L`: only MAXACTION ends it. What follows is dead
    /// unless an enclosing jump lands after it.
    fn stmt_forever(&mut self, out: &mut Vec<Insn>, d: &mut Defs, budget: u32) -> Option<()> {
        let mut db = *d;
        let body = self.block(&mut db, budget);
        let len = body.len() + 1;
        out.extend(body);
        out.push(ins(abi::STP_OP_LOOP, 0, 0, 0, -(len as i32)));
        Some(())
    }

    /// `JMP over; <code that never runs>`: it may read any register.
    fn stmt_dead(&mut self, out: &mut Vec<Insn>, budget: u32) -> Option<()> {
        let was = self.dead;
        self.dead = true;
        let mut dd = Defs {
            r: mask_of(self.nregs),
            s: mask_of(self.nsregs) as u32,
        };
        let body = self.block(&mut dd, budget);
        self.dead = was;
        out.push(ins(abi::STP_OP_JMP, 0, 0, 0, body.len() as i32));
        out.extend(body);
        Some(())
    }

    /// One statement; `None` when the chosen kind does not fit the handler
    /// (the caller just tries again).
    /// REMATCHS on a regex with a group program (over a string loaded for
    /// it, or any string register), then, most of the time only when it
    /// matched (JZ), one to three of NGROUPS and MATCHED of a group in
    /// range (7 in 8) or not (-1, ngroups, 1000), the results observed in
    /// globals (MATCHED's by its length).
    fn stmt_regex_groups(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        let with: Vec<usize> = (0..self.prog.regexes.len())
            .filter(|&k| self.prog.regexes[k].groups.is_some())
            .collect();
        let k = self.rng.pick(&with)?;
        let ngroups = self.prog.regexes[k].groups.as_ref()?.ngroups();
        let b = if self.dead || self.rng.chance(1, 4) {
            self.ssrc(out, d)?
        } else {
            let w = self.sdst()?;
            self.load_str(out, d, w);
            d.s |= 1u32 << w;
            w
        };
        let a = self.dst()?;
        out.push(ins(abi::STP_OP_REMATCHS, a, b, 0, k as i32));
        d.r |= 1u64 << a;
        self.observe(out, a);
        let guarded = self.rng.chance(3, 4);
        let mut block = Vec::new();
        let mut bd = *d;
        for _ in 0..1 + self.rng.below(3) {
            if self.rng.chance(1, 4) {
                let n = self.dst()?;
                block.push(ins(abi::STP_OP_NGROUPS, n, 0, 0, 0));
                bd.r |= 1u64 << n;
                self.observe(&mut block, n);
                continue;
            }
            let g = if self.rng.chance(7, 8) {
                self.rng.below(u64::from(ngroups)) as i32
            } else {
                [-1, ngroups as i32, 1000][self.rng.below(3) as usize]
            };
            let c = self.dst()?;
            block.push(ins(abi::STP_OP_LDI, c, 0, 0, g));
            bd.r |= 1u64 << c;
            let w = self.sdst()?;
            block.push(ins(abi::STP_OP_MATCHED, w, c, 0, 0));
            bd.s |= 1u32 << w;
            let n = self.dst()?;
            block.push(ins(abi::STP_OP_SLEN, n, w, 0, 0));
            bd.r |= 1u64 << n;
            self.observe(&mut block, n);
        }
        if guarded {
            // JZ a reads a, written above; the block's writes are not on
            // every path.
            out.push(ins(abi::STP_OP_JZ, a, 0, 0, block.len() as i32));
            out.extend(block);
        } else {
            out.extend(block);
            *d = bd;
        }
        Some(())
    }

    fn stmt(&mut self, out: &mut Vec<Insn>, d: &mut Defs, budget: u32) -> Option<()> {
        let nest = self.depth < 3 && budget > 2;
        match self.rng.below(140) {
            136..=139 => self.stmt_regex_groups(out, d),
            116..=121 => self.stmt_stat(out, d),
            122..=129 => self.stmt_map(out, d),
            130..=132 => self.stmt_map_fill(out, d),
            133..=135 if nest => self.nested(|g| g.stmt_foreach(out, d, budget / 2)),
            100..=106 => self.stmt_strop(out, d),
            107..=109 => self.stmt_sprintf(out, d),
            110..=115 => self.stmt_fcall(out, d),
            0..=24 => self.stmt_alu(out, d),
            25..=31 => self.stmt_div(out, d),
            32..=40 => self.stmt_global(out, d),
            41..=54 => self.stmt_string(out, d),
            55..=63 => self.stmt_calli(out, d),
            64..=71 => self.stmt_calls(out, d),
            72..=81 => self.stmt_printf(out, d),
            82 => {
                // Now and then abort(): EXIT that also ends the run.
                let op = if self.rng.chance(1, 4) {
                    abi::STP_OP_ABORT
                } else {
                    abi::STP_OP_EXIT
                };
                out.push(ins(op, 0, 0, 0, 0));
                Some(())
            }
            83..=87 if nest => self.nested(|g| g.stmt_if(out, d, budget / 2)),
            88..=90 if nest => self.nested(|g| g.stmt_if_else(out, d, budget / 2)),
            91..=94 if nest => self.nested(|g| g.stmt_loop(out, d, budget / 2)),
            95 if nest && self.rng.chance(1, 3) => {
                self.nested(|g| g.stmt_forever(out, d, budget / 3))
            }
            96 if nest => self.nested(|g| g.stmt_dead(out, budget / 3)),
            98 | 99 if nest => self.nested(|g| g.stmt_try(out, d, budget / 2)),
            97 if self.depth > 0 && self.rng.chance(1, 2) => self.stmt_return(out, d),
            _ => {
                out.push(ins(abi::STP_OP_NOP, 0, 0, 0, 0));
                Some(())
            }
        }
    }

    /// A statistic instruction: `<<<` of interesting values, each
    /// extractor (on empty statistics too: EMPTY_AGG), STHIST and STBKT
    /// with indexes around the edges (HIST_INDEX).
    fn stmt_stat(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        const VALS: [i64; 16] = [
            0,
            1,
            -1,
            2,
            3,
            5,
            100,
            -100,
            1000,
            1 << 20,
            -(1 << 31),
            1 << 31,
            i64::MAX,
            i64::MIN,
            64,
            -7,
        ];
        let n = self.scalar_stats();
        if n == 0 {
            return None;
        }
        let k = self.rng.below(n) as usize;
        let st = self.prog.stats[k].clone();
        let imm = k as i32;
        let has_hist = st.hist != Hist::None;
        match self.rng.below(12) {
            0..=4 => {
                let a = self.dst()?;
                self.load_choice(out, d, a, &VALS);
                out.push(ins(abi::STP_OP_STADD, a, 0, 0, imm));
            }
            5 | 6 if self.rng.chance(1, 6) => {
                // `delete s`: every CPU's copy emptied.
                out.push(ins(abi::STP_OP_STCLR, 0, 0, 0, imm));
            }
            5 | 6 => {
                let op = if self.rng.chance(1, 2) {
                    abi::STP_OP_STCOUNT
                } else {
                    abi::STP_OP_STSUM
                };
                self.int_result(out, d, op, 0, 0, imm)?;
            }
            7..=9 => {
                let mut ops = vec![abi::STP_OP_STMIN, abi::STP_OP_STMAX, abi::STP_OP_STAVG];
                if st.variance {
                    ops.push(abi::STP_OP_STVAR);
                    ops.push(abi::STP_OP_STVAR);
                }
                let op = self.rng.pick(&ops)?;
                self.int_result(out, d, op, 0, 0, imm)?;
            }
            10 if has_hist => match self.sdst() {
                // STHISTS: the drawing as a string (sprint(@hist_log(s))).
                Some(a) if self.rng.chance(1, 3) => {
                    out.push(ins(abi::STP_OP_STHISTS, a, 0, 0, imm));
                    d.s |= 1u32 << a;
                }
                _ => out.push(ins(abi::STP_OP_STHIST, 0, 0, 0, imm)),
            },
            _ if has_hist => {
                let nb = i64::from(st.hist.nbuckets());
                let b = self.dst()?;
                let idx = [
                    -1,
                    0,
                    1,
                    2,
                    63,
                    64,
                    65,
                    66,
                    nb - 2,
                    nb - 1,
                    nb,
                    128,
                    i64::MIN,
                ];
                self.load_choice(out, d, b, &idx);
                self.int_result(out, d, abi::STP_OP_STBKT, b, 0, imm)?;
            }
            _ => return None,
        }
        Some(())
    }

    /// The scalar statistics (those before the statistics arrays').
    fn scalar_stats(&self) -> u64 {
        self.prog.stats.iter().take_while(|s| !s.array).count() as u64
    }

    /// `s <<< v` for a random statistic (handlers often start with a few,
    /// so that the extractors find samples).
    fn stat_add(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        let n = self.scalar_stats();
        if n == 0 {
            return None;
        }
        let k = self.rng.below(n) as i32;
        let a = self.dst()?;
        let v = [0, 1, -1, 3, 17, 100, -100, 1 << 33, i64::MIN, i64::MAX];
        self.load_choice(out, d, a, &v);
        out.push(ins(abi::STP_OP_STADD, a, 0, 0, k));
        Some(())
    }

    /// A counted loop that inserts keys `n, n - 1, ..., 1` (the first
    /// integer key is the counter) into a map, `n` around its capacity:
    /// fills it to ARRAY_OVERFLOW / ARRAY_SIZE, or evicts in a wrap map.
    fn stmt_map_fill(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        if self.dead {
            return None;
        }
        let n = self.prog.maps.len() as u64;
        if n == 0 {
            return None;
        }
        let id = self.rng.below(n) as usize;
        let m = self.prog.maps[id].clone();
        let (ni, _) = Self::key_counts(&m);
        if ni == 0 {
            return None;
        }
        let (b, c) = self.key_bases(&m)?;
        self.fill_keys(out, d, &m, b, c);
        let k = self.dst_except(mask_of(ni as u8) << b)?;
        let cap = i64::from(m.capacity);
        let counts = [cap - 1, cap, cap, cap + 1, 2 * cap + 1, 3];
        let cnt = self.rng.pick(&counts)?.min(5000) as i32;
        out.push(ins(abi::STP_OP_LDI, k, 0, 0, cnt));
        d.r |= 1u64 << k;
        let insert = if m.value == MapValue::Stat {
            ins(abi::STP_OP_MSTADD, k, b, c, id as i32)
        } else if m.value == MapValue::Long {
            if self.rng.chance(1, 3) {
                ins(
                    abi::STP_OP_MOPR,
                    k,
                    b,
                    c,
                    imm_pack(id as u16, abi::STP_OP_ADD as u16),
                )
            } else {
                ins(abi::STP_OP_MSET, k, b, c, id as i32)
            }
        } else {
            let a = self.ssrc(out, d)?;
            ins(abi::STP_OP_MSETS, a, b, c, id as i32)
        };
        out.push(ins(abi::STP_OP_JZ, k, 0, 0, 4));
        out.push(ins(abi::STP_OP_MOV, b, k, 0, 0));
        out.push(insert);
        out.push(ins(abi::STP_OP_ADDI, k, k, 0, -1));
        out.push(ins(abi::STP_OP_LOOP, 0, 0, 0, -5));
        Some(())
    }

    /// The (integer, string) key counts of map `m`.
    fn key_counts(m: &MapDecl) -> (usize, usize) {
        kind_counts(&m.keys)
    }

    /// Bases of a key run of map `m` whose integer registers avoid the
    /// loop counters (MNEXT writes them), or `None`.
    fn key_bases(&mut self, m: &MapDecl) -> Option<(u8, u8)> {
        let (ni, ns) = Self::key_counts(m);
        for _ in 0..4 {
            let (b, c) = self.run_bases(ni, ns)?;
            let run = mask_of(ni as u8) << b;
            if run & self.reserved == 0 {
                return Some((b, c));
            }
        }
        None
    }

    /// Loads the key run of map `m` at `b`, `c` with keys from a small
    /// set (so that keys repeat: hits, updates, deletes of present keys).
    fn fill_keys(&mut self, out: &mut Vec<Insn>, d: &mut Defs, m: &MapDecl, b: u8, c: u8) {
        if self.dead {
            return;
        }
        let (ni, ns) = Self::key_counts(m);
        for r in b..b + ni as u8 {
            let have = d.r & (1u64 << r) != 0;
            if self.reserved & (1u64 << r) != 0 || (have && self.rng.chance(1, 3)) {
                continue;
            }
            let v = if self.rng.chance(7, 8) {
                self.rng.below(4) as i32
            } else {
                self.imm()
            };
            out.push(ins(abi::STP_OP_LDI, r, 0, 0, v));
            d.r |= 1u64 << r;
        }
        let nstrs = self.prog.strings.len() as u64;
        for s in c..c + ns as u8 {
            if d.s & (1u32 << s) != 0 && self.rng.chance(1, 3) {
                continue;
            }
            if nstrs > 0 && self.rng.chance(3, 4) {
                let k = self.rng.below(nstrs.min(3)) as i32;
                out.push(ins(abi::STP_OP_SLDK, s, 0, 0, k));
                d.s |= 1u32 << s;
            } else {
                self.load_str(out, d, s);
            }
        }
    }

    /// One map instruction on a random map, keys from a small set.
    fn stmt_map(&mut self, out: &mut Vec<Insn>, d: &mut Defs) -> Option<()> {
        let n = self.prog.maps.len() as u64;
        if n == 0 {
            return None;
        }
        let id = self.rng.below(n) as usize;
        let m = self.prog.maps[id].clone();
        let (b, c) = self.key_bases(&m)?;
        self.fill_keys(out, d, &m, b, c);
        self.map_insn(out, d, &m, id, b, c)
    }

    /// One map instruction on map `id` with its keys at `b`, `c`.
    fn map_insn(
        &mut self,
        out: &mut Vec<Insn>,
        d: &mut Defs,
        m: &MapDecl,
        id: usize,
        b: u8,
        c: u8,
    ) -> Option<()> {
        const OPS: [u32; 10] = [
            abi::STP_OP_ADD,
            abi::STP_OP_SUB,
            abi::STP_OP_MUL,
            abi::STP_OP_DIV,
            abi::STP_OP_MOD,
            abi::STP_OP_AND,
            abi::STP_OP_OR,
            abi::STP_OP_XOR,
            abi::STP_OP_SHL,
            abi::STP_OP_SHR,
        ];
        const VALS: [i64; 10] = [0, 1, -1, 2, 3, 7, 63, 64, i64::MIN, i64::MAX];
        let imm = id as i32;
        if m.value == MapValue::Stat && self.rng.chance(3, 4) {
            return self.stat_array_insn(out, d, m, imm, b, c);
        }
        let long = m.value == MapValue::Long;
        match self.rng.below(16) {
            // A statistics array takes no MGET / MSET / MOPR.
            0..=9 if m.value == MapValue::Stat => {
                return self.stat_array_insn(out, d, m, imm, b, c)
            }
            0..=2 if long => {
                self.int_result(out, d, abi::STP_OP_MGET, b, c, imm)?;
            }
            0..=2 => {
                let a = self.sdst()?;
                out.push(ins(abi::STP_OP_MGETS, a, b, c, imm));
                d.s |= 1u32 << a;
            }
            3..=6 if long => {
                let a = self.dst()?;
                self.load_choice(out, d, a, &VALS);
                out.push(ins(abi::STP_OP_MSET, a, b, c, imm));
            }
            3..=6 => {
                let a = self.ssrc(out, d)?;
                out.push(ins(abi::STP_OP_MSETS, a, b, c, imm));
            }
            7..=9 if long => {
                let op = self.rng.pick(&OPS)?;
                let a = self.dst()?;
                self.load_choice(out, d, a, &VALS);
                out.push(ins(
                    abi::STP_OP_MOPR,
                    a,
                    b,
                    c,
                    imm_pack(imm as u16, op as u16),
                ));
                d.r |= 1u64 << a;
                self.observe(out, a);
            }
            10 | 11 => out.push(ins(abi::STP_OP_MDEL, 0, b, c, imm)),
            12 | 13 => {
                self.int_result(out, d, abi::STP_OP_MHAS, b, c, imm)?;
            }
            14 if self.rng.chance(1, 3) => out.push(ins(abi::STP_OP_MCLEAR, 0, 0, 0, imm)),
            _ if m.value == MapValue::Stat => return self.stat_array_insn(out, d, m, imm, b, c),
            _ => {
                // MSET / MSETS again: insertions fill maps (overflow, wrap).
                if long {
                    let a = self.src(out, d)?;
                    out.push(ins(abi::STP_OP_MSET, a, b, c, imm));
                } else {
                    let a = self.ssrc(out, d)?;
                    out.push(ins(abi::STP_OP_MSETS, a, b, c, imm));
                }
            }
        }
        Some(())
    }

    /// MSTADD, MSTX (every extractor, on absent keys too: EMPTY_AGG),
    /// MSTBKT, MSTHIST or MSTHISTS on statistics array `m` (`imm`) with its keys at `b`, `c`.
    fn stat_array_insn(
        &mut self,
        out: &mut Vec<Insn>,
        d: &mut Defs,
        m: &MapDecl,
        imm: i32,
        b: u8,
        c: u8,
    ) -> Option<()> {
        const VALS: [i64; 12] = [
            0,
            1,
            -1,
            2,
            3,
            17,
            100,
            -100,
            1 << 33,
            64,
            i64::MIN,
            i64::MAX,
        ];
        let st = self.prog.stats.get(m.stat as usize)?.clone();
        match self.rng.below(10) {
            0..=4 => {
                let a = self.dst()?;
                self.load_choice(out, d, a, &VALS);
                out.push(ins(abi::STP_OP_MSTADD, a, b, c, imm));
            }
            5 | 6 if st.hist != Hist::None && self.rng.chance(1, 3) => {
                // MSTBKT: a bucket (@hist_log(a[k])[i]), the index in r[a]
                // in range, at the edges and out of it (HIST_INDEX).
                self.stat_array_sample(out, d, imm, b, c);
                let nb = i64::from(st.hist.nbuckets());
                let idx = [-1, 0, 1, 63, 64, 65, 66, nb - 1, nb, i64::MIN];
                let a = self.dst()?;
                self.load_choice(out, d, a, &idx);
                out.push(ins(abi::STP_OP_MSTBKT, a, b, c, imm));
                d.r |= 1u64 << a;
                self.observe(out, a);
            }
            5 | 6 if st.hist != Hist::None => {
                self.stat_array_sample(out, d, imm, b, c);
                match self.sdst() {
                    // MSTHISTS: the drawing as a string
                    // (sprint(@hist_log(a[k]))), s[a] maybe in the key run.
                    Some(a) if self.rng.chance(1, 3) => {
                        out.push(ins(abi::STP_OP_MSTHISTS, a, b, c, imm));
                        d.s |= 1u32 << a;
                        // Its length into a global: compared even when
                        // a later instruction ends the run.
                        if let Some(r) = self.dst() {
                            out.push(ins(abi::STP_OP_SLEN, r, a, 0, 0));
                            d.r |= 1u64 << r;
                            self.observe(out, r);
                        }
                    }
                    _ => out.push(ins(abi::STP_OP_MSTHIST, 0, b, c, imm)),
                }
            }
            _ => {
                self.stat_array_sample(out, d, imm, b, c);
                let mut ops = vec![
                    abi::STP_OP_STCOUNT,
                    abi::STP_OP_STSUM,
                    abi::STP_OP_STMIN,
                    abi::STP_OP_STMAX,
                    abi::STP_OP_STAVG,
                ];
                if st.variance {
                    ops.push(abi::STP_OP_STVAR);
                }
                let x = self.rng.pick(&ops)?;
                let a = self.dst()?;
                out.push(ins(
                    abi::STP_OP_MSTX,
                    a,
                    b,
                    c,
                    imm_pack(imm as u16, x as u16),
                ));
                d.r |= 1u64 << a;
                self.observe(out, a);
            }
        }
        Some(())
    }

    /// Mostly a sample or two for the key at `b`, `c` of statistics array
    /// `imm` (so that the extractor after it finds an entry with samples
    /// on several CPUs' copies), sometimes none (EMPTY_AGG).
    fn stat_array_sample(&mut self, out: &mut Vec<Insn>, d: &mut Defs, imm: i32, b: u8, c: u8) {
        const VALS: [i64; 8] = [0, 1, -1, 5, 17, 1000, -4096, 1 << 40];
        if self.dead || self.rng.chance(1, 4) {
            return;
        }
        let Some(a) = self.dst_except(mask_of(abi::STP_MAX_MAP_KEYS as u8) << b) else {
            return;
        };
        for _ in 0..1 + self.rng.below(2) {
            self.load_choice(out, d, a, &VALS);
            out.push(ins(abi::STP_OP_MSTADD, a, b, c, imm));
        }
    }

    /// `foreach`: MITER with a random order and limit (0, negative, huge
    /// too), then `L: MNEXT; JZ out; body; LOOP L`. The body often
    /// deletes, updates or reads the current key first, and may insert
    /// (evicting in a wrap map), clear, or nest another foreach (mostly on
    /// another iterator; sometimes the same one, refilled for another map:
    /// BADOP).
    fn stmt_foreach(&mut self, out: &mut Vec<Insn>, d: &mut Defs, budget: u32) -> Option<()> {
        let n = self.prog.maps.len() as u64;
        if n == 0 {
            return None;
        }
        // A function's foreach gives every frame level its iterators
        // (opcodes.h): keep the verifier's STP_MAX_ITER_BYTES.
        if self.ctx == abi::STP_CTX_FUNCTION {
            let levels = 1 + u64::from(self.prog.limits[abi::STP_LIM_MAXNESTING as usize]);
            let cap = self.prog.maps.iter().map(|m| m.capacity).max().unwrap_or(0);
            let per = 32 + 16 * u64::from(cap);
            if levels * u64::from(abi::STP_MAX_ITERS) * per > u64::from(abi::STP_MAX_ITER_BYTES) {
                return None;
            }
        }
        let id = self.rng.below(n) as usize;
        let m = self.prog.maps[id].clone();
        let (ni, _) = Self::key_counts(&m);
        let (b, c) = self.key_bases(&m)?;
        let free: Vec<u32> = (0..abi::STP_MAX_ITERS)
            .filter(|i| self.iters_active & (1 << i) == 0)
            .collect();
        let it = match self.rng.pick(&free) {
            Some(i) if self.rng.chance(7, 8) => i,
            _ => self.rng.below(u64::from(abi::STP_MAX_ITERS)) as u32,
        };
        let limit = self.dst()?;
        let lims = [
            -1,
            0,
            1,
            2,
            3,
            5,
            100,
            i64::MAX,
            i64::MIN,
            i64::from(m.capacity),
        ];
        self.load_choice(out, d, limit, &lims);
        let sort = match self.rng.below(4) {
            0 => 0,
            _ => {
                let col = if self.rng.chance(1, 3) {
                    15
                } else {
                    1 + self.rng.below(m.keys.len() as u64) as u8
                };
                // A statistics array's value: now and then by @sum,
                // @min, @max or @avg (enum stp_sort_extractor).
                let x = if col == 15 && m.value == MapValue::Stat && self.rng.chance(2, 3) {
                    self.rng.below(u64::from(abi::STP_SORTX__COUNT)) as u8
                } else {
                    0
                };
                col | x << 4 | if self.rng.chance(1, 2) { 0x80 } else { 0 }
            }
        };
        let imm = imm_pack(id as u16, it as u16);
        out.push(ins(abi::STP_OP_MITER, 0, limit, sort, imm));
        let f = self.dst()?;
        let mut db = *d;
        db.r |= (mask_of(ni as u8) << b) | (1u64 << f);
        db.s |= ((mask_of(Self::key_counts(&m).1 as u8) as u32) << c) & mask_of(self.nsregs) as u32;
        let was = self.iters_active;
        self.iters_active |= 1 << it;
        let mut body = Vec::new();
        if !self.dead {
            if self.rng.chance(1, 3) {
                body.push(ins(abi::STP_OP_MDEL, 0, b, c, id as i32));
            }
            if self.rng.chance(1, 4) || (m.value == MapValue::Stat && self.rng.chance(1, 2)) {
                self.map_insn(&mut body, &mut db, &m, id, b, c);
            }
            // An extractor order shows in which key comes last.
            if sort & 0x70 != 0 && ni > 0 {
                self.observe(&mut body, b);
            }
        }
        body.extend(self.block(&mut db, budget));
        self.iters_active = was;
        out.push(ins(abi::STP_OP_MNEXT, f, b, c, imm));
        out.push(ins(abi::STP_OP_JZ, f, 0, 0, body.len() as i32 + 1));
        let len = body.len() as i32;
        out.extend(body);
        out.push(ins(abi::STP_OP_LOOP, 0, 0, 0, -(len + 3)));
        // After the loop: what MNEXT wrote (it ran at least once).
        d.r |= (mask_of(ni as u8) << b) | (1u64 << f);
        d.s |= ((mask_of(Self::key_counts(&m).1 as u8) as u32) << c) & mask_of(self.nsregs) as u32;
        Some(())
    }

    fn nested(&mut self, f: impl FnOnce(&mut Self) -> Option<()>) -> Option<()> {
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// A block of about `budget` statements.
    fn block(&mut self, d: &mut Defs, budget: u32) -> Vec<Insn> {
        let mut out = Vec::new();
        let n = self.rng.below(u64::from(budget) + 1);
        for _ in 0..n {
            let mut tries = 0;
            while self.stmt(&mut out, d, budget).is_none() && tries < 4 {
                tries += 1;
            }
        }
        out
    }
}

/// The default of limit `l` (`abi::STP_LIM_*`).
fn limits_default(l: u32) -> u32 {
    default_limits().get(l as usize).copied().unwrap_or(1)
}

/// The probe kind that fires a handler of context `ctx`: the first of
/// abi.h's `STP_PROBE_KINDS` with that context (END before ERROR, KPROBE
/// before TRACEPOINT).
fn probe_kind(ctx: u32) -> u32 {
    PROBE_KINDS
        .iter()
        .position(|k| k.ctx == ctx)
        .map_or(abi::STP_PROBE_KRETPROBE, |k| k as u32)
}

/// The case of `seed`: a random verified program with 1 to 4 handlers, the
/// environment it runs in, and 1 to 8 handler runs.
pub fn generate(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let (env, addrs) = gen_env(&mut rng);
    let mut limits = default_limits();
    let maxaction = [1u32, 2, 5, 20, 100, 1000];
    let strlen = [16u32, 17, 23, 64, 100, 512, 4096];
    limits[abi::STP_LIM_MAXACTION as usize] = rng.pick(&maxaction).unwrap_or(100);
    let cap = rng.pick(&strlen).unwrap_or(64);
    limits[abi::STP_LIM_MAXSTRINGLEN as usize] = cap;
    limits[abi::STP_LIM_RING_PAGES as usize] = if rng.chance(3, 4) { 4 } else { 8 };
    // MAXNESTING frames must fit STP_MAX_FRAME_BYTES at this MAXSTRINGLEN.
    let nest: Vec<u32> = [1u32, 2, 3, 5, 10, 10, 31, 64]
        .into_iter()
        .filter(|&n| vm_spec::core::frames_size(n, cap) <= abi::STP_MAX_FRAME_BYTES as usize)
        .collect();
    let maxnest = rng.pick(&nest).unwrap_or(1);
    limits[abi::STP_LIM_MAXNESTING as usize] = maxnest;

    let mut prog = Program {
        source_name: format!("gen-{seed}"),
        compiler_version: "vm-spec gen".into(),
        limits,
        ..Default::default()
    };
    prog.globals = (0..rng.below(6))
        .map(|k| Global {
            name: format!("g{k}"),
            ty: GlobalType::Long,
            print_at_exit: false,
        })
        .collect();
    for _ in 0..rng.below(6) {
        let v = if rng.chance(1, 2) {
            rng.pick(&INTERESTING).unwrap_or(0)
        } else {
            rng.next_u64() as i64
        };
        prog.konsts.push(v);
    }
    let mut addr_konsts = Vec::new();
    for a in &addrs {
        if rng.chance(2, 3) {
            addr_konsts.push(prog.konsts.len() as i32);
            prog.konsts.push(*a as i64);
        }
    }
    // A string holds at most MAXSTRINGLEN - 1 bytes (the NUL counts).
    let smax = cap - 1;
    for _ in 0..rng.below(7) {
        let n = match rng.below(4) {
            0 => smax as usize,
            1 => rng.below(u64::from(smax) + 1) as usize,
            _ => rng.below(12) as usize,
        };
        prog.strings.push(nonzero_bytes(&mut rng, n));
    }
    // Edge cases of the string builtins: the empty string, numbers for
    // STOL, escapes for STEXT, and pieces of other strings for SFIND and
    // SREPL.
    for _ in 0..rng.below(5) {
        let mut v = match rng.below(4) {
            0 => Vec::new(),
            1 | 2 => rng.pick(&SPECIAL_STRINGS).unwrap_or("").as_bytes().to_vec(),
            _ => match prog.strings.len() {
                0 => b"a".to_vec(),
                ns => {
                    let t = &prog.strings[rng.below(ns as u64) as usize];
                    let i = rng.below(t.len() as u64 + 1) as usize;
                    let j = i + rng.below((t.len() - i) as u64 + 1).min(3) as usize;
                    t[i..j].to_vec()
                }
            },
        };
        v.truncate(smax as usize);
        prog.strings.push(v);
    }
    // Numbers for STOL, which picks them most of the time.
    let mut num_strs = Vec::new();
    for _ in 0..2 + rng.below(3) {
        let mut v = rng
            .pick(&SPECIAL_STRINGS[..17])
            .unwrap_or("0")
            .as_bytes()
            .to_vec();
        v.truncate(smax as usize);
        num_strs.push(prog.strings.len() as i32);
        prog.strings.push(v);
    }
    for _ in 0..rng.below(6) {
        let nargs = if rng.chance(1, 8) {
            32
        } else {
            rng.below(7) as usize
        };
        let args = random_kinds(&mut rng, nargs, 1, 2);
        let text = format_text(&mut rng, &args);
        prog.formats.push(Format { text, args });
    }

    // Statistics: every histogram kind, @variance with its shift.
    let nstats = if rng.chance(1, 2) {
        0
    } else {
        1 + rng.below(4)
    };
    for k in 0..nstats {
        let hist = match rng.below(4) {
            0 => Hist::None,
            1 => Hist::Log,
            _ => {
                let interval = rng
                    .pick(&[1i64, 2, 3, 7, 10, 100, 1000, 1 << 20, i64::from(i32::MAX)])
                    .unwrap_or(1);
                let start = rng
                    .pick(&[-100i64, -1, 0, 1, 5, -(1 << 30), i64::from(i32::MIN)])
                    .unwrap_or(0);
                // (stop - start) / interval + 3 buckets, 3 to 128.
                let m = rng.below(126) as i64;
                let stop = start + m * interval + rng.below(interval as u64) as i64;
                match (i32::try_from(start), i32::try_from(stop)) {
                    (Ok(start), Ok(stop)) => Hist::Linear {
                        start,
                        stop,
                        interval: interval as i32,
                    },
                    _ => Hist::Log,
                }
            }
        };
        let variance = rng.chance(1, 2);
        let shift = if variance {
            rng.pick(&[0u8, 0, 1, 2, 8, 20, 62]).unwrap_or(0)
        } else {
            0
        };
        prog.stats.push(Stat {
            name: format!("st{k}"),
            hist,
            variance,
            shift,
            ..Default::default()
        });
    }
    // Maps: random key kinds and arity, value kinds, small capacities
    // (overflow, eviction), `[N]` and `%`.
    let nmaps = if rng.chance(2, 5) {
        0
    } else {
        1 + rng.below(3)
    };
    for k in 0..nmaps {
        let nkeys = match rng.below(8) {
            0..=3 => 1,
            4 | 5 => 2,
            6 => 3,
            _ => 1 + rng.below(u64::from(abi::STP_MAX_MAP_KEYS)) as usize,
        };
        let keys = random_kinds(&mut rng, nkeys, 1, 3);
        let value = if rng.chance(1, 3) {
            MapValue::Str
        } else {
            MapValue::Long
        };
        let nstr = keys.iter().filter(|k| **k == ArgKind::Str).count() as u64
            + u64::from(value == MapValue::Str);
        let mut capacity = rng.pick(&[1u32, 1, 2, 3, 4, 5, 8, 16, 100]).unwrap_or(4);
        // Now and then the default MAXMAPENTRIES, when it stays small.
        let big = limits_default(abi::STP_LIM_MAXMAPENTRIES);
        if rng.chance(1, 10) && u64::from(big) * (64 + nstr * (u64::from(cap) + 4)) < (8 << 20) {
            capacity = big;
        }
        prog.maps.push(MapDecl {
            name: format!("m{k}"),
            keys,
            value,
            capacity,
            sized: rng.chance(1, 2),
            wrap: rng.chance(1, 3),
            ..Default::default()
        });
    }
    // Statistics arrays: some long-valued maps become `a[k] <<< v`, their
    // statistics after the scalar ones in map order (the verifier's
    // layout), any histogram kind, @variance or not.
    for k in 0..prog.maps.len() {
        if prog.maps[k].value != MapValue::Long || !rng.chance(1, 2) {
            continue;
        }
        let hist = match rng.below(3) {
            0 => Hist::None,
            1 => Hist::Log,
            _ => {
                let interval = rng.pick(&[1i32, 3, 10, 1000]).unwrap_or(1);
                let start = rng.pick(&[-100i32, -1, 0, 5]).unwrap_or(0);
                let stop = start + interval * rng.below(20) as i32;
                Hist::Linear {
                    start,
                    stop,
                    interval,
                }
            }
        };
        let variance = rng.chance(1, 2);
        let shift = if variance {
            rng.pick(&[0u8, 1, 8, 20]).unwrap_or(0)
        } else {
            0
        };
        prog.maps[k].value = MapValue::Stat;
        prog.maps[k].stat = prog.stats.len() as u32;
        prog.stats.push(Stat {
            name: format!("m{k}"),
            hist,
            variance,
            shift,
            array: true,
            ..Default::default()
        });
    }

    // Regular expressions (0 to 3): random DFA tables, any shape the
    // verifier accepts (REMATCH walks a table whatever it recognises):
    // few or all 257 columns, classes that keep the strings' bytes apart
    // or not, rows that fall into the final states 0 / 1 early or late.
    for _ in 0..rng.below(4) {
        let nclasses = match rng.below(4) {
            0 => 257,
            1 => 2,
            _ => 2 + rng.below(8) as u32,
        };
        let most = if rng.chance(1, 8) { 300 } else { 12 };
        let nstates = 2 + rng.below(most) as usize;
        let bias = rng.below(4);
        let classes = (0..256)
            .map(|b| {
                if nclasses == 257 {
                    b as u8
                } else {
                    rng.below(u64::from(nclasses) - 1) as u8
                }
            })
            .collect();
        let trans = (0..nstates * nclasses as usize)
            .map(|_| {
                if rng.below(8) < bias {
                    rng.below(2) as u16
                } else {
                    rng.below(nstates as u64) as u16
                }
            })
            .collect();
        let groups = rng.chance(1, 2).then(|| random_groups(&mut rng));
        // A group program runs only after the DFA said "match": most of
        // those DFAs accept at once (start state 1).
        let start = if groups.is_some() && rng.chance(3, 4) {
            1
        } else {
            rng.below(nstates as u64) as u32
        };
        prog.regexes.push(RegexTable {
            pattern: format!("rx{}", prog.regexes.len()).into_bytes(),
            classes,
            nclasses,
            start,
            trans,
            groups,
        });
    }

    let nh = 1 + rng.below(4) as usize;
    // User functions, after the probe handlers: random signatures, some
    // recursing on their first parameter.
    let nf = if rng.chance(1, 3) {
        0
    } else {
        1 + rng.below(4) as usize
    };
    let mut shapes = Vec::new();
    let mut counters = Vec::new();
    for k in 0..nf {
        let nregs = if rng.chance(1, 6) {
            64
        } else {
            1 + rng.below(10) as u8
        };
        let nsregs = if rng.chance(1, 6) {
            16
        } else {
            rng.below(5) as u8
        };
        let ret = match rng.below(3) {
            0 => abi::STP_RET_NONE,
            1 => abi::STP_RET_LONG,
            _ if nsregs > 0 => abi::STP_RET_STR,
            _ => abi::STP_RET_LONG,
        };
        let nparams = match rng.below(6) {
            0 => nregs,
            1 => 0,
            _ => (1 + rng.below(3) as u8).min(nregs),
        };
        let nsparams = match rng.below(4) {
            0 => nsregs,
            1 => 0,
            _ => rng.below(3).min(u64::from(nsregs)) as u8,
        };
        prog.funcs.push(FuncSig {
            handler: (nh + k) as u32,
            name: format!("f{k}"),
            nparams,
            nsparams,
            ret: ret as u8,
        });
        counters.push(nparams > 0 && rng.chance(1, 2));
        shapes.push((nregs, nsregs));
    }
    for hi in 0..nh + nf {
        let func = hi.checked_sub(nh);
        let ctx = rng
            .pick(&[
                abi::STP_CTX_BEGIN,
                abi::STP_CTX_END,
                abi::STP_CTX_TIMER,
                abi::STP_CTX_KPROBE,
                abi::STP_CTX_KRETPROBE,
                abi::STP_CTX_UPROBE,
            ])
            .unwrap_or(abi::STP_CTX_BEGIN);
        let ctx = if func.is_some() {
            abi::STP_CTX_FUNCTION
        } else {
            ctx
        };
        let mut nregs = if rng.chance(1, 5) {
            64
        } else {
            1 + rng.below(12) as u8
        };
        let mut nsregs = if rng.chance(1, 5) {
            16
        } else {
            rng.below(5) as u8
        };
        let mut budget = 2 + rng.below(40) as u32;
        let mut ret = abi::STP_RET_NONE;
        if let Some(k) = func {
            (nregs, nsregs) = shapes[k];
            ret = u32::from(prog.funcs[k].ret);
            budget = 2 + rng.below(16) as u32;
        }
        let mut g = HGen {
            rng: &mut rng,
            ctx,
            nregs,
            nsregs,
            prog: &prog,
            addr_konsts: addr_konsts.clone(),
            reserved: 0,
            dead: false,
            depth: 0,
            me: func,
            ret,
            counters: &counters,
            maxnest,
            num_strs: &num_strs,
            iters_active: 0,
            in_try: false,
        };
        // A function's parameters are written at its entry.
        let mut d = match func.and_then(|k| prog.funcs.get(k)) {
            Some(f) => Defs {
                r: mask_of(f.nparams),
                s: mask_of(f.nsparams) as u32,
            },
            None => Defs { r: 0, s: 0 },
        };
        let mut code = Vec::new();
        if func.is_some_and(|k| counters[k]) {
            g.recursion_prologue(&mut code, &mut d);
        }
        if g.rng.chance(1, 2) {
            for _ in 0..1 + g.rng.below(4) {
                g.stat_add(&mut code, &mut d);
            }
        }
        code.extend(g.block(&mut d, budget));
        // The last instruction returns (a register of the result kind is
        // written on the way if none is yet).
        if g.stmt_return(&mut code, &mut d).is_none() {
            code.push(ins(abi::STP_OP_RET, 0, 0, 0, 0));
        }
        let locs = vec![SrcLoc::default(); code.len()];
        prog.handlers.push(Handler {
            ctx: ctx as u8,
            nregs,
            nsregs,
            code,
            locs,
            probe_point: format!("gen.handler{hi}"),
        });
        if func.is_some() {
            continue;
        }
        let kind = probe_kind(ctx);
        // The descriptor fields the kind uses (abi.h: STP_PROBE_KINDS).
        let uses = PROBE_KINDS.get(kind as usize).map_or(0, |k| k.uses);
        let kp = uses & abi::STP_PROBE_USES_SYMBOL != 0;
        let up = uses & abi::STP_PROBE_USES_UPROBE != 0;
        // A uprobe: a USDT marker with 0 to 4 argument specs (UARG):
        // registers, memory at a register plus a displacement, constants,
        // of every size and sign.
        let uprobe = up.then(|| vm_spec::program::Uprobe {
            offset: 0x1000,
            args: (0..rng.below(5))
                .map(|_| {
                    let size = rng.pick(&[1u64, 2, 4, 8]).unwrap_or(8);
                    let signed = if rng.chance(1, 2) {
                        u64::from(abi::STP_UARG_SIGNED)
                    } else {
                        0
                    };
                    let value = u64::from(
                        rng.below(1 << 20) as u32 ^ if rng.chance(1, 3) { 0xffff_0000 } else { 0 },
                    );
                    let kind = rng
                        .pick(&[abi::STP_UARG_CONST, abi::STP_UARG_REG, abi::STP_UARG_MEM])
                        .unwrap_or(abi::STP_UARG_REG);
                    let reg = if kind == abi::STP_UARG_CONST {
                        0
                    } else {
                        u64::from(rng.below(u64::from(abi::STP_UARG_REGS)) as u32)
                    };
                    u64::from(kind)
                        | size << abi::STP_UARG_SIZE_SHIFT
                        | signed
                        | reg << abi::STP_UARG_REG_SHIFT
                        | value << abi::STP_UARG_VALUE_SHIFT
                })
                .collect(),
            ..Default::default()
        });
        prog.probes.push(Probe {
            kind: kind as u8,
            flags: 0,
            handler: hi as u32,
            target: if kp {
                ProbeTarget::Symbol {
                    name: "vfs_read".into(),
                    offset: 0,
                }
            } else if up {
                ProbeTarget::User {
                    path: "/gen".into(),
                    library: None,
                    site: vm_spec::program::UserSite::Address(0x1000),
                }
            } else {
                ProbeTarget::None
            },
            maxactive: 0,
            period_ns: if uses & abi::STP_PROBE_USES_PERIOD != 0 {
                1_000_000
            } else {
                0
            },
            randomize: 0,
            perf: None,
            watch: None,
            netfilter: None,
            uprobe,
            display: format!("gen.probe{hi}"),
        });
    }
    let runs: Vec<u32> = (0..1 + rng.below(8))
        .map(|_| rng.below(nh as u64) as u32)
        .collect();
    // Statistics merge over several simulated CPUs; a run's CPU is mostly
    // one of them.
    let cpus = if prog.stats.is_empty() {
        1
    } else {
        1 + rng.below(4) as u32
    };
    let run_cpus = runs
        .iter()
        .map(|_| {
            if rng.chance(1, 60) {
                i64::from(cpus) + rng.below(3) as i64
            } else {
                rng.below(u64::from(cpus)) as i64
            }
        })
        .collect();
    Case {
        seed,
        program: prog,
        env,
        runs,
        cpus,
        run_cpus,
    }
}
