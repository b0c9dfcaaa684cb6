//! The program's tables, shared by all handlers of one lowering: constants,
//! strings (cut as stap cuts them), formats, regular expressions (their
//! DFAs), target variables, and the relocated constant and special formats
//! of `target()`, `switch_file()` and `warn()`.
use super::*;

/// The program's tables, shared by all handlers.
pub(super) struct Tables {
    pub(super) konsts: Vec<i64>,
    pub(super) kidx: FxHashMap<i64, i32>,
    pub(super) strings: Vec<Vec<u8>>,
    pub(super) sidx: FxHashMap<Vec<u8>, i32>,
    pub(super) formats: Vec<Format>,
    /// The index of each format `format` made (the first of equal ones;
    /// never the special formats of `own_format`).
    pub(super) fidx: FxHashMap<Format, i32>,
    /// The argument kinds of each printf format text met so far.
    pub(super) printf_kinds: FxHashMap<String, Vec<ArgKind>>,
    pub(super) maxstr: usize,
    /// Target variables, their `handler` set once the handler is placed.
    pub(super) target_vars: Vec<TargetVar>,
    /// Regular expressions (REMATCH's RX operand), one per pattern.
    pub(super) regexes: Vec<RegexTable>,
    /// The script calls `matched()`, `matched_str()` or `ngroups()`: every
    /// regex gets its group program and `=~` is REMATCHS (stap's
    /// `need_tagged_dfa`).
    pub(super) regex_groups: bool,
    /// `Program::target_konst`, made by the first `target()`.
    pub(super) target_konst: Option<i32>,
    /// `Program::tz_konsts`, made by the first `__tz_gmtoff()` or
    /// `__tz_name_bytes()`.
    pub(super) tz_konsts: Option<[i32; 2]>,
    /// `Program::loader_konsts`, made by the first `stp_pid()` or
    /// `__stp_loader_uid()`.
    pub(super) loader_konsts: Option<[i32; 2]>,
    /// `Program::switch_file_format`, made by the first `switch_file()`
    /// (never shared with a printf of the same text).
    pub(super) switch_fmt: Option<i32>,
    /// `Program::warn_format`, made by the first `warn(msg)` (never shared
    /// either).
    pub(super) warn_fmt: Option<i32>,
}

impl Tables {
    pub(super) fn konst(&mut self, v: i64) -> i32 {
        if let Some(&i) = self.kidx.get(&v) {
            return i;
        }
        let i = self.konsts.len() as i32;
        self.konsts.push(v);
        self.kidx.insert(v, i);
        i
    }

    /// A fresh constant the loader patches (never shared).
    pub(super) fn reloc_konst(&mut self) -> i32 {
        self.konsts.push(0);
        (self.konsts.len() - 1) as i32
    }

    /// A constant string, cut at a NUL (C semantics) and at MAXSTRINGLEN - 1
    /// bytes (the NUL counts, as in stap).
    pub(super) fn string(&mut self, s: &[u8]) -> i32 {
        let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
        let b = &s[..end.min(self.maxstr)];
        if let Some(&i) = self.sidx.get(b) {
            return i;
        }
        let i = self.strings.len() as i32;
        self.strings.push(b.to_vec());
        self.sidx.insert(b.to_vec(), i);
        i
    }

    /// The DFA of a regex literal (`resolve` already refused a pattern
    /// that does not compile).
    pub(super) fn regex(&mut self, pattern: &[u8]) -> Result<i32, String> {
        if let Some(i) = self.regexes.iter().position(|r| r.pattern == pattern) {
            return Ok(i as i32);
        }
        let t = if self.regex_groups {
            crate::regex::compile_groups(pattern)
        } else {
            crate::regex::compile(pattern)
        }
        .map_err(|e| e.to_string())?;
        self.regexes.push(t);
        Ok((self.regexes.len() - 1) as i32)
    }

    pub(super) fn format(&mut self, text: &str, args: Vec<ArgKind>) -> i32 {
        let f = Format {
            text: text.to_string(),
            args,
        };
        if let Some(&i) = self.fidx.get(&f) {
            return i;
        }
        let i = self.formats.len() as i32;
        self.fidx.insert(f.clone(), i);
        self.formats.push(f);
        i
    }

    /// The constant `target()` reads (the loader patches it).
    pub(super) fn target_konst(&mut self) -> i32 {
        match self.target_konst {
            Some(k) => k,
            None => {
                let k = self.reloc_konst();
                self.target_konst = Some(k);
                k
            }
        }
    }

    /// The constant `__tz_gmtoff()` (`name` false) or `__tz_name_bytes()`
    /// reads (the loader patches both).
    pub(super) fn tz_konst(&mut self, name: bool) -> i32 {
        let ks = match self.tz_konsts {
            Some(ks) => ks,
            None => {
                let ks = [self.reloc_konst(), self.reloc_konst()];
                self.tz_konsts = Some(ks);
                ks
            }
        };
        ks[usize::from(name)]
    }

    /// The constant `stp_pid()` (`uid` false) or `__stp_loader_uid()`
    /// reads (the loader patches both).
    pub(super) fn loader_konst(&mut self, uid: bool) -> i32 {
        let ks = match self.loader_konsts {
            Some(ks) => ks,
            None => {
                let ks = [self.reloc_konst(), self.reloc_konst()];
                self.loader_konsts = Some(ks);
                ks
            }
        };
        ks[usize::from(uid)]
    }

    /// The format of `switch_file()`'s PRINTF record.
    pub(super) fn switch_format(&mut self) -> i32 {
        own_format(&mut self.formats, &mut self.switch_fmt, "", Vec::new())
    }

    /// The format of `warn(msg)`'s PRINTF record (`Program::warn_format`).
    pub(super) fn warn_format(&mut self) -> i32 {
        own_format(
            &mut self.formats,
            &mut self.warn_fmt,
            "WARNING: %s\n",
            vec![ArgKind::Str],
        )
    }
}

/// A format of its own (never shared with a printf of the same text, see
/// `Tables::format`), made at its first use: `slot` keeps its index.
fn own_format(
    formats: &mut Vec<Format>,
    slot: &mut Option<i32>,
    text: &str,
    args: Vec<ArgKind>,
) -> i32 {
    *slot.get_or_insert_with(|| {
        formats.push(Format {
            text: text.to_string(),
            args,
        });
        (formats.len() - 1) as i32
    })
}
