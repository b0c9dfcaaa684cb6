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
//! string), and only match / no match is computed (`matched()` and
//! `matched_str()` are refused by resolve). The literal reaches us decoded
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
use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use regex_syntax::hir::{Class, ClassBytes, ClassBytesRange, Hir, Look, Repetition};
use std::collections::HashMap;
use vm_spec::abi;
use vm_spec::program::RegexTable;

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

/// Parses `pattern` in stap's dialect (checks the syntax only).
pub fn parse(pattern: &[u8]) -> Result<Hir, RegexError> {
    let mut p = Parser { s: pattern, pos: 0 };
    let hir = p.expr(0)?;
    if p.pos < p.s.len() {
        // parse_expr stops only at ')' or the end.
        return Err(p.err(p.pos, "unbalanced ')'"));
    }
    Ok(hir)
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
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
                if self.peek() == Some(b'?') {
                    self.pos += 1;
                    if self.peek() != Some(b':') {
                        let c3 = self
                            .peek()
                            .map_or(String::new(), |c| (c as char).to_string());
                        return Err(self.err(self.pos, format!("unexpected '(?{c3}'")));
                    }
                    self.pos += 1;
                }
                if depth >= MAX_GROUP_DEPTH {
                    return Err(self.err(at, "groups nested too deeply"));
                }
                let r = self.expr(depth + 1)?;
                self.expect(b')')?;
                r
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
    })
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

    #[test]
    fn state_cap_is_enforced() {
        // (a|b)*a(a|b){k}: 2^k states in any DFA.
        let e = err("(a|b)*a(a|b){14}");
        assert!(e.contains("DFA") || e.contains("exceeded"), "{e}");
    }
}
