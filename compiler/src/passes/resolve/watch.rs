//! `kernel.data(…)` probe points: hardware watchpoints.
//! `kernel.data(ADDR)` or `kernel.data("SYMBOL")`, then optionally
//! `.length(N)` (bytes: 1, 2, 4 or 8; stap's default 1), then `.write`
//! (writes fire) or `.rw` (reads and writes). They become
//! `STP_PROBE_WATCH` points (abi.h), verified as timers' handlers; a
//! symbol's address is the loader's to find on the target.
use super::probes::lit_num;
use super::*;
use vm_spec::program::Watch;

impl Resolver<'_> {
    /// Resolves `kernel.data(…)…` (`c[0]` is `kernel`, `c[1]` `data`);
    /// `None` after reporting an error (none for a mismatch of an
    /// optional point).
    pub(super) fn watch_point(
        &mut self,
        mut p: Point,
        c: &[Component],
        optional: bool,
    ) -> Option<Point> {
        let mismatch = |r: &mut Self, at: &Component| r.mismatch_unless_optional(c, at, optional);
        let at = &c[1];
        let (address, symbol) = match &at.arg {
            Some(Literal::Num(n, _)) => (*n as u64, None),
            Some(Literal::Str(s, _)) => match std::str::from_utf8(s) {
                Ok(name) if !name.is_empty() => (0, Some(name.to_string())),
                _ => return mismatch(self, at),
            },
            None => return mismatch(self, at),
        };
        let mut len = 1u32;
        let mut i = 2;
        if let Some(x) = c.get(i).filter(|x| x.name == "length") {
            match lit_num(x) {
                Some(n @ (1 | 2 | 4 | 8)) => len = n as u32,
                Some(_) => {
                    self.err(
                        Diagnostic::semantic("while resolving probe point", x.span).with_note(
                            "a hardware watchpoint watches 1, 2, 4 or 8 bytes".to_string(),
                            None,
                        ),
                    );
                    return None;
                }
                None => return mismatch(self, x),
            }
            i += 1;
        }
        let rw = match c.get(i) {
            Some(x) if x.arg.is_none() && x.name == "write" => false,
            Some(x) if x.arg.is_none() && x.name == "rw" => true,
            Some(x) => return mismatch(self, x),
            None => return mismatch(self, c.last().unwrap_or(at)),
        };
        if let Some(x) = c.get(i + 1) {
            return mismatch(self, x);
        }
        if symbol.is_none() && (address == 0 || address & u64::from(len - 1) != 0) {
            self.err(
                Diagnostic::semantic("while resolving probe point", at.span).with_note(
                    format!(
                        "watchpoint address {address:#x} is 0 or not aligned to its length {len}"
                    ),
                    None,
                ),
            );
            return None;
        }
        p.set_kind(abi::STP_PROBE_WATCH);
        if let Some(name) = symbol {
            p.target = ProbeTarget::Symbol { name, offset: 0 };
        }
        p.watch = Some(Watch { address, len, rw });
        Some(p)
    }
}
