//! Histograms of statistics: the buckets an `STP_REC_HIST` record carries
//! and their drawing, character for character as stap's runtime draws
//! `print(@hist_log(s))` and `print(@hist_linear(s, start, stop, interval))`
//! (`_stp_stat_print_histogram`): a header `value |-----...----- count`,
//! one row per bucket from two empty buckets before the first non-empty
//! one to two after the last, a bar of `@` scaled to 50 columns, and runs
//! of empty rows elided to one `~` line. Used by the CLI and by the
//! user-space runner of the tests alike; kmod/core/format.c
//! (`stp_format_hist`, for `sprint(@hist_*)`) draws the same.
//!
//! The elision rule is stap's (runtime/stat-common.c,
//! `_stp_stat_print_histogram_buf`, with `HIST_ELISION` defined there as 2,
//! "zeroes before and after"), the same for log and linear histograms:
//! the drawn range runs from two buckets before the first non-empty one to
//! two after the last (a fixed margin of 2, not `HIST_ELISION`; a log
//! histogram stops at the 0 row unless a value is negative; a linear one
//! leaves out an empty underflow or overflow row); row `i` of that range
//! is left out when every bucket of `[i - HIST_ELISION, i + HIST_ELISION]`
//! inside the range is 0 (`HIST_ELISION` at most the number of buckets),
//! and one `~` line stands for each run of rows left out. An empty run
//! between two non-empty buckets therefore shows whole when it is at most
//! `2 * HIST_ELISION` = 4 rows long; from 5 rows on, its first two and last
//! two rows show around a `~` (stap's testsuite/systemtap.maps/elision.exp:
//! the ten empty rows between 400 and 950 of a `0, 1500, 50` histogram).
//! stap's `-DHIST_ELISION=N` (negative: no elision) is not supported: the
//! value is always 2.
use crate::abi;
use crate::program::Hist;

/// Columns of the widest bar (stap's `HIST_WIDTH`).
pub const HIST_WIDTH: i64 = 50;
/// Empty rows kept on each side of a non-empty one (stap's
/// `HIST_ELISION`).
pub const HIST_ELISION: i64 = 2;

/// A histogram: its kind and parameters, and its buckets (for `Linear`,
/// bucket 0 is the underflow and the last one the overflow; for `Log`,
/// bucket 64 holds 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Histogram {
    /// Kind and parameters.
    pub kind: Hist,
    /// Counts, `kind.nbuckets()` of them.
    pub buckets: Vec<i64>,
}

/// Characters `v` takes in decimal, its sign included.
fn needed_space(v: i64) -> i64 {
    if v == 0 {
        return 1;
    }
    let sign = i64::from(v < 0);
    let mut t = v.unsigned_abs();
    let mut n = 0;
    while t > 0 {
        t /= 10;
        n += 1;
    }
    n + sign
}

/// The value a log bucket is labelled with: `-(2^(63-b))` below bucket 64,
/// 0 for 64, `2^(b-65)` above.
pub fn log_bucket_value(b: usize) -> i64 {
    let zero = abi::STP_HIST_LOG_BUCKETS as usize / 2;
    if b == zero {
        0
    } else if b < zero {
        i64::MIN >> b
    } else {
        1i64 << ((b - zero - 1) & 63)
    }
}

/// The bucket a value falls in (what the VM's `STADD` does), for tests and
/// for the reference interpreter.
pub fn bucket_of(kind: &Hist, v: i64) -> usize {
    match *kind {
        Hist::None => 0,
        Hist::Log => {
            let zero = abi::STP_HIST_LOG_BUCKETS as usize / 2;
            let bits = |m: u64| 64 - m.leading_zeros() as usize;
            match v.cmp(&0) {
                std::cmp::Ordering::Equal => zero,
                std::cmp::Ordering::Greater => zero + bits(v as u64),
                std::cmp::Ordering::Less => zero - bits(v.unsigned_abs()),
            }
        }
        Hist::Linear {
            start, interval, ..
        } => {
            let nb = kind.nbuckets() as u64;
            let d = v.wrapping_sub(i64::from(start));
            if d < 0 || nb < 3 || interval <= 0 {
                return 0;
            }
            let q = d as u64 / interval as u64;
            if q >= nb - 2 {
                (nb - 1) as usize
            } else {
                q as usize + 1
            }
        }
    }
}

impl Histogram {
    /// Draws the histogram as stap prints it, the final empty line
    /// included. Buckets beyond `kind.nbuckets()` are ignored.
    pub fn draw(&self) -> String {
        let nb = (self.kind.nbuckets() as usize).min(self.buckets.len());
        let h = &self.buckets[..nb];
        let mut out = String::new();
        let (mut start, mut interval, linear) = (0i64, 0i64, false);
        let linear = match self.kind {
            Hist::Linear {
                start: s,
                interval: i,
                ..
            } => {
                start = i64::from(s);
                interval = i64::from(i);
                true
            }
            _ => linear,
        };
        if nb == 0 {
            return out;
        }
        let last = nb as i64 - 1;
        let mut low: i64 = -1;
        let mut high: i64 = 0;
        let mut valmax: i64 = 0;
        for (i, &c) in h.iter().enumerate() {
            if c > 0 && low == -1 {
                low = i as i64;
            }
            if c > 0 {
                high = i as i64;
            }
            valmax = valmax.max(c);
        }
        let zero = i64::from(abi::STP_HIST_LOG_BUCKETS / 2);
        for _ in 0..2 {
            if linear {
                if low > 0 {
                    low -= 1;
                }
            } else if low != zero && low > 0 {
                low -= 1;
            }
            if high < last {
                high += 1;
            }
        }
        let (mut under, mut over) = (0, 0);
        if linear {
            if low == 0 && h[0] == 0 {
                low += 1;
            }
            if high == last && h[last as usize] == 0 {
                high -= 1;
            }
            if low == 0 {
                under = 1;
            }
            if high == last {
                over = 1;
            }
        }
        let scale = if valmax <= HIST_WIDTH {
            1
        } else {
            (valmax + HIST_WIDTH - 1) / HIST_WIDTH
        };
        let cnt_space = needed_space(valmax);
        let label = |i: i64| -> i64 {
            if linear {
                if i == 0 {
                    start
                } else if i == last {
                    start.wrapping_add((i - 2).wrapping_mul(interval))
                } else {
                    start.wrapping_add((i - 1).wrapping_mul(interval))
                }
            } else {
                log_bucket_value(i.clamp(0, last) as usize)
            }
        };
        let mut val_space = if linear {
            (needed_space(start) + under)
                .max(needed_space(start.wrapping_add(interval.wrapping_mul(high))) + over)
        } else {
            needed_space(label(high)).max(needed_space(label(low)))
        };
        val_space = val_space.max(5);
        let pad = |n: i64| " ".repeat(usize::try_from(n).unwrap_or(0));

        out.push_str(&format!("{}value |", pad(val_space - 5)));
        out.push_str(&"-".repeat(HIST_WIDTH as usize));
        out.push_str(" count\n");
        let mut eliding = false;
        let mut i = low.max(0);
        while i <= high {
            let max_elide = HIST_ELISION.min(nb as i64);
            let lo = low.max(i - max_elide).max(0);
            let hi = high.min(i + max_elide);
            if (lo..=hi).all(|k| h[k as usize] == 0) {
                eliding = true;
                i += 1;
                continue;
            }
            if eliding {
                out.push_str(&format!("{} ~\n", pad(val_space)));
                eliding = false;
            }
            let (val, prefix) = if linear && i == 0 {
                (label(i), "<")
            } else if linear && i == last {
                (label(i), ">")
            } else {
                (label(i), "")
            };
            let c = h[i as usize];
            let w = val_space - needed_space(val);
            out.push_str(&format!("{}{prefix}{val} |", pad(w - prefix.len() as i64)));
            let bar = if c > 0 { c / scale } else { 0 };
            out.push_str(&"@".repeat(usize::try_from(bar).unwrap_or(0)));
            let cw = HIST_WIDTH - bar + 1 + cnt_space;
            let cs = c.to_string();
            out.push_str(&pad(cw - cs.len() as i64));
            out.push_str(&cs);
            out.push('\n');
            i += 1;
        }
        out.push('\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_of(values: &[i64]) -> Histogram {
        let mut b = vec![0i64; abi::STP_HIST_LOG_BUCKETS as usize];
        for &v in values {
            b[bucket_of(&Hist::Log, v)] += 1;
        }
        Histogram {
            kind: Hist::Log,
            buckets: b,
        }
    }

    fn linear_of(start: i32, stop: i32, interval: i32, values: &[i64]) -> Histogram {
        let kind = Hist::Linear {
            start,
            stop,
            interval,
        };
        let mut b = vec![0i64; kind.nbuckets() as usize];
        for &v in values {
            b[bucket_of(&kind, v)] += 1;
        }
        Histogram { kind, buckets: b }
    }

    #[test]
    fn log_buckets_are_stap_buckets() {
        assert_eq!(bucket_of(&Hist::Log, 0), 64);
        assert_eq!(bucket_of(&Hist::Log, 1), 65);
        assert_eq!(bucket_of(&Hist::Log, 3), 66);
        assert_eq!(bucket_of(&Hist::Log, -1), 63);
        assert_eq!(bucket_of(&Hist::Log, i64::MAX), 127);
        assert_eq!(bucket_of(&Hist::Log, i64::MIN), 0);
        assert_eq!(log_bucket_value(0), i64::MIN);
        assert_eq!(log_bucket_value(63), -1);
        assert_eq!(log_bucket_value(127), 1 << 62);
    }

    /// runok-output/maps/linear_under.exp
    #[test]
    fn linear_under_golden() {
        let vals: Vec<i64> = (0..100).collect();
        let h = linear_of(1800, 2500, 100, &vals);
        assert_eq!(
            h.draw(),
            "value |-------------------------------------------------- count\n\
             <1800 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 100\n \
             1800 |                                                     0\n \
             1900 |                                                     0\n\n"
        );
    }

    /// runok-output/maps/linear.exp (first and last rows).
    #[test]
    fn linear_golden() {
        let mut vals = Vec::new();
        for key in 0..100i64 {
            for m in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 12, 13, 14, 15] {
                vals.push(key * m);
            }
        }
        let d = linear_of(0, 1500, 50, &vals).draw();
        let lines: Vec<&str> = d.lines().collect();
        assert_eq!(
            lines[0],
            "value |-------------------------------------------------- count"
        );
        assert_eq!(
            lines[1],
            "    0 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@       177"
        );
        assert_eq!(
            lines[21],
            " 1000 |@@@@@                                               23"
        );
        assert_eq!(
            lines[31],
            " 1500 |                                                     0"
        );
        assert_eq!(lines.len(), 33);
        assert_eq!(lines[32], "");
        assert!(d.ends_with("0\n\n"));
    }

    /// runok-output/maps/log.exp (edges).
    #[test]
    fn log_golden() {
        let mut vals = Vec::new();
        let mut v: i64 = 1;
        for _ in 0..63 {
            vals.push(v);
            v = v.wrapping_shl(1);
        }
        let mut v: i64 = 1;
        for _ in 0..64 {
            vals.push(v.wrapping_neg());
            v = v.wrapping_shl(1);
        }
        vals.extend(std::iter::repeat_n(0, 20));
        let d = log_of(&vals).draw();
        let lines: Vec<&str> = d.lines().collect();
        assert_eq!(
            lines[0],
            "               value |-------------------------------------------------- count"
        );
        assert_eq!(
            lines[1],
            "-9223372036854775808 |@                                                   1"
        );
        assert_eq!(
            lines[65],
            "                   0 |@@@@@@@@@@@@@@@@@@@@                               20"
        );
        assert_eq!(
            lines[128],
            " 4611686018427387904 |@                                                   1"
        );
        assert_eq!(lines.len(), 130);
        assert_eq!(lines[129], "");
    }

    #[test]
    fn log_elides_empty_runs() {
        let d = log_of(&[1, 1, 1, 1 << 20]).draw();
        let row = |v: &str, bar: usize, c: i64| {
            format!("{v:>7} |{}{:>w$}\n", "@".repeat(bar), c, w = 50 - bar + 2)
        };
        let want = [
            "  value |-------------------------------------------------- count\n".to_string(),
            row("0", 0, 0),
            row("1", 3, 3),
            row("2", 0, 0),
            row("4", 0, 0),
            "        ~\n".to_string(),
            row("262144", 0, 0),
            row("524288", 0, 0),
            row("1048576", 1, 1),
            row("2097152", 0, 0),
            row("4194304", 0, 0),
            "\n".to_string(),
        ]
        .concat();
        assert_eq!(d, want);
    }

    /// Rows of a histogram whose counts are all at most 1 (a bar of 0 or 1
    /// `@`), `w` columns of value.
    fn rows(w: usize, rows: &[(&str, i64)]) -> String {
        let mut out = format!("{:>w$} |{} count\n", "value", "-".repeat(50));
        for &(v, c) in rows {
            if v == "~" {
                out.push_str(&format!("{:w$} ~\n", ""));
                continue;
            }
            let bar = "@".repeat(c as usize);
            out.push_str(&format!("{v:>w$} |{bar}{c:>n$}\n", n = 50 - c as usize + 2));
        }
        out.push('\n');
        out
    }

    /// stap's testsuite/systemtap.maps/elision.exp at the default
    /// HIST_ELISION (2): ten empty rows between 400 and 950 show as their
    /// first two, `~`, their last two.
    #[test]
    fn linear_long_empty_run_is_elided() {
        let d = linear_of(0, 1500, 50, &[444, 999]).draw();
        let want = rows(
            5,
            &[
                ("300", 0),
                ("350", 0),
                ("400", 1),
                ("450", 0),
                ("500", 0),
                ("~", 0),
                ("850", 0),
                ("900", 0),
                ("950", 1),
                ("1000", 0),
                ("1050", 0),
            ],
        );
        assert_eq!(d, want);
    }

    /// The threshold: a run of 2 * HIST_ELISION = 4 empty rows between two
    /// non-empty ones shows whole, a run of 5 is elided (its middle row
    /// alone, and only it, has 2 empty rows on each side).
    #[test]
    fn linear_empty_runs_at_the_threshold() {
        let four = linear_of(0, 1500, 50, &[400, 650]).draw();
        let mut r: Vec<(String, i64)> = (6..=15).map(|k| ((k * 50).to_string(), 0)).collect();
        r[2].1 = 1;
        r[7].1 = 1;
        let rr: Vec<(&str, i64)> = r.iter().map(|(v, c)| (v.as_str(), *c)).collect();
        assert_eq!(four, rows(5, &rr));
        let five = linear_of(0, 1500, 50, &[400, 700]).draw();
        let want = rows(
            5,
            &[
                ("300", 0),
                ("350", 0),
                ("400", 1),
                ("450", 0),
                ("500", 0),
                ("~", 0),
                ("600", 0),
                ("650", 0),
                ("700", 1),
                ("750", 0),
                ("800", 0),
            ],
        );
        assert_eq!(five, want);
        // Two non-empty buckets side by side or one empty row apart: no `~`.
        let near = linear_of(0, 1500, 50, &[444, 500]).draw();
        let want = rows(
            5,
            &[
                ("300", 0),
                ("350", 0),
                ("400", 1),
                ("450", 0),
                ("500", 1),
                ("550", 0),
                ("600", 0),
            ],
        );
        assert_eq!(near, want);
    }

    /// elision.exp's log histograms: a single value, 0 alone (no negative
    /// rows), and -2 with -4096 (ten empty rows between, and the rows down
    /// to 0: the margin stops at the last bucket drawn, not at 0).
    #[test]
    fn log_elision_goldens() {
        let one = log_of(&[128]).draw();
        let want = rows(
            5,
            &[("32", 0), ("64", 0), ("128", 1), ("256", 0), ("512", 0)],
        );
        assert_eq!(one, want);
        let zero = log_of(&[0]).draw();
        assert_eq!(zero, rows(5, &[("0", 1), ("1", 0), ("2", 0)]));
        let neg = log_of(&[-2, -4096]).draw();
        let want = rows(
            6,
            &[
                ("-16384", 0),
                ("-8192", 0),
                ("-4096", 1),
                ("-2048", 0),
                ("-1024", 0),
                ("~", 0),
                ("-8", 0),
                ("-4", 0),
                ("-2", 1),
                ("-1", 0),
                ("0", 0),
            ],
        );
        assert_eq!(neg, want);
    }
}
