//! The program model shared by the compiler (which builds it), the `.stpb`
//! container (which stores it) and the loader (which turns it into a kernel
//! image). It keeps what the kernel needs (code, probe descriptors, tables)
//! and what only user space needs (format texts, names, source locations).
use crate::abi;
use serde::{Deserialize, Serialize};

/// One instruction, as in `struct stp_insn` (opcodes.h documents the fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Insn {
    /// Opcode (`abi::STP_OP_*`).
    pub op: u8,
    /// First operand (register).
    pub a: u8,
    /// Second operand (register).
    pub b: u8,
    /// Third operand (register).
    pub c: u8,
    /// Immediate, jump offset or table index.
    pub imm: i32,
}

impl Insn {
    /// Builds an instruction from an opcode and its operands.
    pub fn new(op: abi::stp_opcode, a: u8, b: u8, c: u8, imm: i32) -> Self {
        Insn {
            op: op as u8,
            a,
            b,
            c,
            imm,
        }
    }

    /// The ABI view of this instruction.
    pub fn to_abi(self) -> abi::stp_insn {
        abi::stp_insn {
            op: self.op,
            a: self.a,
            b: self.b,
            c: self.c,
            imm: self.imm,
        }
    }

    /// The 8 bytes of this instruction in the image (little-endian).
    pub fn to_bytes(self) -> [u8; 8] {
        let mut out = [0u8; 8];
        out[0] = self.op;
        out[1] = self.a;
        out[2] = self.b;
        out[3] = self.c;
        out[4..8].copy_from_slice(&self.imm.to_le_bytes());
        out
    }
}

/// A place in the script source: 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SrcLoc {
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub col: u32,
}

/// One handler: the code run when one of its probes fires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Handler {
    /// Probe context (`abi::STP_CTX_*`).
    pub ctx: u8,
    /// Integer registers used.
    pub nregs: u8,
    /// String registers used.
    pub nsregs: u8,
    /// The code; the last instruction is RET.
    pub code: Vec<Insn>,
    /// Source location of each instruction (same length as `code`), for
    /// run-time error messages.
    pub locs: Vec<SrcLoc>,
    /// The probe point as written in the script (`kernel.function("f")`),
    /// for messages such as `near identifier ... at file:line:col`.
    pub probe_point: String,
}

/// Where a kprobe goes, as the script named it; resolved by the loader on the
/// target machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProbeTarget {
    /// No symbol (begin, end, timers).
    None,
    /// One symbol plus a byte offset. A name with a glob (`*`, `?`) or a
    /// `module:` prefix is a pattern (`kernel.function("vfs_*")`,
    /// `module("ext4").function("ext4_*")`), which the loader expands on the
    /// target machine into one probe per matching text symbol of kallsyms
    /// (filtered by ftrace's available_filter_functions and the kprobe
    /// blacklist); real symbol names never hold these characters. (A
    /// variant of its own would be clearer but would break the exhaustive
    /// matches of older code, e.g. the reference VM's.) A pattern may end
    /// in `@FILEPAT` (`kernel.function("*@fs/*.c")`): only the functions
    /// whose DWARF decl file matches FILEPAT (stap's rule), which the loader
    /// reads from the kernel's debuginfo; see `split_source_file`.
    Symbol {
        /// Kernel symbol name, or a pattern (`[module:]glob[@filepat]`).
        name: String,
        /// Byte offset from the symbol.
        offset: u32,
    },
    /// The first of these symbols that the running kernel has (e.g. a
    /// syscall's entry point, which differs between kernel versions).
    FirstOf(Vec<String>),
    /// An absolute kernel address (`kernel.statement(ADDR).absolute`,
    /// `kprobe.statement(ADDR).absolute`): the loader turns it into the
    /// text symbol that holds it plus the offset, on the running kernel
    /// (the kernel's kprobe checks then refuse an address that is not an
    /// instruction boundary or may not be probed).
    Address(u64),
    /// A statement probe by source line (`kernel.statement("f@file:N")`,
    /// `module("m").statement("f@*:*")`, with `.nearest`): the loader
    /// finds the addresses in the DWARF line table of the kernel's (or the
    /// module's) debuginfo on the target and turns each line into a
    /// `Symbol` (the function plus the offset of the line's first
    /// instruction). `spec` is `[module:]` then the pattern as written,
    /// which [`StatementSpec::parse`] reads.
    Statement {
        /// `[module:]FUNC[@FILE[:LINE|:FIRST-LAST|:*|+REL]]`.
        spec: String,
        /// `.nearest`: a line without code moves to the nearest with code.
        nearest: bool,
    },
    /// A user-space probe (`process("PATH").function("F")`,
    /// `.statement(ADDR).absolute`; abi.h: user-space probes): the binary as
    /// written (a name without `/` is looked up in `$PATH` on the target)
    /// and the place in it. The loader finds the file, makes the path
    /// absolute and canonical, expands a function glob into one probe per
    /// function (site `Address`) and sets `Probe::uprobe`'s file offset.
    User {
        /// The binary: as written in the `.stpb` (empty: the `-c`/`-x`
        /// target's executable), canonical once resolved.
        path: String,
        /// `.library("LIB")`: the probe is in this shared library of the
        /// program (a name or glob found through the program's
        /// dependencies and the usual directories, or a path), counting in
        /// the program's processes only.
        library: Option<String>,
        /// Where in it.
        site: UserSite,
    },
    /// A process event (`process.begin`, `.end`, `.thread.begin`,
    /// `.thread.end`; abi.h: process events) of every process, one process
    /// or one program's processes.
    Process {
        /// The program (a name without `/` is looked up in `$PATH` on the
        /// target), canonical once resolved; empty for any program.
        path: String,
        /// The only process, 0 for any.
        pid: i32,
        /// The event (`STP_PROC_*`).
        event: u32,
    },
    /// A procfs file (`procfs("name").read` / `.write`, abi.h: procfs
    /// files): its name and permission bits, which the image carries as
    /// the probe's symbol and offset (its size is `Probe::maxactive`).
    /// Nothing for the loader to resolve.
    File {
        /// The file's name in the session's directory.
        name: String,
        /// Permission bits (a subset of `STP_PROCFS_MODE_MASK`).
        mode: u32,
    },
}

/// The place of a user-space probe in its binary (`ProbeTarget::User`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum UserSite {
    /// A function of the binary's symbol table, by name or glob.
    Function(String),
    /// A virtual address of the binary (its ELF addresses).
    Address(u64),
    /// A USDT marker (`.note.stapsdt`): its provider (a glob, any when
    /// `None`) and name (a glob).
    Mark {
        /// `.provider("P")`.
        provider: Option<String>,
        /// `.mark("NAME")`.
        name: String,
    },
}

/// A user-space probe as the loader placed it (abi.h: user-space probes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Uprobe {
    /// The file offset of the probed instruction.
    pub offset: u64,
    /// The file offset of a USDT marker's semaphore, 0 for none.
    pub semaphore: u32,
    /// The only process whose hits run the handler, 0 for every one.
    pub pid: i32,
    /// `process` without a path: the probe is in the `-c`/`-x` target's
    /// executable and counts in the target only (the loader sets `pid`).
    #[serde(default)]
    pub target: bool,
    /// A USDT marker's argument specs (abi.h `STP_UARG_*` encoding), at
    /// most `STP_MAX_UARGS`.
    #[serde(default)]
    pub args: Vec<u64>,
    /// A probe in a library of one program (`.library`): that program's
    /// canonical path, whose processes alone run the handler
    /// (`STP_PROBE_F_UEXE`); empty for every process.
    #[serde(default)]
    pub exe: String,
}

/// The lines a statement probe names (`StatementSpec::lines`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatementLines {
    /// No line: the function's entry.
    Entry,
    /// `:N`.
    One(u32),
    /// `:FIRST-LAST`, both included.
    Range(u32, u32),
    /// `:*`: every line of the function with code.
    All,
    /// `+N`: N lines after the function's declaration line.
    Relative(u32),
}

/// A statement probe's pattern, parsed (`ProbeTarget::Statement::spec`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementSpec<'a> {
    /// The module (kallsyms' spelling, `_` for `-`), or `None` for vmlinux.
    pub module: Option<&'a str>,
    /// The function name or glob.
    pub function: &'a str,
    /// The source file pattern after `@` (stap's FILEPAT rule), if any.
    pub file: Option<&'a str>,
    /// The lines.
    pub lines: StatementLines,
}

impl<'a> StatementSpec<'a> {
    /// Parses `[module:]FUNC[@FILE[:LINE|:FIRST-LAST|:*|+REL]]`; the error
    /// says what is wrong.
    pub fn parse(spec: &'a str) -> Result<Self, String> {
        let (module, rest) = match spec.split_once(':') {
            Some((m, r)) if !m.contains('@') => (Some(m), r),
            _ => (None, spec),
        };
        let (function, place) = match rest.split_once('@') {
            Some((f, p)) => (f, Some(p)),
            None => (rest, None),
        };
        let name_ok = |s: &str, extra: &[u8]| {
            !s.is_empty()
                && s.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"_*?".contains(&c) || extra.contains(&c))
        };
        if !name_ok(function, b".$") {
            return Err(format!("invalid function name \"{function}\""));
        }
        if let Some(m) = module {
            if !name_ok(m, b"-") {
                return Err(format!("invalid module name \"{m}\""));
            }
        }
        let num = |s: &str| -> Result<u32, String> {
            s.parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("invalid line number \"{s}\""))
        };
        let (file, lines) = match place {
            None => (None, StatementLines::Entry),
            Some(p) => {
                let (file, lines) = if let Some((f, l)) = p.rsplit_once(':') {
                    let lines = match l.split_once('-') {
                        _ if l == "*" => StatementLines::All,
                        Some((a, b)) => {
                            let (a, b) = (num(a)?, num(b)?);
                            if a > b {
                                return Err(format!("line range {a}-{b} runs backwards"));
                            }
                            StatementLines::Range(a, b)
                        }
                        None => StatementLines::One(num(l)?),
                    };
                    (f, lines)
                } else if let Some((f, r)) = p.rsplit_once('+') {
                    let n = r
                        .parse::<u32>()
                        .map_err(|_| format!("invalid relative line \"+{r}\""))?;
                    (f, StatementLines::Relative(n))
                } else {
                    (p, StatementLines::Entry)
                };
                if file.is_empty() || !file.bytes().all(|c| c.is_ascii_graphic() && c != b':') {
                    return Err(format!("invalid source file pattern \"{file}\""));
                }
                (Some(file), lines)
            }
        };
        Ok(StatementSpec {
            module,
            function,
            file,
            lines,
        })
    }
}

/// Splits a `ProbeTarget::Symbol` name into its function part
/// (`[module:]glob`) and its source-file pattern (`FILEPAT` of
/// `glob@FILEPAT`), if it has one.
pub fn split_source_file(name: &str) -> (&str, Option<&str>) {
    match name.split_once('@') {
        Some((f, file)) => (f, Some(file)),
        None => (name, None),
    }
}

/// One probe point bound to a handler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    /// Kind (`abi::STP_PROBE_*`).
    pub kind: u8,
    /// Flags (`abi::STP_PROBE_F_*`).
    pub flags: u8,
    /// Index into `Program::handlers`.
    pub handler: u32,
    /// Symbolic target (kprobes).
    pub target: ProbeTarget,
    /// kretprobe maxactive, 0 for the kernel default.
    pub maxactive: u32,
    /// Timer period in nanoseconds.
    pub period_ns: u64,
    /// `timer.UNIT(N).randomize(M)`: M in `period_ns`'s unit, at most
    /// `period_ns` (abi.h `stp_probe_desc.randomize`); 0 otherwise.
    pub randomize: u64,
    /// `perf.*` probes (kind `STP_PROBE_PERF`): the event; `period_ns` is
    /// then the sample period in events. `None` for the other kinds.
    pub perf: Option<PerfEvent>,
    /// `kernel.data(…)` probes (kind `STP_PROBE_WATCH`): the watchpoint;
    /// `None` for the other kinds.
    pub watch: Option<Watch>,
    /// `netfilter.hook(…).pf(…)` probes (kind `STP_PROBE_NETFILTER`): the
    /// hook; `None` for the other kinds.
    pub netfilter: Option<NfHook>,
    /// User-space probes (kinds `STP_PROBE_UPROBE`, `STP_PROBE_URETPROBE`)
    /// once the loader placed them; `None` in a `.stpb` and for the other
    /// kinds.
    #[serde(default)]
    pub uprobe: Option<Uprobe>,
    /// The probe point as written, for messages.
    pub display: String,
}

impl Probe {
    /// Whether this is a user-space probe (a uprobe or uretprobe).
    pub fn is_uprobe(&self) -> bool {
        let k = u32::from(self.kind);
        k == abi::STP_PROBE_UPROBE || k == abi::STP_PROBE_URETPROBE
    }
}

/// A hardware watchpoint (`kernel.data(ADDR)` or `kernel.data("SYMBOL")`,
/// `.write` or `.rw`, `.length(N)`; abi.h `stp_probe_desc.ev_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Watch {
    /// The address watched: the literal of `kernel.data(ADDR)`; for a
    /// symbol (the probe's `ProbeTarget::Symbol`) 0 in the `.stpb`, set by
    /// the loader from the running kernel's symbols.
    pub address: u64,
    /// Bytes watched: 1, 2, 4 or 8.
    pub len: u32,
    /// `.rw`: reads fire too (else only writes).
    pub rw: bool,
}

/// A netfilter hook (`netfilter.hook(H).pf(P).priority(N)`; abi.h
/// `stp_probe_desc.ev_*`: netfilter hooks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NfHook {
    /// The protocol family (`abi::STP_NFPROTO_*`).
    pub pf: u32,
    /// The hook number, below the family's number of hooks.
    pub hook: u32,
    /// The priority: lower runs first (stap's default 0).
    pub priority: i32,
}

/// The event of a `perf.*` probe (abi.h `stp_probe_desc.perf_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerfEvent {
    /// `perf_event_attr.type` (`abi::STP_PERF_TYPE_*`).
    pub event_type: u32,
    /// `perf_event_attr.config`.
    pub config: u64,
    /// `.process` (flag `STP_PROBE_F_PERF_TASK`): the process whose
    /// threads' events count; 0 in the `.stpb` (the loader sets the
    /// target's pid, `-x`/`-c`), > 0 in an image.
    pub pid: i32,
}

/// The kind of one printf argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ArgKind {
    /// A 64-bit integer.
    Int,
    /// A string.
    Str,
}

/// One printf format: its text (formatted in user space) and argument kinds.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Format {
    /// The format text, with stap's conversions.
    pub text: String,
    /// Kinds of the arguments, in order.
    pub args: Vec<ArgKind>,
}

/// The type of a global.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GlobalType {
    /// A 64-bit integer scalar.
    Long,
    /// A string scalar: its value lives in the one-entry map of the same
    /// name (key 0), whose lock keeps readers on other CPUs from seeing a
    /// torn string (docs/design.md §7); its integer slot is unused.
    Str,
}

/// One global variable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Global {
    /// Name in the script.
    pub name: String,
    /// Type.
    pub ty: GlobalType,
    /// Printed at exit, as stap prints globals written and never read.
    pub print_at_exit: bool,
}

/// The signature of a user function: its handler (context
/// `abi::STP_CTX_FUNCTION`) takes `nparams` integer and `nsparams` string
/// parameters in `r[0..)` / `s[0..)` and returns `ret`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FuncSig {
    /// Index into `Program::handlers`.
    pub handler: u32,
    /// The function's name in the script, for messages and disassembly.
    pub name: String,
    /// Integer parameters.
    pub nparams: u8,
    /// String parameters.
    pub nsparams: u8,
    /// Result kind (`abi::STP_RET_*`).
    pub ret: u8,
}

/// The histogram a statistic keeps (`abi::STP_HIST_*`), with stap's
/// parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Hist {
    /// No histogram.
    #[default]
    None,
    /// `@hist_log`: `abi::STP_HIST_LOG_BUCKETS` power-of-two buckets.
    Log,
    /// `@hist_linear(s, start, stop, interval)`.
    Linear {
        /// Value of the first bucket.
        start: i32,
        /// End of the range.
        stop: i32,
        /// Bucket width (> 0).
        interval: i32,
    },
}

impl Hist {
    /// The histogram an image or record describes as `abi::STP_HIST_*`
    /// plus the linear parameters; `None` for any other kind.
    pub fn from_abi(kind: u32, start: i32, stop: i32, interval: i32) -> Hist {
        match kind {
            crate::abi::STP_HIST_LOG => Hist::Log,
            crate::abi::STP_HIST_LINEAR => Hist::Linear {
                start,
                stop,
                interval,
            },
            _ => Hist::None,
        }
    }

    /// Buckets of this histogram, under- and overflow included (stap's
    /// `_stp_stat_calc_buckets`); 0 without a histogram or when the
    /// parameters give fewer than 3 or more than `STP_HIST_MAX_BUCKETS`.
    pub fn nbuckets(&self) -> u32 {
        match *self {
            Hist::None => 0,
            Hist::Log => abi::STP_HIST_LOG_BUCKETS,
            Hist::Linear {
                start,
                stop,
                interval,
            } => {
                if interval <= 0 {
                    return 0;
                }
                let n = (i64::from(stop) - i64::from(start)) / i64::from(interval) + 3;
                // stap's _stp_stat_calc_buckets: 3 to STP_HIST_MAX_BUCKETS.
                if (3..=i64::from(abi::STP_HIST_MAX_BUCKETS)).contains(&n) {
                    n as u32
                } else {
                    0
                }
            }
        }
    }
}

/// One statistic: a global that collects `<<<` samples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Stat {
    /// Name in the script.
    pub name: String,
    /// Its histogram, if the script draws one.
    pub hist: Hist,
    /// Whether `@variance` is used (the VM then keeps Welford's sums).
    pub variance: bool,
    /// `@variance`'s bit shift.
    pub shift: u8,
    /// Printed at exit (written and never read), as stap does.
    pub print_at_exit: bool,
    /// The value of a statistics array (`abi::STP_STAT_F_ARRAY`): the
    /// map whose `stat` names it holds one copy per entry slot.
    #[serde(default)]
    pub array: bool,
}

/// The kind of a map's values (`abi::STP_MAPV_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum MapValue {
    /// 64-bit integers.
    #[default]
    Long,
    /// Strings.
    Str,
    /// Statistics (a statistics array; `MapDecl::stat` names the
    /// statistic).
    Stat,
}

/// One associative array (a global `a`, `a[N]` or `a%[N]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct MapDecl {
    /// Name in the script.
    pub name: String,
    /// Kind of each key, in key order (1 to `abi::STP_MAX_MAP_KEYS`).
    pub keys: Vec<ArgKind>,
    /// Kind of the values.
    pub value: MapValue,
    /// Most entries: the declared `[N]`, else MAXMAPENTRIES.
    pub capacity: u32,
    /// The script declared `[N]` (the overflow error names the size).
    pub sized: bool,
    /// `%`: a full map replaces its oldest entry.
    pub wrap: bool,
    /// Printed at exit (written and never read), as stap does.
    pub print_at_exit: bool,
    /// `MapValue::Stat`: index of its statistic (`Stat::array`).
    #[serde(default)]
    pub stat: u32,
}

/// A compiled script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Program {
    /// Script file name as given to the compiler (`-` or `<input>` for -e).
    pub source_name: String,
    /// The script text, for run-time messages.
    pub source: String,
    /// Version of the compiler that built this.
    pub compiler_version: String,
    /// Limit values, indexed by `abi::STP_LIM_*`.
    pub limits: Vec<u32>,
    /// Global scalars, indexed by the GLB operand.
    pub globals: Vec<Global>,
    /// Handlers, indexed by `Probe::handler`.
    pub handlers: Vec<Handler>,
    /// Probe points.
    pub probes: Vec<Probe>,
    /// Constant strings, indexed by the STR operand.
    pub strings: Vec<Vec<u8>>,
    /// 64-bit constants, indexed by the K operand.
    pub konsts: Vec<i64>,
    /// printf formats, indexed by the FMT operand. The image carries the
    /// text of the formats a SPRINTF names (see `image::build`).
    pub formats: Vec<Format>,
    /// Signatures of the user functions (handlers of context
    /// `abi::STP_CTX_FUNCTION`); a handler without one has no parameters
    /// and no result.
    pub funcs: Vec<FuncSig>,
    /// Statistics, indexed by the STAT operand.
    pub stats: Vec<Stat>,
    /// Associative arrays, indexed by the MAP operand.
    pub maps: Vec<MapDecl>,
    /// Target variables (`$name->a->b`): constants the loader fills in from
    /// the running kernel's BTF before `image::build` (CO-RE style).
    pub target_vars: Vec<TargetVar>,
    /// Regular expressions (`=~`), indexed by REMATCH's RX operand.
    #[serde(default)]
    pub regexes: Vec<RegexTable>,
    /// Pretty-printing type nodes (abi.h: `struct stp_pretty_node`), the
    /// PRETTY section: empty in the file, built by the loader from the
    /// target's BTF for each `RelocKind::Pretty` use (their member names
    /// appended to `strings`).
    #[serde(default)]
    pub pretty: Vec<PrettyNode>,
    /// The constant (index into `konsts`, 0 in the file) that holds
    /// `target()`: `load`/`run` patch in the PID of `-x PID` or of the
    /// `-c CMD` process (stap's `_stp_target`), else it stays 0.
    #[serde(default)]
    pub target_konst: Option<u32>,
    /// The format whose PRINTF record means `switch_file()`: user space
    /// moves the `-o FILE` output to the next file instead of printing.
    #[serde(default)]
    pub switch_file_format: Option<u32>,
    /// The format whose PRINTF record is `warn(msg)` (text
    /// `"WARNING: %s\n"`, one string): user space prints `WARNING: msg` on
    /// stderr, as stap's `_stp_warn` (one newline, added when msg has none).
    #[serde(default)]
    pub warn_format: Option<u32>,
    /// The constants (indexes into `konsts`, 0 in the file) that hold the
    /// local time zone of tzinfo.stp: [0] its offset in seconds west of
    /// UTC (`tz_gmtoff()`), [1] its abbreviation (`tz_name()`), up to 8
    /// bytes packed little-endian, the first byte lowest. `load`/`run`
    /// fill them from the loader's own local time (stap's staprun passes
    /// the same at startup).
    #[serde(default)]
    pub tz_konsts: Option<[u32; 2]>,
    /// The constants (indexes into `konsts`, 0 in the file) that hold the
    /// loader process's [0] pid (`stp_pid()`, stap's staprun/stapio pid)
    /// and [1] real uid (`is_myproc()`); `load`/`run` fill them in.
    #[serde(default)]
    pub loader_konsts: Option<[u32; 2]>,
    /// The user-space symbol tables (abi.h: the USYMBINS, USYMS and USYMSTR
    /// sections): never in the file; the loader fills them from the ELF
    /// symbols of the probed binaries, the `-c` command's program, `-d`
    /// and `--ldd` when the code calls a user-symbol helper.
    #[serde(skip)]
    pub usyms: Vec<UserSymbols>,
    /// stap's `-d PATH`: binaries whose symbols the loader adds to `usyms`
    /// (as given; the loader finds and canonicalizes them).
    #[serde(default)]
    pub usym_paths: Vec<String>,
    /// stap's `--ldd`: the loader also adds the shared libraries the
    /// binaries of `usyms` need (`DT_NEEDED`).
    #[serde(default)]
    pub usym_ldd: bool,
}

/// The symbol table of one user-space binary (abi.h: `struct
/// stp_usym_bin` and its `struct stp_usym`s).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserSymbols {
    /// The binary's absolute path on the target.
    pub path: String,
    /// Its symbols as (file offset, name), sorted by strictly increasing
    /// offset.
    pub symbols: Vec<(u64, String)>,
}

/// One compiled regular expression: the DFA table the VM walks
/// (abi.h: `struct stp_regex_desc`, opcodes.h: REMATCH). State 0 rejects,
/// state 1 accepts; row `s` of `trans` holds `nclasses` next states, one
/// per byte class, the last column being the end of the string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct RegexTable {
    /// The pattern as written (decoded), for disassembly and messages.
    pub pattern: Vec<u8>,
    /// The byte class of each byte (256 entries, each < `nclasses - 1`).
    pub classes: Vec<u8>,
    /// Columns of a row: the byte classes plus the end-of-string column.
    pub nclasses: u32,
    /// The start state.
    pub start: u32,
    /// `nstates() * nclasses` next states, row by row.
    pub trans: Vec<u16>,
    /// The group program REMATCHS runs (abi.h: `struct stp_regex_sub`),
    /// present only in scripts that call `matched()`, `matched_str()` or
    /// `ngroups()`.
    #[serde(default)]
    pub groups: Option<RegexGroups>,
}

/// The group program of one regular expression (abi.h: `STP_RX_*`,
/// `struct stp_regex_sub`): Pike VM instructions whose SET arguments index
/// this program's own `sets` (the image rebases them into REGEXSETS).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct RegexGroups {
    /// Instructions: `op | arg << STP_RX_OP_BITS`.
    pub insns: Vec<u32>,
    /// Byte sets of the SET instructions (bit `b % 8` of byte `b / 8`).
    pub sets: Vec<[u8; 32]>,
    /// Capture slots, two per group, group 0 (the whole match) included.
    pub nslots: u32,
}

impl RegexGroups {
    /// Groups of the pattern, group 0 included (what `ngroups()` returns).
    pub fn ngroups(&self) -> u32 {
        self.nslots / 2
    }
}

/// Builds a group program instruction from its operation
/// (`abi::STP_RX_*`) and argument.
pub fn rx_insn(op: u32, arg: u32) -> u32 {
    op | (arg << abi::STP_RX_OP_BITS)
}

/// The operation (`abi::STP_RX_*`) and argument of a group program
/// instruction.
pub fn rx_decode(w: u32) -> (u32, u32) {
    (w & abi::STP_RX_OP_MASK, w >> abi::STP_RX_OP_BITS)
}

impl RegexTable {
    /// Rows of the table (the two final states included).
    pub fn nstates(&self) -> usize {
        if self.nclasses == 0 {
            0
        } else {
            self.trans.len() / self.nclasses as usize
        }
    }

    /// Walks the table over `s` as REMATCH does: true when state 1 is
    /// reached (out-of-range entries, which the verifier refuses, reject).
    pub fn is_match(&self, s: &[u8]) -> bool {
        let n = self.nclasses as usize;
        let step = |st: usize, col: usize| -> usize {
            self.trans.get(st * n + col).map_or(0, |&x| usize::from(x))
        };
        let mut st = self.start as usize;
        for &b in s {
            if st < 2 {
                break;
            }
            st = step(
                st,
                usize::from(self.classes.get(usize::from(b)).copied().unwrap_or(0)),
            );
        }
        if st >= 2 {
            st = step(st, n.saturating_sub(1));
        }
        st == 1
    }
}

/// One pretty-printing type node (abi.h: `struct stp_pretty_node`;
/// opcodes.h: PRETTY says how it prints).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PrettyNode {
    /// The member's name (an index into `Program::strings`) or one of
    /// `abi::STP_PRETTY_NAME_*`.
    pub name: u32,
    /// Bytes from the enclosing aggregate's address.
    pub offset: u32,
    /// A STRUCT's first member, an ARRAY's element node (0 otherwise).
    pub first: u32,
    /// A STRUCT's member count (0 otherwise).
    pub count: u16,
    /// `abi::STP_PK_*`.
    pub kind: u8,
    /// Scalar size in bytes (1, 2, 4 or 8; 0 for other kinds).
    pub size: u8,
    /// A bitfield's first bit in those bytes.
    pub bit_off: u8,
    /// A bitfield's width (0: not a bitfield).
    pub bit_size: u8,
}

impl PrettyNode {
    /// The node's 24 bytes in the image.
    pub fn to_bytes(&self) -> [u8; 24] {
        let mut b = [0u8; 24];
        b[0..4].copy_from_slice(&self.name.to_le_bytes());
        b[4..8].copy_from_slice(&self.offset.to_le_bytes());
        b[8..12].copy_from_slice(&self.first.to_le_bytes());
        b[12..14].copy_from_slice(&self.count.to_le_bytes());
        b[14] = self.kind;
        b[15] = self.size;
        b[16] = self.bit_off;
        b[17] = self.bit_size;
        b
    }
}

/// Where a target variable's parameter comes from.
///
/// A handler may serve several probes (a probe declaration with several
/// points, a wildcard the loader expands into one probe per function): the
/// loader resolves a `Function` or `Syscall` use for each probe of its
/// handler on that probe's own symbol (the function it is armed on, the
/// syscall of a `FirstOf` target, the tracepoint), and gives probes whose
/// constants differ copies of the handler. The site names what the
/// compiler saw at the handler's first point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TargetSite {
    /// A parameter of the kernel function of this name (or pattern), read
    /// at its entry (`kernel.function("f")`, `kprobe.function("f")`,
    /// `kernel.trace("tp")`).
    Function(String),
    /// An argument of system call `name` (`syscall.NAME`): its names and
    /// types are those of `__do_sys_NAME` (else `__se_sys_NAME`); when the
    /// probed symbol is the `__x64_sys_NAME` wrapper, which takes
    /// `struct pt_regs *`, the value is read from the saved registers.
    Syscall(String),
    /// `@cast(addr, "TYPE"[, "kernel"])->a->b`: no parameter; the code
    /// starts from the address it computed, the struct, union or typedef
    /// `TYPE` of the kernel's BTF (a `struct `/`union ` prefix allowed)
    /// is at that address, and the member chain starts there. Such a use
    /// has no `ArgIndex` relocation and needs no probe symbol.
    Cast(String),
    /// An argument of a netfilter hook (`netfilter.hook(…).pf(…)`:
    /// `$hooknum`, `$skb`, `$in`, `$out`, `$okfn`, in ARG slots 0..4,
    /// kmod/netfilter.c), typed from the kernel's BTF (`struct
    /// nf_hook_state`, `nf_hook_slow`'s `skb`).
    Netfilter,
    /// `@var("NAME")` / `@var("NAME@FILE")`: the kernel global variable
    /// NAME (`TargetVar::name` too). The code starts from its address, a
    /// `SymAddr` constant the loader takes from /proc/kallsyms; its type
    /// comes from the BTF `VAR` of that name (without one, the variable
    /// reads as an `unsigned long` and has no `->`/`[i]` chain). Like
    /// `Cast`, it needs no probe symbol.
    Var(String),
}

/// What the loader writes into one relocated constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RelocKind {
    /// The 0-based argument register of the parameter (ARG's operand).
    ArgIndex,
    /// Byte offset added at step `n` (step 0: from the argument to the
    /// saved syscall register, 0 for a function parameter; step i >= 1: of
    /// the i-th `->member` in its struct/union).
    Offset(u32),
    /// 1 when step `n` reads 8 bytes at the address (a pointer or scalar
    /// member or element, a `pt_regs` register), 0 when it stays an address
    /// (an embedded struct/union/array, a no-op step 0, the last step of an
    /// address-of use).
    Deref(u32),
    /// Left shift applied to the final 64-bit value: `64 - bits` for a
    /// signed integer narrower than 64 bits, else 0; for a bitfield of
    /// `w` bits at bit `b` of the 8-byte word read, `64 - b - w`. (An image
    /// without `RShift` shifts right by this constant as well.)
    Shift,
    /// AND mask applied last: `2^bits - 1` for an unsigned integer narrower
    /// than 64 bits, else -1.
    Mask,
    /// `@defined(...)`: 1 when the running kernel's BTF has the variable
    /// and every member of the chain, else 0. A use whose own resolution
    /// fails is not an error when an `Exists` use of the same variable
    /// (site, name, chain) is in the program: the script guarded it.
    Exists,
    /// The element size (bytes) of index step `n` (a `[]` in
    /// `TargetVar::fields`): the code multiplies the index by it and adds
    /// the product to the address (C's pointer arithmetic).
    ElemSize(u32),
    /// Arithmetic right shift applied after `Shift`'s left shift: equal to
    /// it for a whole integer, `64 - w` for a bitfield of `w` bits (which
    /// `Shift` has moved to the top of the word).
    RShift,
    /// The address of kernel symbol `TargetVar::name` (`TargetSite::Var`)
    /// as /proc/kallsyms lists it. The module does not trust it: every
    /// read from it goes through the fault-safe `KERNEL_LONG`.
    SymAddr,
    /// The PRETTY node (`Program::pretty`) of the use's final type, for
    /// `$var$` / `$var$$`: the loader builds the nodes from BTF, following
    /// pointers at the top as stap does (opcodes.h: PRETTY). Left at 0
    /// with no nodes (a stand-in image), PRETTY prints stap's `?`.
    Pretty {
        /// `$$`: nested aggregates are expanded, so their nodes are built.
        deep: bool,
    },
}

/// One relocated constant: `Program::konsts[konst]` is patched at load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reloc {
    /// Index into `Program::konsts`.
    pub konst: u32,
    /// What goes there.
    pub kind: RelocKind,
}

/// One use of a target variable. The compiled code is, with `k*` the
/// relocated constants: `v := ARG(konst[arg])`, then for each step
/// `v += konst[off]` (an index step `[i]`: `v += i * konst[elemsize]`);
/// `if konst[deref] { v := KERNEL_LONG(v) }`, then
/// `v := ((v << konst[shift]) >> konst[rshift]) & konst[mask]` (`>>` is
/// arithmetic).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetVar {
    /// The variable's name without `$`.
    pub name: String,
    /// The chain after it: a member name for each `->member`, `[]` (not a
    /// C identifier) for each index `[i]`.
    pub fields: Vec<String>,
    /// The handler whose code reads it (its probe's symbol decides how
    /// syscall arguments are read).
    pub handler: u32,
    /// Where the parameter comes from.
    pub site: TargetSite,
    /// The probe point as written, for messages.
    pub probe_point: String,
    /// Where the use is in the script.
    pub loc: SrcLoc,
    /// The constants to fill in.
    pub relocs: Vec<Reloc>,
    /// `&chain`: the use is the address of the last member or element
    /// (its last step reads no memory, no narrowing), not its value.
    #[serde(default)]
    pub addr_of: bool,
    /// The `@defined` conditions the use runs under (the branches of
    /// `@defined(x) ? a : b`, `if`, `&&`, `||` around it): for a probe
    /// where one fails, the use never runs and is not resolved.
    #[serde(default)]
    pub conds: Vec<TargetCond>,
}

/// A condition on a target variable's existence, answered by an `Exists`
/// use of the same handler: `@defined($name->fields)` is `defined`. For a
/// `@cast(p, "TYPE")->fields` chain, whose answer depends on the type
/// alone, `name` is `cast_cond_name(TYPE)` and any `Exists` use of that
/// type and chain in the program answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetCond {
    /// The variable's name without `$` (`TargetVar::name`).
    pub name: String,
    /// Its chain (`TargetVar::fields`).
    pub fields: Vec<String>,
    /// The answer under which the use runs.
    pub defined: bool,
}

/// `TargetCond::name` of a `@cast(p, "ty")->...` condition: `@cast(ty)`,
/// never a C identifier, so it cannot name a parameter.
pub fn cast_cond_name(ty: &str) -> String {
    format!("@cast({ty})")
}

impl Program {
    /// The signature of the function whose handler is `handler`.
    pub fn func_of(&self, handler: u32) -> Option<&FuncSig> {
        self.funcs.iter().find(|f| f.handler == handler)
    }
}

/// The default value of every limit, indexed by `abi::STP_LIM_*`.
pub fn default_limits() -> Vec<u32> {
    crate::limits::LIMITS.iter().map(|l| l.default).collect()
}

#[cfg(test)]
mod statement_tests {
    use super::*;

    #[test]
    fn statement_patterns_parse_as_stap_writes_them() {
        let p = |s| StatementSpec::parse(s).unwrap();
        let one = p("do_nanosleep@kernel/time/hrtimer.c:2040");
        assert_eq!(one.module, None);
        assert_eq!(one.function, "do_nanosleep");
        assert_eq!(one.file, Some("kernel/time/hrtimer.c"));
        assert_eq!(one.lines, StatementLines::One(2040));
        assert_eq!(p("f@*:*").lines, StatementLines::All);
        assert_eq!(p("f@a.c:3-9").lines, StatementLines::Range(3, 9));
        assert_eq!(p("f@a.c+17").lines, StatementLines::Relative(17));
        assert_eq!(p("f@a.c").lines, StatementLines::Entry);
        let m = p("ext4:ext4_*@fs/ext4/*.c:*");
        assert_eq!((m.module, m.function), (Some("ext4"), "ext4_*"));
        let bare = p("vfs_read");
        assert_eq!((bare.file, bare.lines), (None, StatementLines::Entry));
        for bad in [
            "",
            "f@",
            "f@a.c:",
            "f@a.c:x",
            "f@a.c:0",
            "f@a.c:5-2",
            "m m:f",
            "f@a b.c:1",
        ] {
            assert!(StatementSpec::parse(bad).is_err(), "{bad:?}");
        }
    }
}
