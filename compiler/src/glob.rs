//! Shell-style pattern matching, fnmatch(3) with FNM_NOESCAPE: `*`, `?` and
//! `[...]` classes. One implementation for every place stap matches names:
//! `%( arch == "x86_*" %)` conditions, probe alias wildcards, and (in the
//! loader) kernel function patterns such as `kernel.function("vfs_*")`.

/// `fnmatch(pattern, s, FNM_NOESCAPE)`: `*`, `?`, `[...]` (`!`/`^` negates).
pub fn fnmatch(p: &[u8], s: &[u8]) -> bool {
    // Iterative with one backtrack point for the last `*`: every step
    // advances in s or restarts from that star one byte further, so the
    // loop runs at most len(p) * len(s) times.
    let (mut pi, mut si) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        let step = match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, si));
                pi += 1;
                continue;
            }
            Some(b'?') => Some(pi + 1),
            Some(b'[') => class(p, pi, s[si]),
            Some(&c) if c == s[si] => Some(pi + 1),
            _ => None,
        };
        match step {
            Some(np) => {
                pi = np;
                si += 1;
            }
            None => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p[pi.min(p.len())..].iter().all(|&c| c == b'*')
}

/// Matches `c` against the bracket expression at `p[at]`; the index after
/// it when it matches (a `[` without `]` is literal).
fn class(p: &[u8], at: usize, c: u8) -> Option<usize> {
    let mut i = at + 1;
    let neg = matches!(p.get(i), Some(b'!' | b'^'));
    if neg {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    loop {
        let &x = p.get(i)?;
        if x == b']' && !first {
            break;
        }
        first = false;
        if p.get(i + 1) == Some(&b'-') && p.get(i + 2).is_some_and(|&y| y != b']') {
            let y = p[i + 2];
            hit |= x <= c && c <= y;
            i += 3;
        } else {
            hit |= x == c;
            i += 1;
        }
    }
    if hit != neg {
        Some(i + 1)
    } else {
        None
    }
}
