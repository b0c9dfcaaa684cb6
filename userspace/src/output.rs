//! Records to text, as stap prints them: PRINTF records through the shared
//! C formatter (`vm_spec::core::format`), ERROR records as
//! `ERROR: <message> near <token> at <file>:<line>:<col>`, globals at exit
//! as `name=value`, and the closing summary
//! (`WARNING: Number of errors: N, skipped probes: M`).
//!
//! `Printer` writes a merged batch: script output to its writer (stdout or
//! `-o FILE`), messages to stderr; the output writer is flushed before each
//! message and after each batch, so lines never interleave.
use crate::ring::Batch;
use std::io::{self, Write};
use vm_spec::abi;
use vm_spec::core;
use vm_spec::maps::MapEntry;
use vm_spec::program::{GlobalType, Program};
use vm_spec::records::FmtArg;
use vm_spec::records::{self, Record};
use vm_spec::tables::RUNTIME_ERRORS;

/// What one record turns into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rendered {
    /// Script output (bytes, not necessarily UTF-8).
    Out(Vec<u8>),
    /// A message line for stderr (without the newline).
    Message(String),
    /// `exit()` ran.
    Exit,
    /// `switch_file()` ran (`Program::switch_file_format`).
    SwitchFile,
    /// `system(cmd)` ran: the command, for `/bin/sh -c` (`crate::system`).
    System(Vec<u8>),
}

/// stap's keywords (parse.cxx), for naming a token in error messages.
const KEYWORDS: &[&str] = &[
    "probe", "global", "private", "function", "if", "else", "for", "foreach", "in", "limit",
    "return", "delete", "while", "break", "continue", "next", "string", "long", "try", "catch",
];

/// stap's operators, longest first (parse.cxx `lexer::scan`).
const OPERATORS: &[&str] = &[
    "<<<", ">>>", "<<=", ">>=", "==", "!=", "<=", ">=", "=~", "!~", "+=", "-=", "*=", "/=", "%=",
    "&=", "^=", "|=", ".=", "&&", "||", "++", "--", "->", "<<", ">>",
];

/// Describes the token at 1-based `line`:`col` of `source` as stap does in
/// error messages (`operator '/'`, `identifier 'x'`, `number '5'`,
/// `string 'abc'`, `keyword 'if'`); `None` when there is no token there.
pub fn token_at(source: &str, line: u32, col: u32) -> Option<String> {
    let text = source.lines().nth(line.checked_sub(1)? as usize)?;
    let rest: String = text.chars().skip(col.checked_sub(1)? as usize).collect();
    let first = rest.chars().next()?;
    let ident_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    let (kind, tok): (&str, String) = if first.is_ascii_alphabetic() || "_$@".contains(first) {
        let tok: String = std::iter::once(first)
            .chain(rest.chars().skip(1).take_while(|&c| ident_char(c)))
            .collect();
        let kind = if KEYWORDS.contains(&tok.as_str()) {
            "keyword"
        } else {
            "identifier"
        };
        (kind, tok)
    } else if first.is_ascii_digit() {
        let tok = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        ("number", tok)
    } else if first == '"' {
        let mut tok = String::new();
        let mut escaped = false;
        for c in rest.chars().skip(1) {
            if !escaped && c == '"' {
                break;
            }
            escaped = !escaped && c == '\\';
            tok.push(c);
        }
        ("string", tok)
    } else if first.is_ascii_punctuation() {
        let tok = OPERATORS
            .iter()
            .find(|op| rest.starts_with(*op))
            .map(|op| op.to_string())
            .unwrap_or_else(|| first.to_string());
        ("operator", tok)
    } else {
        return None;
    };
    Some(format!("{kind} '{tok}'"))
}

/// Turns records into text for one program.
#[derive(Debug)]
pub struct Renderer<'p> {
    prog: &'p Program,
}

impl<'p> Renderer<'p> {
    /// A renderer for records of `prog`.
    pub fn new(prog: &'p Program) -> Self {
        Renderer { prog }
    }

    /// The stap message of a run-time error: `ERROR: division by 0 near
    /// operator '/' at x.stp:3:10`. The place comes from the handler's
    /// source locations; when the location names no token the handler's
    /// probe point stands in for it.
    pub fn error_message(&self, code: u16, handler: u32, pc: u32, addr: u64) -> String {
        if u32::from(code) == abi::STP_RTE_OVERLOAD {
            return overload_message(self.prog, addr);
        }
        let msg = match RUNTIME_ERRORS.get(usize::from(code)) {
            Some(e) => e
                .msg
                .replace("%llx", &format!("{addr:x}"))
                .replace("%llu", &addr.to_string())
                .replace("%lld", &(addr as i64).to_string()),
            None => format!("unknown run-time error {code}"),
        };
        let Some(h) = self.prog.handlers.get(handler as usize) else {
            return format!("ERROR: {msg} in unknown handler {handler}");
        };
        let loc = h.locs.get(pc as usize).filter(|l| l.line != 0);
        let near = loc
            .and_then(|l| token_at(&self.prog.source, l.line, l.col))
            .unwrap_or_else(|| h.probe_point.clone());
        match loc {
            Some(l) => format!(
                "ERROR: {msg} near {near} at {}:{}:{}",
                self.prog.source_name, l.line, l.col
            ),
            None => format!("ERROR: {msg} near {near}"),
        }
    }

    /// Renders one record (header included).
    pub fn render(&self, rec: &[u8]) -> Rendered {
        match records::parse(rec, &self.prog.formats) {
            Ok(Record::Printf { fmt, .. })
                if self.prog.switch_file_format == Some(u32::from(fmt)) =>
            {
                Rendered::SwitchFile
            }
            // warn(msg): stap's _stp_warn, "WARNING: " and msg with one
            // newline (added when msg has none), on stderr.
            Ok(Record::Printf { fmt, args, .. })
                if self.prog.warn_format == Some(u32::from(fmt)) =>
            {
                let msg = match args.first().map(|a| a.as_fmt_arg()) {
                    Some(FmtArg::Str(s)) => String::from_utf8_lossy(s).into_owned(),
                    _ => String::new(),
                };
                let msg = msg.strip_suffix('\n').unwrap_or(&msg);
                Rendered::Message(format!("WARNING: {msg}"))
            }
            Ok(Record::Printf { fmt, args, .. }) => {
                let text = &self.prog.formats[usize::from(fmt)].text;
                let fargs: Vec<FmtArg> = args.iter().map(|a| a.as_fmt_arg()).collect();
                Rendered::Out(core::format(text, &fargs))
            }
            Ok(Record::Error {
                code,
                handler,
                pc,
                addr,
                msg,
                ..
            }) => {
                let m = self.error_message(code, handler, pc, addr);
                // STP_RTE_USER's message is "%s": error(msg)'s text.
                Rendered::Message(if u32::from(code) == vm_spec::abi::STP_RTE_USER {
                    m.replacen("%s", &String::from_utf8_lossy(&msg), 1)
                } else {
                    m
                })
            }
            Ok(Record::Exit { .. }) => Rendered::Exit,
            // print(@hist_*(s)): drawn as stap draws it (vm_spec::hist).
            Ok(Record::Hist { hist, .. }) => Rendered::Out(hist.draw().into_bytes()),
            Ok(Record::System { cmd, .. }) => Rendered::System(cmd),
            Err(e) => Rendered::Message(format!("ERROR: unreadable record from the kernel: {e}")),
        }
    }
}

/// What stap prints for the globals at exit (its end probe, which an error
/// abort skips), in declaration order: `name=value` for each long scalar
/// marked `print_at_exit` (`values[i]` is global i, 0 when missing),
/// `name="value"` for such a string scalar (read from its one-entry map),
/// and the entries of each array written and never read
/// (`vm_spec::maps::exit_text`). `map_entries(i)` reads every entry of map
/// `i` (STP_IOC_MAP_READ); its first error is returned.
pub fn exit_globals_text<E>(
    prog: &Program,
    values: &[i64],
    mut map_entries: impl FnMut(usize) -> Result<Vec<MapEntry>, E>,
) -> Result<String, E> {
    let mut out = String::new();
    for (i, g) in prog.globals.iter().enumerate() {
        let str_map = match g.ty {
            GlobalType::Str => string_global_map(prog, &g.name),
            GlobalType::Long => None,
        };
        if let (true, Some(mi)) = (g.print_at_exit, str_map) {
            out.push_str(&string_global_text(&g.name, &map_entries(mi)?));
        } else if g.print_at_exit {
            let v = values.get(i).copied().unwrap_or(0);
            out.push_str(&format!("{}={v}\n", g.name));
        } else if let Some((mi, m)) = prog
            .maps
            .iter()
            .enumerate()
            .find(|(_, m)| m.name == g.name && m.print_at_exit)
        {
            out.push_str(&vm_spec::maps::exit_text(m, &map_entries(mi)?));
        }
    }
    Ok(out)
}

/// Whether `exit_globals_text` needs the scalar values (STP_IOC_GLOBALS).
pub fn exit_needs_values(prog: &Program) -> bool {
    prog.globals.iter().any(|g| g.print_at_exit)
}

/// The map holding string global `name` (`GlobalType::Str`: a one-entry
/// map of the same name with a string value).
pub fn string_global_map(prog: &Program, name: &str) -> Option<usize> {
    prog.maps
        .iter()
        .position(|m| m.name == name && m.value == vm_spec::program::MapValue::Str)
}

/// The line stap prints at exit for string global `name` whose map holds
/// `entries` (none: never written, or deleted): `name="value"`, the value
/// escaped as `%#s` does.
pub fn string_global_text(name: &str, entries: &[MapEntry]) -> String {
    let value = match entries.first().map(|e| &e.value) {
        Some(vm_spec::maps::Val::Str(s)) => s.as_slice(),
        _ => b"",
    };
    format!("{name}={}\n", vm_spec::maps::quoted(value))
}

/// The value of limit `lim` (`abi::STP_LIM_*`) in `prog`, or its default.
pub fn limit(prog: &Program, lim: u32) -> u32 {
    let i = lim as usize;
    prog.limits
        .get(i)
        .copied()
        .or_else(|| vm_spec::limits::LIMITS.get(i).map(|l| l.default))
        .unwrap_or(0)
}

/// stap's overload message (its epilogue's `_stp_error`, no location):
/// `sum` handler cycles (`get_cycles()`) on one CPU within
/// `STP_OVERLOAD_INTERVAL` cycles.
pub fn overload_message(prog: &Program, sum: u64) -> String {
    format!(
        "ERROR: probe overhead ({sum} cycles) exceeded threshold ({} cycles) in last {} cycles",
        limit(prog, abi::STP_LIM_STP_OVERLOAD_THRESHOLD),
        limit(prog, abi::STP_LIM_STP_OVERLOAD_INTERVAL)
    )
}

/// The module put the session in the error state: more than MAXERRORS
/// run-time errors or more than MAXSKIPPED skipped hits. No handler ran
/// after that, and neither did the end probes.
pub fn aborted(st: &abi::stp_status) -> bool {
    st.state == abi::STP_STATE_ERROR
}

/// The closing messages (stderr lines) for a session's final status.
pub fn summary(prog: &Program, st: &abi::stp_status) -> Vec<String> {
    let mut out = Vec::new();
    if st.exit_requested == abi::STP_EXIT_DEADMAN {
        out.push(format!(
            "ERROR: no consumer read the output for {} s: the module disarmed every probe (deadman)",
            abi::STP_DEADMAN_NS / 1_000_000_000
        ));
    }
    // An error abort that the errors do not explain came from MAXSKIPPED
    // (the overload breaker and the deadman have their own messages).
    if aborted(st)
        && st.exit_requested != abi::STP_EXIT_OVERLOAD
        && st.exit_requested != abi::STP_EXIT_DEADMAN
        && st.errors <= u64::from(limit(prog, abi::STP_LIM_MAXERRORS))
    {
        out.push(
            "ERROR: Skipped too many probes, check MAXSKIPPED or try again with stap -t for more details."
                .to_string(),
        );
    }
    if st.errors > 0 || st.skipped > 0 {
        out.push(format!(
            "WARNING: Number of errors: {}, skipped probes: {}",
            st.errors, st.skipped
        ));
    }
    if st.dropped > 0 {
        out.push(format!(
            "WARNING: Number of dropped records: {} (the output rings were full; try -D RING_PAGES={})",
            st.dropped,
            (limit(prog, abi::STP_LIM_RING_PAGES) * 4).min(abi::STP_MAX_RING_PAGES)
        ));
    }
    out
}

/// `-v`'s per-probe lines: `<probe point>: hits N, skipped M`, one per
/// probe of `prog` (the program the image was built from), in its order.
pub fn probe_stats_lines(prog: &Program, stats: &[abi::stp_probe_stat]) -> Vec<String> {
    prog.probes
        .iter()
        .zip(stats)
        .map(|(p, s)| format!("{}: hits {}, skipped {}", p.display, s.hits, s.skipped))
        .collect()
}

/// The exit status stap would give: 1 when the session ended in the error
/// state (more than MAXERRORS errors, or more than MAXSKIPPED skipped
/// probes), else 0.
pub fn exit_status(st: &abi::stp_status) -> i32 {
    i32::from(aborted(st))
}

/// Writes batches: output to `out`, messages to `err`.
pub struct Printer<'p, W: Write, E: Write> {
    renderer: Renderer<'p>,
    out: W,
    err: E,
    /// EXIT records seen so far.
    pub exits: u64,
    /// Output write failed (e.g. EPIPE): further output is discarded.
    pub out_failed: Option<io::Error>,
    /// What `switch_file()` does to the output (after a flush); nothing
    /// when unset.
    pub switch_file: Option<SwitchHook<W>>,
    /// The commands of system(); `None` (tests) writes what would run as
    /// a message line instead.
    pub system: Option<crate::system::Runner>,
}

/// `Printer::switch_file`.
pub type SwitchHook<W> = Box<dyn FnMut(&mut W) -> io::Result<()>>;

impl<'p, W: Write, E: Write> Printer<'p, W, E> {
    /// A printer for `prog`'s records.
    pub fn new(prog: &'p Program, out: W, err: E) -> Self {
        Printer {
            renderer: Renderer::new(prog),
            out,
            err,
            exits: 0,
            out_failed: None,
            switch_file: None,
            system: None,
        }
    }

    fn out_write(&mut self, bytes: &[u8]) {
        if self.out_failed.is_none() {
            if let Err(e) = self.out.write_all(bytes) {
                self.out_failed = Some(e);
            }
        }
    }

    /// Flushes the output writer.
    pub fn flush(&mut self) {
        if self.out_failed.is_none() {
            if let Err(e) = self.out.flush() {
                self.out_failed = Some(e);
            }
        }
    }

    /// Writes a message line to stderr (after flushing the output, so the
    /// two streams stay in order on a terminal).
    pub fn message(&mut self, line: &str) {
        self.flush();
        let _ = writeln!(self.err, "{line}");
        let _ = self.err.flush();
    }

    /// Writes raw script output (globals at exit).
    pub fn output(&mut self, bytes: &[u8]) {
        self.out_write(bytes);
    }

    /// Prints a batch in its current order, then flushes. Returns true when
    /// the batch held an EXIT record.
    pub fn print_batch(&mut self, batch: &Batch) -> bool {
        let mut exit = false;
        for (_, rec) in batch.iter() {
            match self.renderer.render(rec) {
                Rendered::Out(bytes) => self.out_write(&bytes),
                Rendered::Message(m) => self.message(&m),
                Rendered::Exit => {
                    exit = true;
                    self.exits += 1;
                }
                Rendered::System(cmd) => {
                    // Output so far first, then the command (crate::system).
                    self.flush();
                    let _ = self.err.flush();
                    let msg = match self.system.as_mut() {
                        Some(r) => r.run(&cmd),
                        None => Some(format!("system: {}", String::from_utf8_lossy(&cmd))),
                    };
                    if let Some(m) = msg {
                        self.message(&m);
                    }
                }
                Rendered::SwitchFile => {
                    self.flush();
                    if let (None, Some(hook)) = (&self.out_failed, self.switch_file.as_mut()) {
                        if let Err(e) = hook(&mut self.out) {
                            self.out_failed = Some(e);
                        }
                    }
                }
            }
        }
        self.flush();
        exit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::fake::record;
    use vm_spec::program::*;

    fn prog() -> Program {
        Program {
            source_name: "x.stp".into(),
            source: "global n\nprobe begin {\n  x = 1\n  n = 10 / x ; y = \"s\"\n}\n".into(),
            limits: default_limits(),
            globals: vec![
                Global {
                    name: "n".into(),
                    ty: GlobalType::Long,
                    print_at_exit: true,
                },
                Global {
                    name: "hidden".into(),
                    ty: GlobalType::Long,
                    print_at_exit: false,
                },
            ],
            formats: vec![Format {
                text: "%s (%d) open\n".into(),
                args: vec![ArgKind::Str, ArgKind::Int],
            }],
            handlers: vec![Handler {
                ctx: abi::STP_CTX_BEGIN as u8,
                nregs: 2,
                nsregs: 0,
                code: vec![Insn::default(); 3],
                locs: vec![
                    SrcLoc { line: 4, col: 10 },
                    SrcLoc { line: 0, col: 0 },
                    SrcLoc { line: 4, col: 3 },
                ],
                probe_point: "begin".into(),
            }],
            ..Default::default()
        }
    }

    fn printf_rec(time: u64, s: &[u8], n: i64) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&(s.len() as u32).to_le_bytes());
        p.extend_from_slice(s);
        while p.len() % 8 != 0 {
            p.push(0);
        }
        p.extend_from_slice(&n.to_le_bytes());
        record(abi::STP_REC_PRINTF as u16, 0, time, &p)
    }

    fn error_rec(code: u32, handler: u32, pc: u32, addr: u64) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&handler.to_le_bytes());
        p.extend_from_slice(&pc.to_le_bytes());
        p.extend_from_slice(&addr.to_le_bytes());
        record(abi::STP_REC_ERROR as u16, code as u16, 0, &p)
    }

    #[test]
    fn tokens_as_stap_names_them() {
        let src = "a = b / c\nif (x <<< 1) \"str\\\"q\" 42 $y";
        assert_eq!(token_at(src, 1, 7).as_deref(), Some("operator '/'"));
        assert_eq!(token_at(src, 1, 1).as_deref(), Some("identifier 'a'"));
        assert_eq!(token_at(src, 2, 1).as_deref(), Some("keyword 'if'"));
        assert_eq!(token_at(src, 2, 7).as_deref(), Some("operator '<<<'"));
        assert_eq!(token_at(src, 2, 14).as_deref(), Some("string 'str\\\"q'"));
        assert_eq!(token_at(src, 2, 23).as_deref(), Some("number '42'"));
        assert_eq!(token_at(src, 2, 26).as_deref(), Some("identifier '$y'"));
        assert_eq!(token_at(src, 9, 1), None);
        assert_eq!(token_at(src, 1, 99), None);
        assert_eq!(token_at(src, 0, 1), None);
        assert_eq!(token_at(src, 1, 2), None, "whitespace");
    }

    #[test]
    fn printf_records_use_the_format() {
        let p = prog();
        let r = Renderer::new(&p);
        assert_eq!(
            r.render(&printf_rec(1, b"cat", 3)),
            Rendered::Out(b"cat (3) open\n".to_vec())
        );
    }

    #[test]
    fn warn_records_are_stap_warnings() {
        let mut p = prog();
        p.formats[0] = Format {
            text: "WARNING: %s\n".into(),
            args: vec![ArgKind::Str],
        };
        let rec = |s: &[u8]| {
            let mut b = (s.len() as u32).to_le_bytes().to_vec();
            b.extend_from_slice(s);
            while b.len() % 8 != 0 {
                b.push(0);
            }
            record(abi::STP_REC_PRINTF as u16, 0, 1, &b)
        };
        // A printf of the same text is script output.
        assert_eq!(
            Renderer::new(&p).render(&rec(b"x")),
            Rendered::Out(b"WARNING: x\n".to_vec())
        );
        p.warn_format = Some(0);
        let r = Renderer::new(&p);
        for (msg, line) in [
            (&b"careful"[..], "WARNING: careful"),
            (b"one newline\n", "WARNING: one newline"),
            (b"two\n\n", "WARNING: two\n"),
            (b"", "WARNING: "),
        ] {
            assert_eq!(r.render(&rec(msg)), Rendered::Message(line.into()));
        }
    }

    #[test]
    fn error_records_in_stap_form() {
        let p = prog();
        let r = Renderer::new(&p);
        assert_eq!(
            r.render(&error_rec(abi::STP_RTE_DIVZERO, 0, 0, 0)),
            Rendered::Message("ERROR: division by 0 near operator '/' at x.stp:4:10".into())
        );
        assert_eq!(
            r.error_message(abi::STP_RTE_KFAULT as u16, 0, 2, 0xdead),
            "ERROR: kernel read fault at 0xdead near identifier 'n' at x.stp:4:3"
        );
        // No location: the probe point stands in.
        assert_eq!(
            r.error_message(abi::STP_RTE_MAXACTION as u16, 0, 1, 0),
            "ERROR: MAXACTION exceeded near begin"
        );
        assert_eq!(
            r.error_message(abi::STP_RTE_MAXACTION as u16, 5, 1, 0),
            "ERROR: MAXACTION exceeded in unknown handler 5"
        );
        // matched(n)'s errors carry n, printed signed (%lld).
        assert_eq!(
            r.error_message(abi::STP_RTE_SUBEXP_RANGE as u16, 0, 1, u64::MAX),
            "ERROR: Attempted to get nonexistent subexpression -1 near begin"
        );
        assert_eq!(
            r.error_message(abi::STP_RTE_SUBEXP_FAILED as u16, 0, 1, 3),
            "ERROR: Attempted to get subexpression 3 from failed match near begin"
        );
        assert_eq!(
            r.error_message(abi::STP_RTE_ARRAY_SIZE as u16, 0, 1, 10),
            "ERROR: Array overflow, check size limit (10) near begin"
        );
    }

    #[test]
    fn system_record_is_its_command_and_prints_in_place() {
        let p = prog();
        let mut payload = 4u32.to_le_bytes().to_vec();
        payload.extend_from_slice(b"date"); // 8 bytes: no padding
        let sys = record(abi::STP_REC_SYSTEM as u16, 0, 2, &payload);
        assert_eq!(
            Renderer::new(&p).render(&sys),
            Rendered::System(b"date".to_vec())
        );
        // Without a runner the command shows as a message, after the
        // output before it (flushed first).
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut pr = Printer::new(&p, &mut out, &mut err);
        let mut b = Batch::default();
        b.push(0, 1, &printf_rec(1, b"cat", 3));
        b.push(0, 2, &sys);
        pr.print_batch(&b);
        drop(pr);
        assert_eq!(out, b"cat (3) open\n");
        assert_eq!(String::from_utf8(err).unwrap(), "system: date\n");
    }

    #[test]
    fn bad_and_exit_records() {
        let p = prog();
        let r = Renderer::new(&p);
        assert_eq!(
            r.render(&record(abi::STP_REC_EXIT as u16, 0, 0, &[])),
            Rendered::Exit
        );
        match r.render(&record(abi::STP_REC_PRINTF as u16, 7, 0, &[])) {
            Rendered::Message(m) => assert!(m.starts_with("ERROR: unreadable record"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn string_globals_at_exit() {
        use vm_spec::maps::{MapEntry, Val};
        use vm_spec::program::{ArgKind, MapDecl, MapValue};
        let mut p = prog();
        p.maps.push(MapDecl {
            name: "msg".into(),
            keys: vec![ArgKind::Int],
            value: MapValue::Str,
            capacity: 1,
            ..Default::default()
        });
        assert_eq!(string_global_map(&p, "msg"), Some(0));
        assert_eq!(string_global_map(&p, "n"), None);
        let e = MapEntry {
            seq: 1,
            keys: vec![Val::Int(0)],
            value: Val::Str(b"a\"b\n".to_vec()),
        };
        assert_eq!(string_global_text("msg", &[e]), "msg=\"a\\\"b\\n\"\n");
        assert_eq!(string_global_text("msg", &[]), "msg=\"\"\n");
    }

    /// `exit_globals_text` with map reads that must not happen.
    fn scalars_text(p: &Program, values: &[i64]) -> String {
        exit_globals_text(p, values, |mi| -> Result<_, ()> { panic!("map {mi} read") }).unwrap()
    }

    #[test]
    fn globals_at_exit_in_declaration_order() {
        use vm_spec::maps::{MapEntry, Val};
        use vm_spec::program::{ArgKind, MapDecl, MapValue};
        let mut p = prog();
        // n (long, printed), hidden (long, not printed), then a string
        // scalar, an array written and never read and one that is read.
        for (name, ty) in [
            ("msg", GlobalType::Str),
            ("arr", GlobalType::Long),
            ("read", GlobalType::Long),
        ] {
            p.globals.push(Global {
                name: name.into(),
                ty,
                print_at_exit: ty == GlobalType::Str,
            });
        }
        let map = |name: &str, value, print_at_exit| MapDecl {
            name: name.into(),
            keys: vec![ArgKind::Int],
            value,
            capacity: 8,
            print_at_exit,
            ..Default::default()
        };
        p.maps = vec![
            map("msg", MapValue::Str, false),
            map("arr", MapValue::Long, true),
            map("read", MapValue::Long, false),
        ];
        let entry = |seq, k, value| MapEntry {
            seq,
            keys: vec![Val::Int(k)],
            value,
        };
        let mut reads = Vec::new();
        let text = exit_globals_text(&p, &[7, 9], |mi| -> Result<_, ()> {
            reads.push(mi);
            Ok(match mi {
                0 => vec![entry(1, 0, Val::Str(b"a\"b".to_vec()))],
                _ => vec![entry(2, 3, Val::Int(30)), entry(1, 5, Val::Int(50))],
            })
        })
        .unwrap();
        assert_eq!(text, "n=7\nmsg=\"a\\\"b\"\narr[5]=50\narr[3]=30\n");
        assert_eq!(reads, vec![0, 1], "the read array's map is not read");
        // A failed map read is the result.
        assert_eq!(exit_globals_text(&p, &[], |_| Err("EFAULT")), Err("EFAULT"));
        // Never written: the empty string.
        p.globals.truncate(3);
        let text = exit_globals_text(&p, &[], |_| -> Result<_, ()> { Ok(Vec::new()) });
        assert_eq!(text.unwrap(), "n=0\nmsg=\"\"\n");
        assert!(exit_needs_values(&p));
        p.globals.iter_mut().for_each(|g| g.print_at_exit = false);
        assert!(!exit_needs_values(&p));
    }

    #[test]
    fn globals_and_summary() {
        let p = prog();
        assert_eq!(scalars_text(&p, &[7, 9]), "n=7\n");
        assert_eq!(scalars_text(&p, &[]), "n=0\n");
        let mut st = abi::stp_status {
            state: abi::STP_STATE_STOPPED,
            ..Default::default()
        };
        assert!(summary(&p, &st).is_empty());
        assert_eq!(exit_status(&st), 0);
        st.errors = 1;
        st.skipped = 2;
        st.state = abi::STP_STATE_ERROR;
        assert_eq!(
            summary(&p, &st),
            vec!["WARNING: Number of errors: 1, skipped probes: 2"]
        );
        assert_eq!(exit_status(&st), 1, "the module reports the error state");
        // Errors within MAXERRORS: no abort.
        st.state = abi::STP_STATE_STOPPED;
        assert_eq!(exit_status(&st), 0);
        st.errors = 0;
        st.skipped = 0;
        st.dropped = 12;
        let s = summary(&p, &st);
        assert_eq!(s.len(), 1);
        assert!(
            s[0].starts_with("WARNING: Number of dropped records: 12"),
            "{}",
            s[0]
        );
        st.skipped = 101;
        // kprobe misses above MAXSKIPPED without the error state: stap
        // counts them at unregistration, after the last check.
        assert!(!summary(&p, &st)[0].starts_with("ERROR"));
        st.state = abi::STP_STATE_ERROR;
        assert!(summary(&p, &st)[0].starts_with("ERROR: Skipped too many probes"));
        assert_eq!(exit_status(&st), 1);
    }

    #[test]
    fn overload_and_deadman_have_their_own_messages() {
        let mut p = prog();
        p.limits[abi::STP_LIM_STP_OVERLOAD_THRESHOLD as usize] = 200_000_000;
        let r = Renderer::new(&p);
        // No location: stap's _stp_error in the probe epilogue.
        assert_eq!(
            r.error_message(abi::STP_RTE_OVERLOAD as u16, 0, 0, 612_345_678),
            "ERROR: probe overhead (612345678 cycles) exceeded threshold \
             (200000000 cycles) in last 1000000000 cycles"
        );
        let mut st = abi::stp_status {
            state: abi::STP_STATE_ERROR,
            exit_requested: abi::STP_EXIT_OVERLOAD,
            errors: 1,
            ..Default::default()
        };
        p.limits[abi::STP_LIM_MAXERRORS as usize] = 5;
        // Errors within MAXERRORS, yet no MAXSKIPPED message.
        assert_eq!(
            summary(&p, &st),
            vec!["WARNING: Number of errors: 1, skipped probes: 0"]
        );
        assert_eq!(exit_status(&st), 1);
        st.exit_requested = abi::STP_EXIT_DEADMAN;
        st.errors = 0;
        let s = summary(&p, &st);
        assert_eq!(s.len(), 1, "{s:?}");
        assert!(s[0].starts_with("ERROR: no consumer read the output for 10 s"));
        assert_eq!(exit_status(&st), 1);
    }

    #[test]
    fn probe_stats_lines_name_each_probe_point() {
        let mut p = prog();
        for d in ["begin", "kernel.function(\"vfs_read\")"] {
            p.probes.push(Probe {
                kind: abi::STP_PROBE_BEGIN as u8,
                flags: 0,
                handler: 0,
                target: ProbeTarget::None,
                maxactive: 0,
                period_ns: 0,
                randomize: 0,
                perf: None,
                watch: None,
                netfilter: None,
                uprobe: None,
                display: d.into(),
            });
        }
        let stats = [
            abi::stp_probe_stat {
                hits: 1,
                skipped: 0,
            },
            abi::stp_probe_stat {
                hits: 42,
                skipped: 3,
            },
        ];
        assert_eq!(
            probe_stats_lines(&p, &stats),
            vec![
                "begin: hits 1, skipped 0",
                "kernel.function(\"vfs_read\"): hits 42, skipped 3"
            ]
        );
        // Fewer entries than probes (an old module): only those.
        assert_eq!(probe_stats_lines(&p, &stats[..1]).len(), 1);
    }

    #[test]
    fn printer_orders_and_flushes() {
        let p = prog();
        let mut batch = Batch::new();
        let a = printf_rec(30, b"late", 2);
        let b = printf_rec(10, b"early", 1);
        let e = error_rec(abi::STP_RTE_DIVZERO, 0, 0, 0);
        let x = record(abi::STP_REC_EXIT as u16, 0, 40, &[]);
        batch.push(0, 30, &a);
        batch.push(1, 10, &b);
        batch.push(1, 20, &e);
        batch.push(0, 40, &x);
        batch.sort_by_time();
        let mut out = Vec::new();
        let mut err = Vec::new();
        let mut pr = Printer::new(&p, &mut out, &mut err);
        assert!(pr.print_batch(&batch));
        assert_eq!(pr.exits, 1);
        drop(pr);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "early (1) open\nlate (2) open\n"
        );
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "ERROR: division by 0 near operator '/' at x.stp:4:10\n"
        );
    }
}

#[cfg(test)]
mod bench {
    use super::*;
    use crate::ring::fake::record;
    use vm_spec::program::*;

    /// Throughput of the print path (run with --ignored --nocapture).
    #[test]
    #[ignore]
    fn print_throughput() {
        let p = Program {
            formats: vec![Format {
                text: "%s (%d) open %s\n".into(),
                args: vec![ArgKind::Str, ArgKind::Int, ArgKind::Str],
            }],
            ..Default::default()
        };
        let mut payload = Vec::new();
        for (i, s) in [&b"bash"[..], b"/etc/passwd"].iter().enumerate() {
            payload.extend_from_slice(&(s.len() as u32).to_le_bytes());
            payload.extend_from_slice(s);
            payload.resize(payload.len().div_ceil(8) * 8, 0);
            if i == 0 {
                payload.extend_from_slice(&1234i64.to_le_bytes());
            }
        }
        let rec = record(abi::STP_REC_PRINTF as u16, 0, 1, &payload);
        let mut batch = Batch::new();
        for t in 0..1_000_000u64 {
            batch.push(0, t, &rec);
        }
        let t = std::time::Instant::now();
        let mut out = io::sink();
        let mut pr = Printer::new(&p, &mut out, io::stderr());
        pr.print_batch(&batch);
        let el = t.elapsed();
        eprintln!(
            "{} records in {:?}: {:.0} ns/record",
            batch.len(),
            el,
            el.as_nanos() as f64 / batch.len() as f64
        );
    }
}
