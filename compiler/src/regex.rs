//! `=~` and `!~`: stap's regular expressions compiled at compile time into
//! the DFA tables the VM runs (abi.h: `struct stp_regex_desc`, opcodes.h:
//! `REMATCH`).
//!
//! The dialect is stap's own (stapregex-parse.cxx: POSIX ERE as stap's
//! regex compiler implements it): `|`, concatenation, `*` `+` `?`
//! `{m}` `{m,}` `{m,n}` (counts below 12345), `(...)` and `(?:...)`, `.`
//! (any byte but NUL, newline included), bracket expressions with ranges,
//! `^` negation and the named classes `[:alpha:]` ... (plus stap's short
//! `[:d:]`, `[:s:]`, `[:l:]`, `[:u:]`), a backslash escaping the next byte
//! (inside brackets too), `^` and `$` anchoring at the start and end of the
//! string. The match is unanchored (the pattern may match anywhere in the
//! string). The literal reaches us decoded
//! (`\n`, `\x41`, `\\` already turned into bytes by the lexer), which is
//! what stap's cursor does before its parser sees a character.
//!
//! The parsed pattern becomes a `regex_syntax::hir::Hir` (bytes, no
//! Unicode), regex-automata builds and minimises a dense unanchored DFA
//! from it (`MatchKind::All`), and `flatten` renumbers the states reachable
//! from the start: 0 rejects, 1 accepts (either ends the walk), the others
//! each have one row of `nclasses` transitions, the last column being the
//! end of the string. A pattern whose DFA passes `STP_MAX_REGEX_STATES` is
//! refused at compile time.
//!
//! Capturing groups are `Hir::Capture` nodes, numbered by their opening
//! parenthesis from 1 as stapregex-parse.cxx numbers them (`(?:...)` does
//! not capture); the DFA ignores them. In a script that calls `matched()`,
//! `matched_str()` or `ngroups()`, `compile_groups` also lowers the same
//! Hir into the group program REMATCHS runs (abi.h: `STP_RX_*`, a Pike VM
//! program): `SAVE 0`, the pattern, `SAVE 1`, `MATCH`, with greedy
//! closures and alternatives in priority order, counted repetitions
//! expanded (their size checked against `STP_MAX_REGEX_INSNS` as the
//! program grows).
use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use regex_syntax::hir::{
    Capture, Class, ClassBytes, ClassBytesRange, Hir, HirKind, Look, Repetition,
};
use std::collections::HashMap;
use vm_spec::abi;
use vm_spec::program::{rx_insn, RegexGroups, RegexTable};

/// Why a pattern does not compile; `Display` is stap's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegexError {
    /// A syntax error at a byte position of the (decoded) literal.
    #[error("regex compilation error (at position {pos}): {msg}")]
    Syntax {
        /// Byte offset into the pattern.
        pos: usize,
        /// stap's text for the error.
        msg: String,
    },
    /// The automaton is larger than the VM takes.
    #[error("regex compilation error: {0}")]
    TooLarge(String),
    /// The group program is larger than the VM takes.
    #[error("not supported yet: {0}")]
    Unsupported(String),
}

/// Most nested groups: deeper patterns are refused (bounds the recursion of
/// the parser and of the automaton builder).
const MAX_GROUP_DEPTH: usize = 100;
/// stap's MAX_DFA_REPETITIONS: a count of this or more is refused.
const MAX_REPETITIONS: u32 = 12345;
/// Heap bounds handed to regex-automata (NFA and DFA construction).
const NFA_SIZE_LIMIT: usize = 4 << 20;
const DFA_SIZE_LIMIT: usize = 16 << 20;

/// Compiles `pattern` (the decoded literal) into the VM's table.
pub fn compile(pattern: &[u8]) -> Result<RegexTable, RegexError> {
    let hir = parse(pattern)?;
    let table = build(&hir)?;
    Ok(RegexTable {
        pattern: pattern.to_vec(),
        ..table
    })
}

/// Compiles `pattern` into the VM's table and its group program (for
/// REMATCHS, in scripts that call `matched()`, `matched_str()` or
/// `ngroups()`).
pub fn compile_groups(pattern: &[u8]) -> Result<RegexTable, RegexError> {
    let (hir, ngroups) = parse_counted(pattern)?;
    let table = build(&hir)?;
    let groups = group_program(pattern, &hir, ngroups)?;
    Ok(RegexTable {
        pattern: pattern.to_vec(),
        groups: Some(groups),
        ..table
    })
}

/// Parses `pattern` in stap's dialect (checks the syntax only).
pub fn parse(pattern: &[u8]) -> Result<Hir, RegexError> {
    parse_counted(pattern).map(|(hir, _)| hir)
}

/// Parses `pattern`; also returns its number of capturing groups.
fn parse_counted(pattern: &[u8]) -> Result<(Hir, u32), RegexError> {
    let mut p = Parser {
        s: pattern,
        pos: 0,
        groups: 0,
    };
    let hir = p.expr(0)?;
    if p.pos < p.s.len() {
        // parse_expr stops only at ')' or the end.
        return Err(p.err(p.pos, "unbalanced ')'"));
    }
    Ok((hir, p.groups))
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    /// Capturing groups opened so far (the next one is `groups + 1`).
    groups: u32,
}

fn is_closure(c: u8) -> bool {
    matches!(c, b'*' | b'+' | b'?' | b'{')
}

fn class(ranges: impl IntoIterator<Item = (u8, u8)>) -> Hir {
    let set = ClassBytes::new(
        ranges
            .into_iter()
            .map(|(lo, hi)| ClassBytesRange::new(lo, hi)),
    );
    Hir::class(Class::Bytes(set))
}

/// stap's named classes (stapregex-parse.cxx, `named_char_class`).
fn named_class(name: &[u8]) -> Option<Vec<(u8, u8)>> {
    Some(match name {
        b"alpha" => vec![(b'A', b'Z'), (b'a', b'z')],
        b"alnum" => vec![(b'A', b'Z'), (b'a', b'z'), (b'0', b'9')],
        b"blank" => vec![(b' ', b' '), (b'\t', b'\t')],
        b"cntrl" => vec![(1, 0x1f), (0x7f, 0x7f)],
        b"d" | b"digit" => vec![(b'0', b'9')],
        b"xdigit" => vec![(b'0', b'9'), (b'a', b'f'), (b'A', b'F')],
        b"graph" => vec![(0x21, 0x7e)],
        b"l" | b"lower" => vec![(b'a', b'z')],
        b"print" => vec![(0x20, 0x7e)],
        b"punct" => b"!\"#$%&'()*+,./:;<=>?@[\\]^_`{|}~-"
            .iter()
            .map(|&c| (c, c))
            .collect(),
        b"s" | b"space" => vec![(b' ', b' '), (b'\t', b'\r')],
        b"u" | b"upper" => vec![(b'A', b'Z')],
        _ => return None,
    })
}

impl Parser<'_> {
    fn err(&self, pos: usize, msg: impl Into<String>) -> RegexError {
        RegexError::Syntax {
            pos,
            msg: msg.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn next(&mut self) -> Result<u8, RegexError> {
        let c = self
            .peek()
            .ok_or_else(|| self.err(self.pos, "unexpected end of regex"))?;
        self.pos += 1;
        Ok(c)
    }

    fn expect(&mut self, want: u8) -> Result<(), RegexError> {
        match self.peek() {
            None => Err(self.err(
                self.pos,
                format!("expected {}, found end of regex", want as char),
            )),
            Some(c) if c != want => Err(self.err(
                self.pos,
                format!("expected {}, found {}", want as char, c as char),
            )),
            Some(_) => {
                self.pos += 1;
                Ok(())
            }
        }
    }

    /// term ('|' term)*
    fn expr(&mut self, depth: usize) -> Result<Hir, RegexError> {
        let mut alts = vec![self.term(depth)?];
        while self.peek() == Some(b'|') {
            self.pos += 1;
            alts.push(self.term(depth)?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().unwrap_or_else(Hir::empty)
        } else {
            Hir::alternation(alts)
        })
    }

    /// factor* up to '|', ')' or the end.
    fn term(&mut self, depth: usize) -> Result<Hir, RegexError> {
        let mut cat = Vec::new();
        while let Some(c) = self.peek() {
            if c == b'|' || c == b')' {
                break;
            }
            cat.push(self.factor(depth)?);
        }
        Ok(Hir::concat(cat))
    }

    fn factor(&mut self, depth: usize) -> Result<Hir, RegexError> {
        let at = self.pos;
        let Some(c) = self.peek() else {
            return Ok(Hir::empty());
        };
        if is_closure(c) {
            return Err(self.err(at, format!("unexpected '{}'", c as char)));
        }
        self.pos += 1;
        let mut anchor = false;
        let mut re = match c {
            b'.' => class([(1, 255)]),
            b'[' => {
                let r = self.bracket()?;
                self.expect(b']')?;
                r
            }
            b'(' => {
                let mut capture = true;
                if self.peek() == Some(b'?') {
                    self.pos += 1;
                    if self.peek() != Some(b':') {
                        let c3 = self
                            .peek()
                            .map_or(String::new(), |c| (c as char).to_string());
                        return Err(self.err(self.pos, format!("unexpected '(?{c3}'")));
                    }
                    self.pos += 1;
                    capture = false;
                }
                if depth >= MAX_GROUP_DEPTH {
                    return Err(self.err(at, "groups nested too deeply"));
                }
                // Numbered at the opening parenthesis.
                let index = if capture {
                    self.groups += 1;
                    Some(self.groups)
                } else {
                    None
                };
                let r = self.expr(depth + 1)?;
                self.expect(b')')?;
                match index {
                    Some(index) => Hir::capture(Capture {
                        index,
                        name: None,
                        sub: Box::new(r),
                    }),
                    None => r,
                }
            }
            b'^' => {
                anchor = true;
                Hir::look(Look::Start)
            }
            b'$' => {
                anchor = true;
                Hir::look(Look::End)
            }
            b'\\' => Hir::literal([self.next()?]),
            c => Hir::literal([c]),
        };
        while let Some(op) = self.peek().filter(|&c| is_closure(c)) {
            let op_at = self.pos;
            self.pos += 1;
            if anchor {
                return Err(self.err(
                    op_at,
                    format!(
                        "postfix closure '{}' applied to anchoring operator",
                        op as char
                    ),
                ));
            }
            let (min, max) = match op {
                b'*' => (0, None),
                b'+' => (1, None),
                b'?' => (0, Some(1)),
                _ => self.counts()?,
            };
            re = Hir::repetition(Repetition {
                min,
                max,
                greedy: true,
                sub: Box::new(re),
            });
        }
        Ok(re)
    }

    /// After `{`: `m}`, `m,}` or `m,n}`.
    fn counts(&mut self) -> Result<(u32, Option<u32>), RegexError> {
        let min = self.number()?;
        let at = self.pos;
        match self.next() {
            Ok(b'}') => Ok((min, Some(min))),
            Ok(b',') => match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    Ok((min, None))
                }
                Some(c) if c.is_ascii_digit() => {
                    let max = self.number()?;
                    self.expect(b'}')?;
                    if max < min {
                        return Err(self.err(at, format!("invalid repetition {{{min},{max}}}")));
                    }
                    Ok((min, Some(max)))
                }
                _ => Err(self.err(self.pos, "expected '}' or number")),
            },
            _ => Err(self.err(at, "expected ',' or '}'")),
        }
    }

    fn number(&mut self) -> Result<u32, RegexError> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let digits = &self.s[start..self.pos];
        if digits.is_empty() {
            return Err(self.err(self.pos, "expected number"));
        }
        let text = String::from_utf8_lossy(digits);
        match text.parse::<u32>() {
            Ok(v) if v < MAX_REPETITIONS => Ok(v),
            _ => Err(self.err(self.pos, format!("{text} is too large"))),
        }
    }

    /// After `[`: the set up to (not including) the closing `]`.
    fn bracket(&mut self) -> Result<Hir, RegexError> {
        let invert = self.peek() == Some(b'^');
        if invert {
            self.pos += 1;
        }
        let mut ranges: Vec<(u8, u8)> = Vec::new();
        loop {
            if self.pos >= self.s.len() {
                return Err(self.err(self.pos, "unclosed character class"));
            }
            ranges.extend(self.range()?);
            if self.peek() == Some(b']') {
                break;
            }
        }
        let mut set = ClassBytes::new(ranges.iter().map(|&(a, b)| ClassBytesRange::new(a, b)));
        if invert {
            set.negate();
            // Never NUL, as stap's range_invert.
            set.difference(&ClassBytes::new([ClassBytesRange::new(0, 0)]));
        }
        Ok(Hir::class(Class::Bytes(set)))
    }

    /// One bracket item: a byte, an escaped byte, `a-z` or `[:name:]`.
    fn range(&mut self) -> Result<Vec<(u8, u8)>, RegexError> {
        let lb = match self.next()? {
            b'\\' => self.next()?,
            b'[' if self.peek() == Some(b':') => {
                self.pos += 1;
                let start = self.pos;
                loop {
                    if self.pos >= self.s.len() {
                        let name = String::from_utf8_lossy(&self.s[start..self.pos]);
                        return Err(
                            self.err(self.pos, format!("unclosed character class '[:{name}'"))
                        );
                    }
                    if self.s[self.pos..].starts_with(b":]") {
                        let name = &self.s[start..self.pos];
                        self.pos += 2;
                        return named_class(name).ok_or_else(|| {
                            self.err(
                                start,
                                format!(
                                    "unknown character class '{}'",
                                    String::from_utf8_lossy(name)
                                ),
                            )
                        });
                    }
                    self.pos += 1;
                }
            }
            c => c,
        };
        let is_range =
            self.peek() == Some(b'-') && self.s.get(self.pos + 1).is_some_and(|&c| c != b']');
        if !is_range {
            return Ok(vec![(lb, lb)]);
        }
        self.pos += 1;
        let ub = self.next()?;
        if ub < lb {
            return Err(self.err(
                self.pos,
                format!("Inverted character range {}-{}", lb as char, ub as char),
            ));
        }
        Ok(vec![(lb, ub)])
    }
}

/// Builds the dense DFA of `hir` and flattens it into the VM's table.
fn build(hir: &Hir) -> Result<RegexTable, RegexError> {
    let too_large = |e: &dyn std::fmt::Display| RegexError::TooLarge(format!("{e}"));
    let nfa = thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .utf8(false)
                .which_captures(WhichCaptures::None)
                .nfa_size_limit(Some(NFA_SIZE_LIMIT)),
        )
        .build_from_hir(hir)
        .map_err(|e| too_large(&e))?;
    // The transition table of a DFA within the state cap: the determinizer
    // stops past it (before minimising, so at most the cap's worth of work:
    // a pattern whose unminimised DFA is over the cap is refused even if
    // its minimal one would fit).
    let stride = nfa.byte_classes().alphabet_len().next_power_of_two();
    let table_limit = (abi::STP_MAX_REGEX_STATES as usize + 8) * stride * 4 + 4096;
    let dfa = dense::Builder::new()
        .configure(
            dense::Config::new()
                .match_kind(MatchKind::All)
                .start_kind(StartKind::Unanchored)
                .byte_classes(true)
                .accelerate(false)
                .minimize(true)
                .dfa_size_limit(Some(table_limit))
                .determinize_size_limit(Some(DFA_SIZE_LIMIT)),
        )
        .build_from_nfa(&nfa)
        .map_err(|e| too_large(&e))?;
    flatten(&dfa)
}

/// Renumbers the states of `dfa` reachable from its start (0 dead, 1
/// match, then breadth-first) into rows of byte-class transitions plus the
/// end-of-string column.
fn flatten(dfa: &dense::DFA<Vec<u32>>) -> Result<RegexTable, RegexError> {
    let bc = dfa.byte_classes();
    let mut classes = vec![0u8; 256];
    let mut reps: Vec<u8> = Vec::new();
    for b in 0..=255u8 {
        let k = bc.get(b);
        classes[b as usize] = k;
        if usize::from(k) >= reps.len() {
            reps.resize(usize::from(k) + 1, b);
        }
    }
    // Every class's representative: its first byte.
    for b in (0..=255u8).rev() {
        reps[usize::from(bc.get(b))] = b;
    }
    let nreal = reps.len();
    let ncls = nreal + 1;
    let start = dfa
        .start_state(&start::Config::new().anchored(Anchored::No))
        .map_err(|e| RegexError::TooLarge(format!("{e}")))?;
    let max_states = abi::STP_MAX_REGEX_STATES as usize;
    let mut ids: HashMap<StateID, u16> = HashMap::new();
    let mut order: Vec<StateID> = Vec::new();
    let number = |sid: StateID,
                  ids: &mut HashMap<StateID, u16>,
                  order: &mut Vec<StateID>|
     -> Result<u16, RegexError> {
        if dfa.is_dead_state(sid) || dfa.is_quit_state(sid) {
            return Ok(0);
        }
        if dfa.is_match_state(sid) {
            return Ok(1);
        }
        if let Some(&n) = ids.get(&sid) {
            return Ok(n);
        }
        let n = order.len() + 2;
        if n >= max_states {
            return Err(RegexError::TooLarge(format!(
                "more than {max_states} DFA states"
            )));
        }
        ids.insert(sid, n as u16);
        order.push(sid);
        Ok(n as u16)
    };
    let start_id = number(start, &mut ids, &mut order)?;
    let mut trans: Vec<u16> = Vec::new();
    trans.extend(std::iter::repeat_n(0u16, ncls));
    trans.extend(std::iter::repeat_n(1u16, ncls));
    let mut k = 0;
    while k < order.len() {
        let sid = order[k];
        for &b in &reps {
            let next = dfa.next_state(sid, b);
            let n = number(next, &mut ids, &mut order)?;
            trans.push(n);
        }
        let n = number(dfa.next_eoi_state(sid), &mut ids, &mut order)?;
        trans.push(n);
        k += 1;
    }
    Ok(RegexTable {
        pattern: Vec::new(),
        classes,
        nclasses: ncls as u32,
        start: u32::from(start_id),
        trans,
        groups: None,
    })
}

/// Lowers `hir` (with `ngroups` capturing groups) into its group
/// program: `SAVE 0`, the pattern, `SAVE 1`, `MATCH`.
fn group_program(pattern: &[u8], hir: &Hir, ngroups: u32) -> Result<RegexGroups, RegexError> {
    let nslots = 2 * (ngroups + 1);
    if nslots > abi::STP_MAX_REGEX_SLOTS {
        return Err(RegexError::Unsupported(format!(
            "regex subexpressions of {} ({ngroups} groups, the VM takes {})",
            String::from_utf8_lossy(pattern),
            abi::STP_MAX_REGEX_SLOTS / 2 - 1
        )));
    }
    let mut b = ProgBuilder {
        pattern,
        insns: Vec::new(),
        sets: Vec::new(),
        set_ids: HashMap::new(),
    };
    b.emit(abi::STP_RX_SAVE, 0)?;
    b.lower(hir, 0)?;
    b.emit(abi::STP_RX_SAVE, 1)?;
    b.emit(abi::STP_RX_MATCH, 0)?;
    Ok(RegexGroups {
        insns: b.insns,
        sets: b.sets,
        nslots,
    })
}

/// The group program being built.
struct ProgBuilder<'a> {
    pattern: &'a [u8],
    insns: Vec<u32>,
    sets: Vec<[u8; 32]>,
    set_ids: HashMap<[u8; 32], u32>,
}

impl ProgBuilder<'_> {
    /// Appends one instruction; refuses a program past the VM's cap.
    fn emit(&mut self, op: u32, arg: u32) -> Result<usize, RegexError> {
        if self.insns.len() >= abi::STP_MAX_REGEX_INSNS as usize {
            return Err(self.too_large());
        }
        self.insns.push(rx_insn(op, arg));
        Ok(self.insns.len() - 1)
    }

    fn too_large(&self) -> RegexError {
        RegexError::Unsupported(format!(
            "regex subexpressions of {} (more than {} program instructions, the VM takes {})",
            String::from_utf8_lossy(self.pattern),
            abi::STP_MAX_REGEX_INSNS,
            abi::STP_MAX_REGEX_INSNS
        ))
    }

    /// Points instruction `at` (a JMP or SPLIT) at `target`.
    fn patch(&mut self, at: usize, target: usize) {
        let op = self.insns[at] & abi::STP_RX_OP_MASK;
        self.insns[at] = rx_insn(op, target as u32);
    }

    /// SET of the bytes in `ranges` (NUL left out: no string holds one).
    fn set(&mut self, ranges: impl IntoIterator<Item = (u8, u8)>) -> Result<(), RegexError> {
        let mut bits = [0u8; 32];
        for (lo, hi) in ranges {
            for c in lo.max(1)..=hi {
                bits[usize::from(c >> 3)] |= 1 << (c & 7);
            }
        }
        let n = self.set_ids.len() as u32;
        let id = *self.set_ids.entry(bits).or_insert(n);
        if id == n {
            self.sets.push(bits);
        }
        self.emit(abi::STP_RX_SET, id).map(|_| ())
    }

    /// Lowers one node; `depth` bounds the recursion (the parser's group
    /// depth bounds the Hir's).
    fn lower(&mut self, hir: &Hir, depth: usize) -> Result<(), RegexError> {
        if depth > 4 * MAX_GROUP_DEPTH + 16 {
            return Err(self.too_large());
        }
        match hir.kind() {
            HirKind::Empty => Ok(()),
            HirKind::Literal(lit) => {
                for &c in lit.0.iter() {
                    self.set([(c, c)])?;
                }
                Ok(())
            }
            HirKind::Class(Class::Bytes(cls)) => {
                self.set(cls.ranges().iter().map(|r| (r.start(), r.end())))
            }
            HirKind::Class(Class::Unicode(cls)) => self.set(
                cls.ranges()
                    .iter()
                    .filter(|r| u32::from(r.start()) < 256)
                    .map(|r| {
                        let hi = u32::from(r.end()).min(255) as u8;
                        (u32::from(r.start()) as u8, hi)
                    }),
            ),
            HirKind::Look(Look::Start) => self.emit(abi::STP_RX_BOL, 0).map(|_| ()),
            HirKind::Look(Look::End) => self.emit(abi::STP_RX_EOL, 0).map(|_| ()),
            HirKind::Look(_) => Err(self.too_large()),
            HirKind::Capture(cap) => {
                self.emit(abi::STP_RX_SAVE, 2 * cap.index)?;
                self.lower(&cap.sub, depth + 1)?;
                self.emit(abi::STP_RX_SAVE, 2 * cap.index + 1).map(|_| ())
            }
            HirKind::Concat(parts) => {
                for p in parts {
                    self.lower(p, depth + 1)?;
                }
                Ok(())
            }
            HirKind::Alternation(alts) => {
                // SPLIT next; alt; JMP end; next: SPLIT ...; last alt.
                let mut jumps = Vec::new();
                for (k, alt) in alts.iter().enumerate() {
                    if k + 1 < alts.len() {
                        let split = self.emit(abi::STP_RX_SPLIT, 0)?;
                        self.lower(alt, depth + 1)?;
                        jumps.push(self.emit(abi::STP_RX_JMP, 0)?);
                        let next = self.insns.len();
                        self.patch(split, next);
                    } else {
                        self.lower(alt, depth + 1)?;
                    }
                }
                let end = self.insns.len();
                for j in jumps {
                    self.patch(j, end);
                }
                Ok(())
            }
            HirKind::Repetition(rep) => {
                for _ in 0..rep.min {
                    self.lower(&rep.sub, depth + 1)?;
                }
                match rep.max {
                    None => {
                        // L: SPLIT end; sub; JMP L; end:
                        let l = self.emit(abi::STP_RX_SPLIT, 0)?;
                        self.lower(&rep.sub, depth + 1)?;
                        self.emit(abi::STP_RX_JMP, l as u32)?;
                        let end = self.insns.len();
                        self.patch(l, end);
                    }
                    Some(max) => {
                        // (sub (sub ...)?)?: every SPLIT skips to the end.
                        let mut splits = Vec::new();
                        for _ in rep.min..max {
                            splits.push(self.emit(abi::STP_RX_SPLIT, 0)?);
                            self.lower(&rep.sub, depth + 1)?;
                        }
                        let end = self.insns.len();
                        for sp in splits {
                            self.patch(sp, end);
                        }
                    }
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(p: &str) -> String {
        compile(p.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn stap_syntax_errors() {
        assert_eq!(
            err("a[b-d}+"),
            "regex compilation error (at position 7): unclosed character class"
        );
        assert!(err("*a").contains("unexpected '*'"));
        assert!(err("a)").contains("unbalanced ')'"));
        assert!(err("(a").contains("expected ), found end of regex"));
        assert!(err("^*").contains("postfix closure '*' applied to anchoring operator"));
        assert!(err("a{12345}").contains("12345 is too large"));
        assert!(err("[[:foo:]]").contains("unknown character class 'foo'"));
        assert!(err("[z-a]").contains("Inverted character range z-a"));
        assert!(err("(?=a)").contains("unexpected '(?='"));
        assert!(err("a\\").contains("unexpected end of regex"));
    }

    #[test]
    fn tables_are_well_formed() {
        for p in [
            "",
            "a",
            "^a$",
            "(a|b)*c{2,3}",
            "[^a-c]+x",
            "x.y$",
            "a{0,40}b",
        ] {
            let t = compile(p.as_bytes()).unwrap();
            let n = t.nstates();
            assert!(n >= 2 && t.trans.len() == n * t.nclasses as usize, "{p}");
            assert!(t.trans.iter().all(|&s| usize::from(s) < n), "{p}");
            assert!((t.start as usize) < n);
            assert!(t.classes.iter().all(|&c| u32::from(c) < t.nclasses - 1));
        }
    }

    /// The group program of `p` in words: `SET0`, `JMP3`, `SPLIT5`,
    /// `SAVE2`, `BOL`, `EOL`, `MATCH`.
    fn prog(p: &str) -> (Vec<String>, u32, usize) {
        let t = compile_groups(p.as_bytes()).unwrap();
        let g = t.groups.unwrap();
        let words = g
            .insns
            .iter()
            .map(|&w| {
                let (op, arg) = vm_spec::program::rx_decode(w);
                match op {
                    abi::STP_RX_SET => format!("SET{arg}"),
                    abi::STP_RX_JMP => format!("JMP{arg}"),
                    abi::STP_RX_SPLIT => format!("SPLIT{arg}"),
                    abi::STP_RX_SAVE => format!("SAVE{arg}"),
                    abi::STP_RX_BOL => "BOL".into(),
                    abi::STP_RX_EOL => "EOL".into(),
                    _ => "MATCH".into(),
                }
            })
            .collect();
        (words, g.nslots, g.sets.len())
    }

    #[test]
    fn group_program_shapes() {
        // Group 0 wraps the pattern; a capture saves 2n and 2n + 1.
        let (w, slots, sets) = prog("a(b)");
        assert_eq!(
            w,
            ["SAVE0", "SET0", "SAVE2", "SET1", "SAVE3", "SAVE1", "MATCH"]
        );
        assert_eq!((slots, sets), (4, 2));
        // Greedy star: the body first, then the way out.
        let (w, ..) = prog("(a)*");
        assert_eq!(
            w,
            ["SAVE0", "SPLIT6", "SAVE2", "SET0", "SAVE3", "JMP1", "SAVE1", "MATCH"]
        );
        // Alternatives in order, the first one preferred; anchors.
        // (`x|y` would be the class [xy]: regex-syntax merges it.)
        let (w, ..) = prog("^(ab|cd)$");
        assert_eq!(
            w,
            [
                "SAVE0", "BOL", "SAVE2", "SPLIT7", "SET0", "SET1", "JMP9", "SET2", "SET3", "SAVE3",
                "EOL", "SAVE1", "MATCH"
            ]
        );
        // `?` and a bounded count: every SPLIT skips to the end.
        let (w, ..) = prog("a{1,3}");
        assert_eq!(
            w,
            ["SAVE0", "SET0", "SPLIT6", "SET0", "SPLIT6", "SET0", "SAVE1", "MATCH"]
        );
        // One set per distinct byte set.
        let (_, _, sets) = prog("[ab][ba]a.");
        assert_eq!(sets, 3);
    }

    #[test]
    fn groups_are_numbered_by_opening_paren_and_non_capturing_ones_skipped() {
        let (w, slots, _) = prog("((a)(?:b)(c))");
        assert_eq!(slots, 8);
        assert_eq!(
            w,
            [
                "SAVE0", "SAVE2", "SAVE4", "SET0", "SAVE5", "SET1", "SAVE6", "SET2", "SAVE7",
                "SAVE3", "SAVE1", "MATCH"
            ]
        );
        // A group under {0} still counts (ngroups() is 1 + the groups).
        let (_, slots, _) = prog("(a){0}b");
        assert_eq!(slots, 4);
        // The DFA is the same with or without the program.
        let plain = compile(b"(a|b)*c").unwrap();
        let with = compile_groups(b"(a|b)*c").unwrap();
        assert_eq!(plain.trans, with.trans);
        assert!(plain.groups.is_none());
    }

    #[test]
    fn group_caps_are_enforced() {
        let e = compile_groups("(a)".repeat(16).as_bytes())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("not supported yet: regex subexpressions of (a)(a)")
                && e.ends_with("(16 groups, the VM takes 15)"),
            "{e}"
        );
        assert!(compile_groups("(a)".repeat(15).as_bytes()).is_ok());
        let e = compile_groups(b"a{300}").unwrap_err().to_string();
        assert_eq!(
            e,
            "not supported yet: regex subexpressions of a{300} (more than 256 program \
             instructions, the VM takes 256)"
        );
        // A huge count fails fast, not after expanding it.
        assert!(compile_groups(b"(ab){12000}").is_err());
    }

    #[test]
    fn state_cap_is_enforced() {
        // (a|b)*a(a|b){k}: 2^k states in any DFA.
        let e = err("(a|b)*a(a|b){14}");
        assert!(e.contains("DFA") || e.contains("exceeded"), "{e}");
    }
}
